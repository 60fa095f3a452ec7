"""Processes that end with the process they work for, however it ends.

A SIGKILL, the OOM killer or a second Ctrl-C ends a process without running any of its
cleanup, so its helpers must notice on their own, or they go on writing the warehouse and
holding DuckDB's lock for nobody: the dbt child asks the kernel for a parent-death signal
(:func:`tsrate.platform.dbt_child.die_with_parent`), the forecast workers and a scheduled
run started by ``tsrate serve`` watch the process itself (:func:`watch_parent`: the kernel's
signal follows the parent *thread* that started the child, and their parents are not the
process whose end counts).
"""

from __future__ import annotations

import contextlib
import os
import sys

#: Set by ``tsrate serve`` for the flow runs its Prefect Runner starts: the serve's pid.
SERVE_PID = "TSRATE_SERVE_PID"

_watched: set[int] = set()


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie counts until it is reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    return True


def watch_parent(pid: int, farewell: str | None = None) -> None:
    """Leave at once (``os._exit(1)``) when process ``pid`` ends, from a daemon thread,
    printing ``farewell`` on stderr first when given. Linux: a pidfd, woken when ``pid``
    exits; elsewhere: a check a second. Watching the same process twice starts one thread."""
    import select
    import threading

    if pid in _watched:
        return
    _watched.add(pid)

    def wait() -> None:
        try:
            handle = os.pidfd_open(pid)
        except (AttributeError, OSError):  # no pidfd here (or gone already): look every second
            while alive(pid):
                threading.Event().wait(1.0)
        else:
            select.select([handle], [], [])
        _leave(farewell)

    threading.Thread(target=wait, name="tsrate-watch-parent", daemon=True).start()


def _leave(farewell: str | None) -> None:
    """Exit now, saying ``farewell`` on stderr if anyone still reads it (the process that
    did may be the one that ended: a write to its pipe fails, and must not stop the exit)."""
    if farewell:
        with contextlib.suppress(Exception):
            print(farewell, file=sys.stderr, flush=True)
    os._exit(1)


def stop_with_serve() -> None:
    """In a scheduled run (``tsrate serve`` named itself in :data:`SERVE_PID`): stop at
    once, as a killed run stops, when that serve ends — now if it already has. A serve
    stopped outright (SIGKILL; a second Ctrl-C only sets its runs ``Cancelled`` in Prefect)
    does not stop its runs, and Prefect's Runner
    started the run as a process of its own, which would otherwise go on writing the
    warehouse. Its forecast workers and dbt child follow it; the run is left ``running``
    and the next run closes it as interrupted. Elsewhere: nothing."""
    value = os.environ.get(SERVE_PID, "")
    if not value.isdigit() or int(value) == os.getpid():
        return
    serve = int(value)
    farewell = f"tsrate serve (pid {serve}) is gone: this scheduled run stops now"
    if not alive(serve):
        _leave(farewell)
    watch_parent(serve, farewell)
