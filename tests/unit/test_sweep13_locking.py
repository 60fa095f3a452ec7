"""Re-entering the writer lock this process already holds: no second flock, nothing released.

The pipeline holds the lock while its sub-flows take it again. The inner block must reuse
the outer holder's lock: it takes no flock of its own (a second open file would contend with
the first and fail, as another process would), and leaving it releases nothing: the lock
stays held, its holder line stays in the file and ``announce`` still writes there, until the
outer block ends. flock locks belong to an open file, so a second descriptor opened here
probes the lock exactly as another process would.
"""

from __future__ import annotations

import fcntl
import json
import os

import pytest

from tsrate.platform import locking
from tsrate.platform.locking import lock_path, writer_lock


def _held_elsewhere(warehouse) -> bool:
    """Whether another open file of the lock finds it taken (its shared side refused)."""
    fd = os.open(lock_path(warehouse), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.fixture
def flocks(monkeypatch):
    """Every fcntl.flock call made through the locking module: (operation) in order."""
    calls = []
    real = fcntl.flock

    def recording(fd, operation):
        calls.append(operation)
        return real(fd, operation)

    monkeypatch.setattr(locking.fcntl, "flock", recording)
    return calls


def test_the_inner_block_takes_no_flock_and_opens_no_file(tmp_path, flocks):
    warehouse = tmp_path / "w.duckdb"
    with writer_lock(warehouse) as outer:
        assert flocks == [fcntl.LOCK_EX | fcntl.LOCK_NB]  # the outer holder's one flock
        open_before = len(os.listdir("/proc/self/fd"))
        with writer_lock(warehouse) as inner:
            assert inner == outer
            assert len(os.listdir("/proc/self/fd")) == open_before
        assert flocks == [fcntl.LOCK_EX | fcntl.LOCK_NB]  # none in, nor on leaving, the inner block
        assert len(os.listdir("/proc/self/fd")) == open_before


def test_leaving_the_inner_block_releases_nothing(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    with writer_lock(warehouse) as path:
        line = json.loads(path.read_text())
        with writer_lock(warehouse):
            with writer_lock(warehouse):  # twice nested: still the same holder
                assert _held_elsewhere(warehouse)
            assert _held_elsewhere(warehouse)
        assert _held_elsewhere(warehouse)  # still held after every inner exit
        assert json.loads(path.read_text()) == line  # the holder line is not wiped
        assert locking._held_files[str(path)] >= 0  # still this process's lock ...
        locking.announce("building the marts")  # ... so announce still reaches its file
        assert json.loads(path.read_text())["activity"] == "building the marts"
    assert not _held_elsewhere(warehouse)  # the outer exit alone releases it
    assert path.read_bytes() == b"" and str(path) not in locking._held_files
