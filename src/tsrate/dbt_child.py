"""Entry point of the dbt child process: die with the parent, then run dbt's command line.

If the parent (``tsrate run``) is killed — SIGKILL, the OOM killer — an orphaned dbt would
keep writing the live warehouse and hold DuckDB's lock, so the next run could not start.
On Linux the child asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``).
Run as ``python -m tsrate.dbt_child <dbt args>`` with ``TSRATE_DBT_PARENT_PID`` set.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PARENT_PID = "TSRATE_DBT_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int | None) -> None:
    """Be killed when the parent dies; exit now if it already has (it raced us)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


if __name__ == "__main__":
    parent = os.environ.get(PARENT_PID)
    die_with_parent(int(parent) if parent else None)
    from dbt.cli.main import cli  # what `python -m dbt.cli.main` runs

    cli()
