"""Helpers of the browser tests: where things are, ports, servers, screenshots.

Playwright (the ``browser`` extra) drives the system's Chromium (Debian's
``chromium``, ``/usr/bin/chromium``, or the path in ``$CHROMIUM``); no browser is ever
downloaded. Where Chromium or Playwright is missing every test here is *skipped* with
a message saying what to install. Servers listen on loopback ports chosen by the OS
and are stopped at the end of the session. Screenshots go to ``build/screenshots``
(ignored by git, kept by CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
BOOK_HTML = ROOT / "book" / "_build" / "html"
SCREENSHOTS = ROOT / "build" / "screenshots"
DEFAULT_CHROMIUM = "/usr/bin/chromium"

# Chromium as the machine's probe starts it: no sandbox as root, no GPU, and none of
# the background connections that a closed network refuses.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 900}


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None where there is none."""
    path = os.environ.get("CHROMIUM", DEFAULT_CHROMIUM)
    return path if Path(path).is_file() and os.access(path, os.X_OK) else shutil.which(path)


def wait_for(url: str, process: subprocess.Popen, log: Path, seconds: float = 120) -> None:
    """Poll ``url`` until it answers 200; fail with the server's log otherwise."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    pytest.fail(f"server at {url} did not answer:\n{log.read_text(errors='replace')[-3000:]}")


@dataclass
class LabServer:
    """A JupyterLab server on loopback serving a scratch copy of the notebooks."""

    url: str
    token: str
    root: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"


def screenshot_folder(*parts: str) -> Path:
    """``build/screenshots/<parts>``, emptied: it holds only this run's pictures."""
    folder = SCREENSHOTS.joinpath(*parts)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder
