"""Test hook: make a run stop at a named stage so a crash test can kill it exactly there.

Set ``TSRATE_TEST_PAUSE_AT=<stage>`` and the process, on reaching that stage, writes
``<stage> <pid>`` to ``TSRATE_TEST_PAUSE_FILE`` (when set), prints ``TSRATE_TEST_PAUSED`` on
stderr and sleeps (``TSRATE_TEST_PAUSE_SECONDS``, default 600) — the test then SIGKILLs it.
Unset (always, outside tests) the hooks cost one environment lookup. Stages:

* ``ingest``    — the store task holds the writer lock and the open warehouse, prices fetched
* ``inference`` — the first forecast partition of the run has been stored, the rest not yet
* ``build``     — dbt has reported its first finished model; the dbt child is frozen
                  (SIGSTOP) so the kill lands mid-build, whatever the build's speed
* ``publish``   — the new snapshot and Parquet files are written but not yet swapped in
* ``published`` — ``tsrate run``'s snapshot is swapped in, the run not yet marked succeeded
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

PAUSE_AT = "TSRATE_TEST_PAUSE_AT"
PAUSE_FILE = "TSRATE_TEST_PAUSE_FILE"
PAUSE_SECONDS = "TSRATE_TEST_PAUSE_SECONDS"
STAGES = ("ingest", "inference", "build", "publish", "published")


def pause_requested(stage: str) -> bool:
    """Whether this process was told to stop at ``stage``."""
    return os.environ.get(PAUSE_AT) == stage


def _child_pids() -> list[int]:
    """Direct children of this process (Linux ``/proc``; empty elsewhere)."""
    children: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            children += [int(pid) for pid in task.read_text().split()]
        except OSError:
            continue
    return children


def dbt_line_hook() -> Callable[[str], None] | None:
    """For ``tsrate.platform.dbt_runner.run_dbt``: when asked to stop at ``build``, a function to call with
    every line dbt prints, which pauses (freezing the dbt child) at the first finished model;
    None otherwise."""
    if not pause_requested("build"):
        return None

    def watch(line: str) -> None:
        if " OK created " in line:
            pause_point("build", freeze_children=True)

    return watch


def pause_point(stage: str, freeze_children: bool = False) -> None:
    """Announce and sleep when ``TSRATE_TEST_PAUSE_AT`` names ``stage``; otherwise return at once."""
    if not pause_requested(stage):
        return
    if freeze_children:
        # the dbt child, not the forecast workers' fork server (idle by then): a stopped
        # server would not see the run's process end
        from multiprocessing import forkserver

        server = forkserver._forkserver._forkserver_pid
        for pid in set(_child_pids()) - {server}:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
    marker = os.environ.get(PAUSE_FILE)
    if marker:
        Path(marker).write_text(f"{stage} {os.getpid()}\n")
    print(f"TSRATE_TEST_PAUSED {stage} pid={os.getpid()}", file=sys.stderr, flush=True)
    time.sleep(float(os.environ.get(PAUSE_SECONDS, "600")))
