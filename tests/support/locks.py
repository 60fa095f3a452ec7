"""The writer lock held by "another writer" in tests: a second open file on the warehouse's
lock file with flock's exclusive lock (flock contends between open files of one process as
it does between processes), so a test sees what a command meets while a run writes."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from tsrate.platform.locking import lock_path


@contextlib.contextmanager
def another_writer(warehouse: str | Path) -> Iterator[None]:
    """Hold ``warehouse``'s writer lock for the block, as another process would."""
    fd = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)
