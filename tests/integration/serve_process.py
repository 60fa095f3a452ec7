"""`tsrate serve` as a user starts it, for the operations tests (a child process: integration
tests only)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tsrate.config import project_dir


def start_serve(env: dict[str, str], log: Path) -> subprocess.Popen:
    """`python -m tsrate.cli serve` in its own process group (the test can list and kill
    it), its output in ``log``."""
    with open(log, "w") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "tsrate.cli", "serve"],
            cwd=project_dir(),
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for_line(serve: subprocess.Popen, log: Path, text: str, seconds: float) -> str:
    """Wait until ``log`` holds ``text`` (serve still running, within ``seconds``); return
    the log's text."""
    deadline = time.monotonic() + seconds
    while text not in (seen := log.read_text()):
        assert serve.poll() is None and time.monotonic() < deadline, seen[-3000:]
        time.sleep(0.5)
    return seen
