"""Fixtures of the browser tests: Chromium, a JupyterLab server, the built book.

Playwright (the ``browser`` extra) drives the system's Chromium (Debian's
``chromium``, ``/usr/bin/chromium``, or the path in ``$CHROMIUM``); no browser is ever
downloaded. Where Chromium or Playwright is missing every test here is *skipped* with
a message saying what to install. Servers listen on loopback ports chosen by the OS
and are stopped at the end of the session.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from browser_support import (
    BOOK_HTML,
    CHROMIUM_ARGS,
    DEFAULT_CHROMIUM,
    NOTEBOOKS,
    VIEWPORT,
    LabServer,
    chromium_path,
    wait_for,
)
from servers import free_port, stop


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium (skips the test where Chromium or Playwright is missing)."""
    executable = chromium_path()
    if executable is None:
        pytest.skip(
            f"no Chromium at {os.environ.get('CHROMIUM', DEFAULT_CHROMIUM)}: install Debian's "
            "package (apt-get install chromium) or set CHROMIUM=/path/to/chromium"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed: pip install -e '.[browser]'")
    args = CHROMIUM_ARGS + (["--no-sandbox"] if os.geteuid() == 0 else [])
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        yield chromium
        chromium.close()


@dataclass
class PageLog:
    """What a page reported: console errors, uncaught exceptions, failed requests."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"console: {m}" for m in self.console_errors]
            + [f"exception: {m}" for m in self.page_errors]
            + [f"request: {m}" for m in self.failed_requests]
        )


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh 1280 px wide page whose errors are collected in ``page.log``."""
    context = browser.new_context(viewport=VIEWPORT)
    new_page = context.new_page()
    log = PageLog()
    new_page.on(
        "console", lambda m: m.type == "error" and log.console_errors.append(_console_text(m))
    )
    new_page.on("pageerror", lambda e: log.page_errors.append(str(e)))
    new_page.on(
        "response",
        lambda r: r.status >= 400 and log.failed_requests.append(f"{r.status} {r.url}"),
    )
    new_page.on("requestfailed", lambda r: log.failed_requests.append(f"failed {r.url}"))
    new_page.log = log
    yield new_page
    context.close()


def _console_text(message: Any) -> str:
    where = message.location or {}
    return f"{message.text} ({where.get('url', '')}:{where.get('lineNumber', '')})"


# Every cell drawn at once (not only those in view), and no "news?" pop-up over the page.
LAB_SETTINGS = {
    "notebook-extension:tracker": {"windowingMode": "none"},
    "apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1, the notebooks copied (the lab autosaves what it runs).

    Cells are rendered all at once (``windowingMode: none``) so that every output is in
    the page, and the app is exposed as ``window.jupyterapp`` for the tests to read
    the notebook model.
    """
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = base / "settings" / "@jupyterlab"
    for plugin, values in LAB_SETTINGS.items():
        folder, name = plugin.split(":")
        (settings / folder).mkdir(parents=True, exist_ok=True)
        (settings / folder / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    log_path = base / "lab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={base / 'settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabServerApp.announcements_url=",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    with log_path.open("w") as log:
        server = subprocess.Popen(
            command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/api/status?token={token}", server, log_path)
        yield LabServer(url=url, token=token, root=root)
    finally:
        stop(server)


@pytest.fixture(scope="session")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The built book (``make book``) served by ``python -m http.server`` on loopback."""
    if not (BOOK_HTML / "index.html").exists():
        pytest.skip("the book is not built: run `make book` (make test-browser does)")
    port = free_port()
    log_path = tmp_path_factory.mktemp("book") / "http.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=BOOK_HTML,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/index.html", server, log_path, seconds=30)
        yield url
    finally:
        stop(server)
