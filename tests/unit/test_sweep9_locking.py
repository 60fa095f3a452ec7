"""The warehouse writer lock, in one process: who holds it, how long a writer waits, what it says.

A writer that finds the lock taken must fail at once by default, naming the holder; with a
timeout it says once that it waits, polls at most every second (at least every 50 ms near
the deadline) and then fails naming how long it waited. The holder's line in the lock file
names its pid, host, start and command (cut to 300 characters), and is wiped on release.
flock locks belong to an open file, so a second descriptor opened here contends with the
lock exactly as another process would; the clock and sleep are replaced by a fake clock,
so the waits are checked as the durations asked for, not timed.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time

import pytest

from tsrate.platform import locking
from tsrate.platform.locking import WarehouseBusy, lock_path, prefect_writer_slot, writer_lock


@pytest.fixture
def held(tmp_path):
    """The warehouse's lock taken by another open file, with a holder line written."""
    warehouse = tmp_path / "w.duckdb"
    fd = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    info = {"pid": 4242, "host": "box", "since": "2026-01-01T00:00:00+00:00", "command": "x"}
    os.pwrite(fd, json.dumps(info).encode(), 0)
    yield warehouse
    os.close(fd)


class Clock:
    def __init__(self):
        self.now, self.sleeps = 1000.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(time, "monotonic", fake.monotonic)
    monkeypatch.setattr(time, "sleep", fake.sleep)
    return fake


def test_by_default_a_second_writer_fails_at_once_naming_the_holder(held, clock):
    said = []
    with pytest.raises(WarehouseBusy) as caught:
        with writer_lock(held, say=said.append):
            pass
    message = str(caught.value)
    assert "pid 4242 on box since 2026-01-01T00:00:00+00:00 (x)" in message
    assert "after waiting" not in message and said == [] and clock.sleeps == []


def test_a_waiting_writer_polls_each_second_then_the_remainder_and_says_so_once(held, clock):
    said = []
    with pytest.raises(WarehouseBusy) as caught:
        with writer_lock(held, timeout=2.5, say=said.append):
            pass
    assert clock.sleeps == [1.0, 1.0, 0.5]
    # the timeout as given: 2.5 s, not rounded to "2s" (nor a float's "2.500000")
    assert said == ["waiting up to 2.5s for the warehouse writer lock held by pid 4242 on box "
                    "since 2026-01-01T00:00:00+00:00 (x)"]  # fmt: skip
    assert "after waiting 2.5s" in str(caught.value)


def test_near_the_deadline_a_waiting_writer_still_sleeps_50_ms(held, clock):
    with pytest.raises(WarehouseBusy):
        with writer_lock(held, timeout=1.02):
            pass
    assert clock.sleeps == [1.0, 0.05]


def test_the_holder_line_names_this_process_and_is_wiped_on_release(tmp_path, monkeypatch):
    warehouse = tmp_path / "new" / "folder" / "w.duckdb"  # the folder is made for the lock
    monkeypatch.setattr(sys, "argv", ["tsrate", "run", *(["--flag"] * 200)])
    with writer_lock(warehouse) as path:
        info = json.loads(path.read_text())
        assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
        assert info["command"] == " ".join(sys.argv)[:300] and len(info["command"]) == 300
    assert path == lock_path(warehouse).resolve() and path.read_bytes() == b""
    monkeypatch.setattr(sys, "argv", [""])
    with writer_lock(warehouse) as path:
        assert json.loads(path.read_text())["command"] == sys.executable


