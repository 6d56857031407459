"""Servers that tests start on loopback: a free port, and stopping them cleanly.

Each server is started in its own process group (``start_new_session=True``), so that
stopping it stops what it started too (``make`` and the ``jupyter`` it runs).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Stop a server started in its own process group, and wait for it."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
