"""A writer that is still running keeps its temporaries, and the sweep only asks whether it
runs (signal 0), never signals it (mutation sweep: tests/planted/s45_sweep.json). The
writer here is a real process of this machine (``sleep``) whose pid names the temporaries;
once it has ended, the next sweep removes them."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tsrate.html.together import sweep_leftovers


def default_signals() -> None:
    """In the sleeper: every signal's default action (a job started under nohup, or in the
    background, inherits ignored ones), so that any signal sent to it ends it."""
    for number in signal.valid_signals():
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass


def test_a_running_writer_is_left_alone_and_not_signalled(tmp_path):
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    sleeper = subprocess.Popen(["sleep", "60"], preexec_fn=default_signals)
    try:
        temp = page.with_name(f".report.html.{sleeper.pid}.abcd1234.partial")
        staging = folder.with_name(f".report-charts.{sleeper.pid}.abcd1234.new.partial")
        temp.write_text("in progress")
        staging.mkdir()
        assert sweep_leftovers(page, folder) == []
        with pytest.raises(subprocess.TimeoutExpired):  # still running: not hung up on
            sleeper.wait(timeout=0.5)
        assert temp.read_text() == "in progress" and staging.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sweep_leftovers(page, folder) == [staging, temp]
    assert list(tmp_path.iterdir()) == []


SWEEP = """
import sys
from pathlib import Path
from tsrate.html.together import sweep_leftovers
print(len(sweep_leftovers(Path(sys.argv[1]), Path(sys.argv[2]))))
"""


def test_a_writer_the_sweeper_may_not_signal_counts_as_running(tmp_path):
    """Another user's writer: asking whether it runs is refused (EPERM), which must count as
    running. The writer runs as nobody; the sweep runs in a user namespace of its own
    (``unshare --map-root-user``: it owns the files, but may not signal other users'
    processes). Skipped where either cannot be started (not root, no user namespaces)."""
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    try:
        sleeper = subprocess.Popen(["sleep", "60"], user=65534, group=65534, extra_groups=[])
    except (OSError, ValueError) as error:
        pytest.skip(f"cannot start a process as nobody: {error}")
    try:
        temp = page.with_name(f".report.html.{sleeper.pid}.abcd1234.partial")
        temp.write_text("in progress")
        probe = subprocess.run(
            ["unshare", "--user", "--map-root-user", sys.executable, "-c",
             f"import os\ntry:\n    os.kill({sleeper.pid}, 0)\nexcept PermissionError:\n"
             "    print('refused')"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if probe.stdout.strip() != "refused":
            pytest.skip(f"no user namespace that is refused a signal: {probe.stderr.strip()}")
        swept = subprocess.run(
            ["unshare", "--user", "--map-root-user", sys.executable, "-c", SWEEP, str(page),
             str(folder)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert swept.returncode == 0, swept.stderr
        assert swept.stdout.strip() == "0" and temp.read_text() == "in progress"
    finally:
        sleeper.kill()
        sleeper.wait()
