"""The command line: show, check and verify, with errors printed without a traceback."""

import subprocess
import sys
import textwrap

from autodiff_tutor.cli import main

MODEL = textwrap.dedent(
    """
    import numpy as np
    from autodiff_tutor import DifferentiableFunction


    def loss(w, x):
        h = np.tanh(x @ w)
        return np.sum(h * h)


    def escapes(x):
        return float(np.sum(x))


    class WrongRelu(DifferentiableFunction):
        def forward(self, x):
            return np.maximum(x, 0)

        def backward(self, dY, compute_gradients, x):
            return dY * (x >= 0) * 2.0     # a planted bug: slope 2

        def __init__(self):
            super().__init__(save_inputs_for_backward=True)
    """
)


def write_model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_show_prints_the_generated_functions(tmp_path, capsys):
    path = write_model(tmp_path)
    assert main(["show", f"{path}::loss", "--wrt", "w"]) == 0
    printed = capsys.readouterr().out
    assert "def loss_forward(w, x):" in printed
    assert "def loss_backward(d_out, memory):" in printed
    assert "return (d_w,)" in printed


def test_show_jvp(tmp_path, capsys):
    path = write_model(tmp_path)
    assert main(["show", f"{path}::loss", "--wrt", "w", "--jvp"]) == 0
    assert "def loss_jvp(w, x, w_dot):" in capsys.readouterr().out


def test_check_agrees_with_finite_differences(tmp_path, capsys):
    path = write_model(tmp_path)
    assert main(["check", f"{path}::loss", "--shape", "3x2", "--shape", "4x3"]) == 0
    assert "matches central finite differences" in capsys.readouterr().out


def test_verify_catches_a_planted_bug(tmp_path, capsys):
    path = write_model(tmp_path)
    assert main(["verify", f"{path}::WrongRelu"]) == 1
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "counterexample" in printed


def test_verify_takes_a_plain_function_like_show_and_check(tmp_path, capsys):
    path = tmp_path / "scalar.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.tanh(x) * x\n")
    assert main(["verify", f"{path}::f"]) == 0
    assert "PASSED" in capsys.readouterr().out


def test_verify_proves_a_built_in_op(capsys):
    assert main(["verify", "autodiff_tutor.ops::PReLUFunction", "--args", "BC"]) == 0
    assert "PASSED" in capsys.readouterr().out


def test_library_errors_are_printed_without_a_traceback(tmp_path, capsys):
    path = write_model(tmp_path)
    assert main(["check", f"{path}::escapes", "--shape", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("GradientEscapeError:")
    assert "Traceback" not in err
    assert main(["show", f"{path}::missing"]) == 1
    assert "has no 'missing'" in capsys.readouterr().err


def test_console_script_runs(tmp_path):
    path = write_model(tmp_path)
    command = [sys.executable, "-m", "autodiff_tutor.cli", "check", f"{path}::loss"]
    result = subprocess.run(
        command + ["--shape", "3x2", "--shape", "4x3"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
