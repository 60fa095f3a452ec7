"""What a second process learns about a run while it writes the warehouse.

The writer says what it is doing (its phase, the forecast's progress line with the ETA, the
dbt child's summary lines) in the writer lock's file (``tsrate.platform.locking.announce``);
``tsrate status``, ``tsrate runs`` and every "warehouse is busy" error read it there without
opening the warehouse, which DuckDB would refuse beside a read-write process. The writer here
is this process holding the real lock: ``flock`` locks belong to an open file, so the readers'
own descriptors conflict with it as another process's would."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pytest

from tests.support.dbt_child_stand_in import ChildStandIn
from tests.support.locks import another_writer
from tests.support.published_runs import published_runs_snapshot, warehouse_env
from tsrate import cli
from tsrate.config import Study
from tsrate.platform import locking
from tsrate.platform.locking import (
    ACTIVITY_CHARS,
    announce,
    lock_path,
    writer_lock,
    writer_status,
)
from tsrate.platform.progress import Progress, phase


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    return warehouse_env(tmp_path / "tsrate.duckdb", monkeypatch)


def test_the_holder_announces_its_phases_and_progress_lines(warehouse):
    said = []
    with writer_lock(warehouse):
        assert writer_status(warehouse)["pid"] > 0
        assert "activity" not in writer_status(warehouse)  # nothing said yet
        with phase("forecast", said.append):
            assert writer_status(warehouse)["activity"] == "forecast"
            now = [0.0]
            bar = Progress(
                ["arima", "arima", "naive"], said.append, tty=False, clock=lambda: now[0]
            )
            now[0] = 4.0  # the first item (2 s of compute) ends 4 s in
            bar.update("arima", "arima MRK P1", 2.0)
            activity = writer_status(warehouse)["activity"]
            assert activity == f"forecast: {said[-1]}"
            assert activity.startswith("forecast: [1/3]  33% arima MRK P1 ETA ")
            counts = writer_status(warehouse)["progress"]  # a monitor's numbers
            assert counts["done"] == 1 and counts["total"] == 3
            assert counts["eta_seconds"] == round(bar.eta(), 1) == 4.0  # 2 items of 2 s left
            bar.update("arima", "arima MRK P2", 2.0)
            bar.update("naive", "naive MRK P1", 0.1)
            assert writer_status(warehouse)["progress"] == {"done": 3, "total": 3}  # no ETA
            with phase("inner", said.append):
                assert writer_status(warehouse)["activity"] == "forecast / inner"
                assert "progress" not in writer_status(warehouse)  # a phase line has none
            assert writer_status(warehouse)["activity"] == "forecast"
        assert writer_status(warehouse)["activity"] == ""  # no phase under way
        stamp = dt.datetime.fromisoformat(writer_status(warehouse)["updated"])
        assert abs((dt.datetime.now(dt.UTC) - stamp).total_seconds()) < 60
    assert writer_status(warehouse) is None  # released: nobody writes
    assert lock_path(warehouse).read_text() == ""


def test_a_failed_phase_is_no_longer_announced(warehouse):
    with writer_lock(warehouse):
        with pytest.raises(RuntimeError), phase("build (dbt)", lambda _: None):
            raise RuntimeError("boom")
        assert writer_status(warehouse)["activity"] == ""


def test_a_shorter_activity_leaves_valid_json_and_long_ones_are_cut(warehouse):
    with writer_lock(warehouse):
        announce("x" * 1000)
        assert writer_status(warehouse)["activity"] == "x" * ACTIVITY_CHARS
        announce("y")
        info = json.loads(lock_path(warehouse).read_text())  # the old tail cut away
        assert info["activity"] == "y"
        assert info["pid"] > 0 and info["command"]


def test_announce_without_the_lock_writes_nothing(warehouse):
    announce("forecast")
    assert not lock_path(warehouse).exists()


def test_the_text_of_a_holder_that_died_is_not_a_writer(warehouse):
    """A holder killed outright leaves its text; nobody holds the lock any more."""
    lock_path(warehouse).write_text(json.dumps({"pid": 1, "host": "h", "since": "s"}))
    assert writer_status(warehouse) is None
    assert writer_status(warehouse.parent / "nowhere" / "tsrate.duckdb") is None


def test_a_holder_that_has_said_nothing_is_another_process(warehouse):
    with another_writer(warehouse):
        fd = locking.os.open(lock_path(warehouse), locking.os.O_RDONLY)
        try:
            assert locking.lock_holder(fd) == "another process"
            lock_path(warehouse).write_text("{not json")
            assert locking.holder_info(fd, tries=2) is None
        finally:
            locking.os.close(fd)


def test_a_busy_error_says_what_the_writer_is_doing(warehouse, capsys):
    duckdb.connect(str(warehouse)).close()
    with writer_lock(warehouse), phase("publish", lambda _: None):
        code = cli.main(["query", "--live", "select 1"])
    err = capsys.readouterr().err
    assert code != 0
    assert f"pid {locking.os.getpid()}" in err and ", now: publish" in err


def test_status_with_no_warehouse_and_no_snapshot(warehouse, capsys):
    assert cli.main(["status"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["warehouse"] == f"{warehouse} (none yet: `tsrate run` creates it)"
    assert lines["writer"] == "none: the warehouse is free"
    assert lines["published"].startswith("nothing yet")
    assert cli.main(["status", "--format", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["writer"] is None and status["warehouse_exists"] is False
    assert status["published_run_id"] is None and status["publications"] == 0


def test_status_names_the_writer_its_activity_and_the_newest_publication(warehouse, capsys):
    duckdb.connect(str(warehouse)).close()
    published_runs_snapshot(
        warehouse,
        [
            ("run-new", dt.datetime(2026, 12, 5, 11, 0), None),
            ("run-old", dt.datetime(2026, 12, 4, 9, 30), None),
        ],
    )
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        Progress(["a", "a"], lambda _: None, tty=False).update("a", "naive AAPL P0", 1.0)
        assert cli.main(["status", "--format", "json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert cli.main(["status"]) == 0
        text = capsys.readouterr().out
    assert status["writer"]["pid"] == locking.os.getpid()
    assert status["writer"]["activity"].startswith("forecast: [1/2]  50% naive AAPL P0")
    assert status["published_run_id"] == "run-new"  # the newest, whatever the insert order
    assert status["published_at"] == "2026-12-05 11:00:00"
    assert status["publications"] == 2
    lines = dict(line.split(None, 1) for line in text.splitlines())
    assert f"(pid {locking.os.getpid()} on " in lines["writer"]
    assert lines["writer"].endswith(" ago)")
    assert lines["now"].startswith("forecast: [1/2]  50% naive AAPL P0")
    assert lines["published"] == (
        "run run-new at 2026-12-05 11:00:00 UTC (2 publication(s) in all)"
    )


def test_status_says_when_the_snapshot_cannot_be_read(warehouse, capsys):
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_bytes(b"not a database" * 100)
    assert cli.main(["status"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["published"].startswith("unreadable: ")


def test_runs_during_a_write_lists_the_published_runs(warehouse, capsys):
    duckdb.connect(str(warehouse)).close()
    study = Study.from_mapping(
        {
            "study_tickers": ["AAPL", "MSFT"],
            "study_start": "2022-01-03",
            "study_end": "2022-06-30",
            "systems": ["naive", "arima"],
        }
    )
    published_runs_snapshot(
        warehouse,
        [
            ("run-core", dt.datetime(2026, 12, 4, 9, 30), study.to_json()),
            ("suite-run", dt.datetime(2026, 12, 5, 11, 0), None),
        ],
    )
    with writer_lock(warehouse), phase("build (dbt)", lambda _: None):
        code = cli.main(["runs", "--limit", "10"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"pid {locking.os.getpid()}" in err and "now: build (dbt)" in err
    assert "published runs" in err
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert out.splitlines()[0].split()[:3] == ["run_id", "status", "published_at"]
    assert [row[0] for row in rows[:2]] == ["suite-run", "run-core"]  # newest first
    core = " ".join(rows[1])
    assert "AAPL,MSFT" in core and "naive,arima" in core
    assert "2022-01-03" in core and "2022-06-30" in core
    assert rows[1][1] == "published"


def test_runs_during_a_write_before_any_publication_says_so(warehouse, capsys):
    """Nothing to list: refused as a busy warehouse is (exit 2), not an empty success."""
    duckdb.connect(str(warehouse)).close()
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        code = cli.main(["runs"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("tsrate: error: a writer holds the warehouse: ")
    assert "now: forecast" in err and "no run is published yet" in err
    assert "\n" not in err.strip()  # one line


def test_a_suite_run_announces_its_phase_and_its_batches(warehouse):
    from tsrate.platform.progress import announcing
    from tsrate.suites.publishing import run_and_publish

    seen, said = [], []

    def work(store: str) -> str:
        seen.append(writer_status(store)["activity"])
        announcing(said.append)("gemma: batch 3 of 10")
        seen.append(writer_status(store)["activity"])
        return "suite-run-1"

    assert run_and_publish("reasoning", work, str(warehouse), 0.0, False, None) == "suite-run-1"
    assert seen == ["reasoning suite", "reasoning suite: gemma: batch 3 of 10"]
    assert said == ["gemma: batch 3 of 10"]
    assert writer_status(warehouse) is None


def test_status_reads_the_snapshot_beside_a_bi_tool_holding_it(warehouse, capsys):
    """A BI tool holds the snapshot read-only (here, in this process): status opens it
    read-only too (DuckDB refuses a second open of a file with another configuration)."""
    snapshot = published_runs_snapshot(
        warehouse, [("run-a", dt.datetime(2026, 12, 5, 11, 0), None)]
    )
    reader = duckdb.connect(str(snapshot), read_only=True)
    try:
        assert cli.main(["status", "--format", "json"]) == 0
    finally:
        reader.close()
    status = json.loads(capsys.readouterr().out)
    assert status["snapshot_error"] is None and status["published_run_id"] == "run-a"


def test_a_build_announces_its_summary_and_node_lines_and_prints_only_the_summaries(warehouse):
    """The dbt child's lines as the runner follows them: a summary line is said and
    announced, a node's progress line only announced, dbt's other lines neither."""
    from tsrate.platform import dbt_runner
    from tsrate.platform.dbt_child import PROGRESS, SUMMARY

    seen: list[str] = []
    counts: list[dict | None] = []

    def after_line():
        seen.append(writer_status(warehouse)["activity"])
        counts.append(writer_status(warehouse).get("progress"))

    said: list[str] = []
    lines = [
        f"{SUMMARY} parsed the project in 1.2s",
        "12:00:01  1 of 3 START sql table model main.numbers",
        f"{PROGRESS} 1 of 3 numbers",
        f"{PROGRESS} 2 of 3 doubled",
        f"{SUMMARY} models and seeds in 0.4s",
    ]
    with writer_lock(warehouse), phase("build (dbt)", lambda _: None):
        returned = dbt_runner._follow(
            ChildStandIn(lines, after_line), ["build"], said.append, None, False, 0.0
        )
    assert returned == lines
    assert said == ["parsed the project in 1.2s", "models and seeds in 0.4s"]
    assert seen == [
        "build (dbt): dbt parsed the project in 1.2s",
        "build (dbt): dbt parsed the project in 1.2s",  # dbt's own line: nothing new
        "build (dbt): dbt 1 of 3 numbers done",
        "build (dbt): dbt 2 of 3 doubled done",
        "build (dbt): dbt models and seeds in 0.4s",
    ]
    assert counts == [None, None, {"done": 1, "total": 3}, {"done": 2, "total": 3}, None]


def test_the_dbt_child_prints_a_progress_line_per_finished_node_only(capsys):
    from types import SimpleNamespace as Namespace

    from tsrate.platform.dbt_child import PROGRESS, node_progress

    def event(name, **data):
        return Namespace(info=Namespace(name=name), data=Namespace(**data))

    node = Namespace(node_name="int_windows")
    node_progress(event("LogStartLine", index=1, total=5, node_info=node))
    node_progress(event("LogModelResult", index=2, total=5, node_info=node))
    node_progress(event("LogSkipBecauseError", index=3, total=5, relation="marts.ratings"))
    node_progress(event("LogHookEndLine", index=1, total=1, node_info=node))
    node_progress(event("MainReportVersion", version="1.11"))  # no index or total
    node_progress(event("LogModelResult", index=0, total=0, node_info=node))
    assert capsys.readouterr().out.splitlines() == [
        f"{PROGRESS} 2 of 5 int_windows",
        f"{PROGRESS} 3 of 5 marts.ratings",
    ]


def _stop_training(*args, **kwargs):
    raise RuntimeError("training stopped here")


def _training_notes(caplog, warehouse) -> list[str]:
    """Run the training flow's body until its first training step (stopped there)."""
    import logging

    import flows.train_vit as module

    with caplog.at_level(logging.INFO), pytest.raises(RuntimeError, match="stopped here"):
        module.train_vit_flow.fn("all", warehouse=str(warehouse))
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("note:")]


def test_training_says_at_once_that_another_process_writes_the_warehouse(
    warehouse, caplog, monkeypatch
):
    """Training takes the writer lock only to register its checkpoints, minutes later: a
    busy warehouse is said before it starts (the flow is stopped at its first training
    step). A lock this process holds itself says nothing."""
    import flows.train_vit as module

    monkeypatch.setattr(module, "train_variant", _stop_training)
    holder = {"pid": 4242, "host": "box", "since": "s", "command": "tsrate run"}
    with another_writer(warehouse):
        lock_path(warehouse).write_text(json.dumps({**holder, "activity": "forecast"}))
        notes = _training_notes(caplog, warehouse)
    assert len(notes) == 1
    assert "pid 4242 on box since s (tsrate run), now: forecast;" in notes[0]
    assert "waiting up to 0s then" in notes[0]
    caplog.clear()
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        assert _training_notes(caplog, warehouse) == []


def test_training_says_nothing_of_a_free_warehouse(warehouse, caplog, monkeypatch):
    import flows.train_vit as module

    monkeypatch.setattr(module, "train_variant", _stop_training)
    assert _training_notes(caplog, warehouse) == []
