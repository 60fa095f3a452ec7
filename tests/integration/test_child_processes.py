"""Child processes of the pipeline: the test hook pauses a real process at its stage, and
the dbt child dies with its parent (a killed `tsrate run` leaves no dbt writing)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tsrate.config import project_dir


def test_the_pause_hook_pauses_at_its_stage(tmp_path):
    marker = tmp_path / "paused"
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tsrate.platform.stages import pause_point; pause_point('ingest')",
        ],
        env=dict(
            os.environ,
            TSRATE_TEST_PAUSE_AT="ingest",
            TSRATE_TEST_PAUSE_FILE=str(marker),
            TSRATE_TEST_PAUSE_SECONDS="30",
            PYTHONPATH=str(project_dir()),
        ),
        stderr=subprocess.PIPE,
        text=True,
    )
    assert "TSRATE_TEST_PAUSED ingest" in process.stderr.readline()
    assert marker.read_text().split() == ["ingest", str(process.pid)]
    assert process.poll() is None  # still sleeping
    process.kill()
    process.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_dbt_child_dies_with_its_parent(tmp_path):
    """A killed `tsrate run` must not leave dbt running (writing, holding DuckDB's lock)."""
    parent_script = textwrap.dedent(
        """
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c",
            "import os, sys, time; from tsrate.platform.dbt_child import die_with_parent; "
            "die_with_parent(int(sys.argv[1])); print('armed', flush=True); time.sleep(120)",
            str(os.getpid())], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "armed"
        print(child.pid, flush=True)
        time.sleep(120)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_script],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(project_dir())),
    )
    child_pid = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child_pid}").exists():
        status = Path(f"/proc/{child_pid}/status").read_text()
        if "State:\tZ" in status:  # dead, waiting to be reaped
            break
        assert time.monotonic() < deadline, "the child outlived its killed parent"
        time.sleep(0.05)
