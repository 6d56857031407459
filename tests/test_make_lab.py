"""``make lab``, the README's first command, starts JupyterLab as root and as a user.

JupyterLab refuses to run as root without ``--allow-root`` (containers, cloud VMs,
course server images), and has no browser to open on a machine without a display: the
Makefile adds those flags where they apply. The last test starts ``make lab`` for real,
headless on a loopback port, asks the server for ``/api/status`` and stops it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from servers import free_port, stop

ROOT = Path(__file__).resolve().parent.parent
VENV_JUPYTER = ROOT / ".venv" / "bin" / "jupyter"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _dry_run(**variables: str) -> str:
    """The command ``make lab`` would run, with Makefile variables set."""
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY"}}
    args = [f"{name}={value}" for name, value in variables.items()]
    done = subprocess.run(
        ["make", "-s", "-n", "lab", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return next(line for line in done.stdout.splitlines() if "jupyter lab" in line)


def test_lab_as_root_allows_root():
    assert "--allow-root" in _dry_run(USER_ID="0")


def test_lab_as_a_user_does_not_ask_for_root():
    assert "--allow-root" not in _dry_run(USER_ID="1000")


def test_lab_opens_no_browser_without_a_display_and_one_with():
    assert "--no-browser" in _dry_run(HAS_DISPLAY="")
    assert "--no-browser" not in _dry_run(HAS_DISPLAY="yes")


def _status(url: str, token: str) -> dict | None:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
            return json.loads(answer.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@pytest.mark.skipif(not VENV_JUPYTER.exists(), reason="needs .venv (run make env)")
def test_make_lab_starts_a_server_that_answers(tmp_path: Path):
    port, token = free_port(), secrets.token_hex(16)
    lab_args = f"--ip=127.0.0.1 --port={port} --IdentityProvider.token={token} --no-browser"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={lab_args}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # one process group: make and jupyter stop together
    )
    try:
        status = None
        deadline = time.monotonic() + 120
        while status is None and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            status = _status(f"http://127.0.0.1:{port}/api/status", token)
        log.flush()
        assert status is not None, (tmp_path / "lab.log").read_text()
        assert "started" in status
    finally:
        stop(server)
        log.close()
