"""What each mode refuses today, by program name: ``"ErrorClass: the first line of its
message"`` (``WRONG: ...`` where a mode gave a wrong number). The tests mark these
``xfail(strict=True)``, so a fix shows up as a failure until its line goes.
Regenerate with ``python -m corpus_objects.measure --write-today`` (from ``tests/``)."""

COMPILER: dict[str, str] = {
    "rosenbrock_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:22]",
    "rastrigin_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:28]",
    "ackley_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:34]",
    "beale_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:42]",
    "styblinski_tang_differentiable": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:52]",
    "shifted_sphere_with_args": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:60]",
    "weighted_least_squares_two_args": "UnsupportedSyntaxError: this index is out of range [benchmarks.py:68]",
    "trid_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:75]",
    "griewank_fun": "UnsupportedSyntaxError: this sets the attribute self.nfev of the object, which would change the caller's object: a differentiated method only reads its attributes [benchmarks.py:81]",
    "dropout_forward_cache_with_mask": "UnsupportedSyntaxError: an expression statement is not supported: its value would be thrown away, and the call may change a value of this function in place [course_layers.py:97]",
    "activation_looked_up_by_name": "UnsupportedSyntaxError: calling the local variable 'act' is not supported [functions.py:174]",
    "counter_on_self": "UnsupportedSyntaxError: this sets the attribute self.calls of the object, which would change the caller's object: a differentiated method only reads its attributes [effects.py:88]",
    "batch_attribute_changes_shape": "UnsupportedSyntaxError: this index into a structure is not known while compiling: the compiler picks a structure's entries while compiling, from Python ints known when the function is called (numbers written out, len(params), indices of loops over such ranges, int arguments and global ints), and this index is computed from something else (a value of an array, computed at run time) [training.py:170]",
}

TRACING: dict[str, str] = {}
