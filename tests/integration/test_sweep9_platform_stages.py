"""The crash-test hook freezes the run's children at the build stage (so a kill lands
mid-build) and only there: a real Python process with a real child (``sleep``) runs the
hook; the child's state is read from /proc (T: stopped). Written for the mutation sweep
(tests/planted/sweep9_platform.json): no unit test may start a process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tsrate.config import project_dir

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

SCRIPT = textwrap.dedent(
    """
    import subprocess, sys
    from tsrate.platform.stages import dbt_line_hook, pause_point
    sleeper = subprocess.Popen(
        ["sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    print(sleeper.pid, flush=True)
    if sys.argv[1] == "build":
        dbt_line_hook()("1 of 2 OK created sql table model main.stg_prices")
    else:
        pause_point(sys.argv[1])
    """
)


def state(pid: int) -> str:
    """The process state letter of /proc/<pid>/stat (after the command in parentheses)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def run_paused(stage: str, tmp_path: Path) -> tuple[int, str]:
    """Run the hook at ``stage`` (asked for) with a 0 s pause; the sleeper's pid and state."""
    env = dict(
        os.environ,
        TSRATE_TEST_PAUSE_AT=stage,
        TSRATE_TEST_PAUSE_FILE=str(tmp_path / "paused"),
        TSRATE_TEST_PAUSE_SECONDS="0",
        PYTHONPATH=os.pathsep.join(
            [str(project_dir() / "src"), str(project_dir()), os.environ.get("PYTHONPATH", "")]
        ),
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, stage],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pid = int(done.stdout.split()[0])
    try:
        return pid, state(pid)
    finally:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGKILL)


def test_the_build_stage_freezes_the_children(tmp_path):
    pid, letter = run_paused("build", tmp_path)
    assert letter == "T", (pid, letter)
    assert (tmp_path / "paused").read_text().startswith("build ")


def test_other_stages_leave_the_children_running(tmp_path):
    pid, letter = run_paused("publish", tmp_path)
    assert letter in {"S", "R"}, (pid, letter)
    assert (tmp_path / "paused").read_text().startswith("publish ")
