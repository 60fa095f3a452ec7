"""What the writer lock says about its holder and its wait, for an operator reading `tsrate
status`, a "busy" error or a cron log.

A run that Prefect's engine started (a scheduled or triggered run of `tsrate serve`, a
worker's) was named by its command line alone: ``.../site-packages/prefect/engine.py (pid
N)``, not the flow run. It is named by its flow run and deployment now; a tsrate command
keeps its command line. A writer that waited for the lock said "waiting up to 3600s ..." and
then nothing when it got it: it says how long it waited and who finished.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time

import pytest

from tsrate.platform import locking
from tsrate.platform.locking import (
    command_words,
    flow_run_text,
    lock_path,
    prefect_engine,
    waited_text,
    writer_lock,
)

ENGINE = "/srv/tsrate/.venv/lib/python3.11/site-packages/prefect/engine.py"
RUN = "Prefect flow run 'puzzling-sawfly' of deployment 'tsrate-pipeline/tsrate-weekly'"


def test_a_run_of_prefects_engine_is_named_by_its_flow_run_alone():
    assert command_words([ENGINE], RUN) == RUN
    assert command_words(["prefect.engine"], RUN) == RUN  # Prefect's in-process bootstrap


def test_a_command_keeps_its_command_line_and_adds_its_flow_run():
    argv = ["/srv/tsrate/.venv/bin/tsrate", "run", "--lock-timeout", "3600"]
    assert command_words(argv, None) == " ".join(argv)
    assert command_words(argv, RUN) == f"{' '.join(argv)}; {RUN}"
    assert command_words([ENGINE], None) == ENGINE  # outside a flow run: nothing else to say
    assert command_words([""], None) == sys.executable


def test_only_prefects_own_engine_file_counts_as_the_engine():
    assert prefect_engine([ENGINE]) and prefect_engine(["prefect.engine"])
    assert not prefect_engine(["/srv/other/engine.py"])
    assert not prefect_engine(["/srv/tsrate/.venv/bin/tsrate", "engine.py"])
    assert not prefect_engine([])


def test_the_command_is_cut_to_300_characters():
    long = ["tsrate", "run", *(["--flag"] * 100)]
    assert command_words(long, None) == " ".join(long)[:300]
    assert command_words(long, RUN) == f"{' '.join(long)}; {RUN}"[:300]
    assert len(command_words(long, RUN)) == locking.COMMAND_CHARS == 300


def test_a_flow_run_in_words_names_its_deployment_else_its_flow():
    assert flow_run_text("puzzling-sawfly", "tsrate-pipeline", "tsrate-weekly") == RUN
    assert flow_run_text("a-b", "tsrate-pipeline", None) == (
        "Prefect flow run 'a-b' of flow 'tsrate-pipeline'"
    )
    assert flow_run_text("a-b", None, "tsrate-weekly") == "Prefect flow run 'a-b'"


def test_outside_a_flow_run_the_holder_is_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/srv/tsrate/.venv/bin/tsrate", "build"])
    with writer_lock(tmp_path / "w.duckdb") as path:
        assert json.loads(path.read_text())["command"] == "/srv/tsrate/.venv/bin/tsrate build"


def test_waits_in_words():
    assert [waited_text(s) for s in (0.04, 2.5, 9.94, 10.0, 41.4, 3599.6)] == [
        "0s",
        "2.5s",
        "9.9s",
        "10s",
        "41s",
        "3600s",
    ]


class ReleasingClock:
    """A fake clock whose ``release_after``-th wait (a sleep of 50 ms or more: not one of the
    10 ms polls of a reader's grace) lets the other holder go."""

    def __init__(self, fd: int, release_after: int):
        self.now, self.sleeps, self.fd, self.release_after = 1000.0, 0, fd, release_after

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps += seconds >= 0.05
        self.now += seconds
        if self.sleeps == self.release_after:
            fcntl.flock(self.fd, fcntl.LOCK_UN)


def _other(warehouse, mode: int) -> int:
    fd = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, mode | fcntl.LOCK_NB)
    return fd


@pytest.mark.parametrize(
    ("mode", "sleeps", "waited", "who"),
    [
        (fcntl.LOCK_EX, 41, "41s", "the other writer"),
        (fcntl.LOCK_EX, 3, "3s", "the other writer"),
        # a reader staying past the half-second grace (10 ms polls), then 2 waits of 1 s
        (fcntl.LOCK_SH, 2, "2.5s", "the live reader"),
    ],
)
def test_a_writer_that_waited_says_when_it_got_the_lock(
    tmp_path, monkeypatch, mode, sleeps, waited, who
):
    warehouse = tmp_path / "w.duckdb"
    other = _other(warehouse, mode)
    clock = ReleasingClock(other, release_after=sleeps)
    monkeypatch.setattr(time, "monotonic", clock.monotonic)
    monkeypatch.setattr(time, "sleep", clock.sleep)
    said = []
    try:
        with writer_lock(warehouse, timeout=3600, say=said.append):
            pass
    finally:
        os.close(other)
    assert len(said) == 2 and said[0].startswith("waiting up to 3600s for the warehouse")
    assert said[1] == f"got the warehouse writer lock after {waited}; {who} finished"


def test_a_writer_that_did_not_wait_says_nothing(tmp_path):
    said = []
    with writer_lock(tmp_path / "w.duckdb", timeout=3600, say=said.append):
        pass
    assert said == []


def _operations_text() -> str:
    from tsrate.config import project_dir

    return " ".join((project_dir() / "docs" / "operations.md").read_text().split())


def test_the_docs_show_the_words_the_lock_writes():
    """docs/operations.md quotes the holder of a served run and a waiting run's last line."""
    text = _operations_text()
    assert f"`{flow_run_text('puzzling-sawfly', 'tsrate-pipeline', 'tsrate-weekly')}`" in text
    cron = text[text.index("## From cron") :]
    got = f"got the warehouse writer lock after {waited_text(41.2)}; the other writer finished"
    assert f"`{got}`" in cron[: cron.index("## ", 3)]


def test_a_failure_after_the_wait_leaves_the_lock_free(tmp_path):
    """The "got the lock" line is said once the lock is taken: when saying it fails (a
    closed log stream), the lock must not stay taken for the rest of the process."""
    import threading

    from tests.support.locks import another_writer

    warehouse = tmp_path / "tsrate.duckdb"
    releaser = threading.Event()

    def say(line: str) -> None:
        if line.startswith("waiting"):
            releaser.set()
        else:
            raise OSError("log stream closed")

    def take() -> None:
        with writer_lock(warehouse, timeout=5, say=say):
            pass

    held = another_writer(warehouse)
    held.__enter__()
    failure: list[BaseException] = []
    worker = threading.Thread(target=lambda: _catch(take, failure))
    worker.start()
    assert releaser.wait(5)
    held.__exit__(None, None, None)
    worker.join(10)
    assert failure and isinstance(failure[0], OSError)
    with writer_lock(warehouse, timeout=0):  # free again: no descriptor left holding it
        pass


def _catch(call, into: list) -> None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - the test reads it
        into.append(exc)
