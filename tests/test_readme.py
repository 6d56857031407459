"""The README's tour runs exactly as written and prints what the README shows."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_tour_runs_and_matches_the_shown_backward(tmp_path):
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "tour.py"
    script.write_text(code)  # a real file, so the compiler can read the source
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(script), "exec"), {"__name__": "tour"})
    output = printed.getvalue()
    assert "(3, 2) (2,)" in output
    for line in shown.strip().splitlines():
        assert line.rstrip() in output, f"README shows a line the tour does not print: {line!r}"
