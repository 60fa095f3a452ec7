"""The real ``tsrate`` command in a child process, importing this checkout (src/ first, not
an installed copy), with its warehouse and working folder given: for tests that check what a
refused command leaves behind on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tsrate.config import project_dir

#: The children import this checkout (src/ first), not an installed copy.
PYTHONPATH = os.pathsep.join([str(project_dir() / "src"), str(project_dir())])


def run_tsrate(*args: str, warehouse: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m tsrate.cli ARGS`` with ``TSRATE_WAREHOUSE=warehouse`` in ``cwd``."""
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, TSRATE_PROJECT_DIR=str(project_dir()))
    env["TSRATE_WAREHOUSE"] = str(warehouse)
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
