"""``import autodiff_tutor.widgets`` without ipywidgets names the extra to install."""

from __future__ import annotations

import subprocess
import sys


def test_widgets_without_ipywidgets_name_the_lab_extra():
    # a child interpreter where ipywidgets cannot be imported (as after a plain install)
    code = (
        "import sys; sys.modules['ipywidgets'] = None\n"
        "try:\n"
        "    import autodiff_tutor.widgets\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "autodiff_tutor[lab]" in done.stdout and "ipywidgets" in done.stdout
