"""What each mode refuses today, by program name: ``"ErrorClass: the first line of its
message"`` (``WRONG: ...`` where a mode gave a wrong number). The tests mark these
``xfail(strict=True)``, so a fix shows up as a failure until its line goes.
Regenerate with ``python -m corpus_objects.measure --write-today`` (from ``tests/``)."""

COMPILER: dict[str, str] = {
    "sequential_of_layer_objects": "UnsupportedSyntaxError: a structure (a dict or a nested list) is used whole here [layers.py:170]",
    "network_total_cost": "NoDerivativeRuleError: no derivative rule for self_cost.fn, which is called on 'feedforward_out' that carries gradient [networks.py:42]",
    "network_cost_wrt_weights": "NoDerivativeRuleError: no derivative rule for self_cost.fn, which is called on 'feedforward_out' that carries gradient [networks.py:42]",
    "free_function_calls_net_feedforward": "NoDerivativeRuleError: no derivative rule for net.feedforward, which is called on 'x' that carries gradient [networks.py:58]",
    "function_calls_model_loss": "NoDerivativeRuleError: no derivative rule for p_2.loss, which is called on 'w' that carries gradient [networks.py:105]",
    "weights_parser_get": "GradientEscapeError: parser.get turns 'weights' into a plain value, so its gradient would be lost and the result would be silently wrong [networks.py:139]",
    "objects_built_inside_loss": "UnsupportedSyntaxError: calling the local variable 'layer1' is not supported [networks.py:168]",
    "layer_objects_called_as_layer_h": "UnsupportedSyntaxError: calling the local variable 'layer' is not supported [networks.py:184]",
    "factory_called_immediately": "UnsupportedSyntaxError: this kind of call is not supported [functions.py:113]",
    "composed_functions": "UnsupportedSyntaxError: calling the local variable 'h' is not supported [functions.py:161]",
    "activation_looked_up_by_name": "UnsupportedSyntaxError: calling the local variable 'act' is not supported [functions.py:174]",
    "xp_stored_on_object": "UnsupportedSyntaxError: 'axis' of xp.sum(...), read as an array method, must not depend on a differentiated value [names.py:71]",
    "rnn_training_with_step_method": "UnsupportedSyntaxError: a structure (a dict or a nested list) is made inside a loop or a branch [training.py:97]",
    "batch_attribute_changes_shape": "UnsupportedSyntaxError: this index into a structure is not known while compiling: the compiler picks a structure's entries while compiling, from Python ints known when the function is called (numbers written out, len(params), indices of loops over such ranges, int arguments and global ints), and this index is computed from something else (a value of an array, computed at run time) [training.py:170]",
}

TRACING: dict[str, str] = {}