def test_the_lock_is_free_again_after_a_release(tmp_path, clock):
    warehouse = tmp_path / "w.duckdb"
    with writer_lock(warehouse):
        with writer_lock(warehouse):  # re-entered by the same process
            pass
    fd = os.open(lock_path(warehouse), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
    finally:
        os.close(fd)


def test_outside_a_flow_run_no_prefect_slot_is_claimed():
    assert locking.WRITER_LIMIT not in locking._held_slots
    with prefect_writer_slot() as held_slot:
        assert held_slot is False
    assert locking.WRITER_LIMIT not in locking._held_slots


def test_a_held_prefect_slot_is_reentered_and_left_held(monkeypatch):
    monkeypatch.setattr(locking, "_held_slots", {locking.WRITER_LIMIT})  # the outer holder
    with prefect_writer_slot() as inner:  # outside a flow run: only a held slot yields True
        assert inner is True and locking._held_slots == {locking.WRITER_LIMIT}
    assert locking._held_slots == {locking.WRITER_LIMIT}  # the outer holder frees it


def test_the_slot_lease_is_the_documented_minute():
    assert locking.WRITER_LEASE_SECONDS == 60.0  # docs/operations.md: "lease (60 s)"


def test_every_write_fails_at_once_by_default_when_the_warehouse_is_held(held, clock):
    from tsrate.platform.locking import warehouse_writer

    with pytest.raises(WarehouseBusy, match="pid 4242") as caught:
        with warehouse_writer(held):
            pass
    assert clock.sleeps == [] and "after waiting" not in str(caught.value)


def _reader(warehouse):
    """The lock's shared side taken by another open file, as `tsrate status` probes it and a
    ``--live`` query holds it."""
    fd = os.open(lock_path(warehouse), os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return fd


def test_an_instant_reader_probe_does_not_refuse_a_writer_that_will_not_wait(tmp_path):
    # `tsrate status` takes the shared side for an instant; a `--lock-timeout 0` writer that
    # tried at that instant was refused ("being written by another process")
    import threading

    warehouse = tmp_path / "w.duckdb"
    reader = _reader(warehouse)
    threading.Timer(0.05, os.close, [reader]).start()  # the probe lets go
    started = time.monotonic()
    with writer_lock(warehouse, timeout=0) as path:
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert time.monotonic() - started < locking.READER_GRACE_S + 0.5


def test_a_reader_that_stays_still_refuses_a_writer_and_is_named_as_a_reader(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    reader = _reader(warehouse)
    said = []
    try:
        started = time.monotonic()
        with pytest.raises(WarehouseBusy) as caught:
            with writer_lock(warehouse, timeout=0, say=said.append):
                pass
        waited = time.monotonic() - started
    finally:
        os.close(reader)
    assert locking.READER_GRACE_S <= waited < locking.READER_GRACE_S + 1.0
    message = str(caught.value)
    assert f"is being read by {locking.READERS};" in message and said == []
    with writer_lock(warehouse, timeout=0):  # free once the reader has gone
        pass


def test_a_writer_holding_the_lock_gets_no_reader_grace(held, clock):
    with pytest.raises(WarehouseBusy) as caught:
        with writer_lock(held, timeout=0):
            pass
    assert clock.sleeps == [] and "is being written by pid 4242" in str(caught.value)


def test_the_hint_after_a_wait_asks_for_a_longer_timeout(held, clock):
    """After a wait the wait is said apart from the holder's "now: <phase>" and the hint asks
    for a longer --lock-timeout (not the option the user just passed); without a wait the
    hint names the option."""
    with pytest.raises(WarehouseBusy) as waited:
        with writer_lock(held, timeout=3):
            pass
    message = str(waited.value)
    assert "(x); one writer at a time. Gave up after waiting 3s: wait for it to finish or " \
        "pass a longer --lock-timeout; `tsrate serve`: writer_lock_timeout_s; readers" in message  # fmt: skip
    assert "SECONDS to wait" not in message
    with pytest.raises(WarehouseBusy) as at_once:
        with writer_lock(held):
            pass
    message = str(at_once.value)
    assert "(x); one writer at a time. Wait for it to finish (or pass --lock-timeout SECONDS " \
        "to wait; `tsrate serve`: writer_lock_timeout_s); readers" in message  # fmt: skip
    assert "longer" not in message
