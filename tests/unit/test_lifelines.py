"""A scheduled run ties itself to its `tsrate serve` (tsrate.platform.lifelines): nothing
outside serve, an exit at once when the serve is gone, a watch while it lives. The kill
itself, with real processes, is tests/integration/test_operations_end_to_end.py's
force-stopped serve test."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tsrate.platform import lifelines


class Left(Exception):
    """Raised instead of the process exit."""


@pytest.fixture
def exits(monkeypatch):
    """Record `os._exit` instead of leaving the test process."""
    codes: list[int] = []

    def leave(code: int) -> None:
        codes.append(code)
        raise Left

    monkeypatch.setattr(lifelines.os, "_exit", leave)
    monkeypatch.setattr(lifelines, "_watched", set())
    return codes


def _watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tsrate-watch-parent"]


def _free_pid() -> int:
    """A pid no process has now."""
    taken = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    return next(pid for pid in range(4_000_000, 1, -1) if pid not in taken)


def test_outside_serve_nothing_happens(monkeypatch, exits):
    monkeypatch.delenv(lifelines.SERVE_PID, raising=False)
    before = _watchers()
    lifelines.stop_with_serve()
    monkeypatch.setenv(lifelines.SERVE_PID, str(os.getpid()))  # serve itself
    lifelines.stop_with_serve()
    monkeypatch.setenv(lifelines.SERVE_PID, "not a pid")
    lifelines.stop_with_serve()
    assert exits == [] and _watchers() == before


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="/proc lists the pids in use")
def test_a_run_whose_serve_is_gone_leaves_at_once_saying_why(monkeypatch, exits, capsys):
    gone = _free_pid()
    monkeypatch.setenv(lifelines.SERVE_PID, str(gone))
    with pytest.raises(Left):
        lifelines.stop_with_serve()
    assert exits == [1]
    assert f"tsrate serve (pid {gone}) is gone" in capsys.readouterr().err


def test_a_run_whose_serve_lives_watches_it_once(monkeypatch, exits):
    monkeypatch.setenv(lifelines.SERVE_PID, str(os.getppid()))  # alive: pytest's parent
    before = len(_watchers())
    lifelines.stop_with_serve()
    lifelines.stop_with_serve()  # a second writer in the same run: still one watch
    assert exits == [] and len(_watchers()) == before + 1
    assert lifelines._watched == {os.getppid()}
