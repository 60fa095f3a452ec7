"""Run a Python script in a fresh interpreter and read the JSON it prints last (integration
tests only: it starts a process).

Tests of process-wide state (fork servers, what a process imported, the worker pool) run
their case in a new process: this starts one on ``python -c SCRIPT ARGS...`` from the
project's root with the checkout's ``src`` and root on ``PYTHONPATH``, fails with the
script's stderr when it exits non-zero, and returns its last stdout line parsed as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_script(
    script: str,
    *args: str,
    env: dict[str, str] | None = None,
    unset: tuple[str, ...] = (),
    timeout: float = 120,
):
    """The last line ``script`` prints, as JSON; ``env`` is added to this process's
    environment and the ``unset`` variables are removed from it."""
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", **(env or {})}
    for name in unset:
        environment.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
