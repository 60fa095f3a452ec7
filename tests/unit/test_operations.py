"""Operations without Prefect or dbt, in this process: the publish step's Parquet export on
a real DuckDB file, the test hook, the schedule config and prefect.yaml. (The writer lock
between processes: tests/integration/test_writer_lock_processes.py; killed runs, signals and
the served deployment with real processes: tests/integration/test_operations_end_to_end.py.)"""

from __future__ import annotations

import json
import time

import duckdb
import pandas as pd
import pytest
import yaml

from tests.support.publish_warehouse import runs_table, scored_warehouse
from tsrate import TsrateError
from tsrate.config import project_dir
from tsrate.platform.publish import export_parquet, publish
from tsrate.platform.serve import ScheduleConfig, build_deployments, deployment_parameters


def test_publish_swaps_the_parquet_link_and_records_it(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    published = tmp_path / "published"
    runs = ["run-a", "run-b", "run-c"]
    for index, run_id in enumerate(runs, start=1):
        scored_warehouse(warehouse, run_id, rows=index * 10)
        result = publish(warehouse, run_id)
        link = published / "parquet"
        assert result.parquet_path == link and link.is_symlink()
        assert link.resolve().name == run_id
        scores = pd.read_parquet(link / "marts" / "scores.parquet")
        assert len(scores) == index * 10 and set(scores["run_id"]) == {run_id}
        assert pd.read_parquet(link / "seeds" / "systems.parquet")["system_id"].tolist() == [
            "naive"
        ]
        history = pd.read_parquet(link / "published_runs.parquet")
        assert history["run_id"].tolist() == runs[:index]
        manifest = json.loads((link / "manifest.json").read_text())
        entry = manifest["marts/scores.parquet"]
        assert (entry["rows"], entry["description"]) == (index * 10, "One row per item.")
        assert set(entry["columns"]) == {"run_id", "item", "score"}  # the data dictionary
    con = duckdb.connect(str(published / "tsrate.duckdb"), read_only=True)
    try:
        recorded = con.execute(
            "select run_id, parquet_path from published_runs order by published_at"
        ).fetchall()
    finally:
        con.close()
    assert recorded == [(run_id, f"parquet-runs/{run_id}") for run_id in runs]
    # the current and the previous run's folders stay (readers may still be in it)
    assert sorted(p.name for p in (published / "parquet-runs").iterdir()) == ["run-b", "run-c"]


def test_publish_removes_leftovers_of_a_killed_publish_and_reads_older_snapshots(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    published = tmp_path / "published"
    published.mkdir()
    # a snapshot from before the Parquet export (no parquet_path column)
    old = duckdb.connect(str(published / "tsrate.duckdb"))
    old.execute(
        "create table published_runs (run_id varchar, published_at timestamp, study json, "
        "row_counts json)"
    )
    old.execute("insert into published_runs values ('old', now()::timestamp, null, '{}')")
    old.close()
    leftovers = [
        published / ".tsrate.duckdb.killed-run.partial",
        published / "parquet-runs" / ".killed-run.partial" / "marts" / "x.parquet",
        published / ".parquet.killed-run.partial",
    ]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half written")
    scored_warehouse(warehouse, "new", rows=3)
    publish(warehouse, "new")
    assert not list(published.glob(".*.partial"))
    assert not list((published / "parquet-runs").glob(".*"))
    history = pd.read_parquet(published / "parquet" / "published_runs.parquet")
    assert history["run_id"].tolist() == ["old", "new"]
    assert history["parquet_path"].isna().tolist() == [True, False]


def test_a_failed_publish_changes_nothing(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    scored_warehouse(warehouse, "first", rows=2)
    publish(warehouse, "first")
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    before = snapshot.read_bytes()
    con = duckdb.connect(str(warehouse))
    con.execute("drop table marts.scores")
    con.close()
    with pytest.raises(TsrateError, match="holds no marts"):
        publish(warehouse, "second")
    assert snapshot.read_bytes() == before
    assert (tmp_path / "published" / "parquet").resolve().name == "first"
    assert not list((tmp_path / "published").rglob("*.partial"))


def test_export_writes_the_snapshot_for_bi_and_refuses_foreign_folders(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    scored_warehouse(warehouse, "run-a", rows=4)
    snapshot = publish(warehouse, "run-a").path
    destination = tmp_path / "bi" / "tsrate"
    written = export_parquet(snapshot, destination)
    assert destination / "marts" / "scores.parquet" in written
    assert len(pd.read_parquet(destination / "marts" / "scores.parquet")) == 4
    scored_warehouse(warehouse, "run-b", rows=6)
    publish(warehouse, "run-b")
    export_parquet(snapshot, destination)  # an earlier export is replaced
    assert len(pd.read_parquet(destination / "marts" / "scores.parquet")) == 6
    assert not list(destination.parent.glob(".*"))
    foreign = tmp_path / "documents"
    foreign.mkdir()
    (foreign / "thesis.txt").write_text("keep me")
    with pytest.raises(TsrateError, match="not an earlier tsrate export"):
        export_parquet(snapshot, foreign)
    assert (foreign / "thesis.txt").read_text() == "keep me"
    # a folder that merely holds a file called manifest.json (a web app, another tool's
    # export) is not replaced either: only a manifest as tsrate writes it counts
    for text in (
        '{"name": "my app", "icons": []}',
        "not json",
        "[]",
        '["published_runs.parquet"]',
        '{"a.parquet": 3}',
        '{"a.parquet": {"rows": 3}}',
        '{"published_runs.parquet": {"rows": 1}, "notes.txt": {"rows": 1}}',
        '{"published_runs.parquet": {"title": "runs"}}',
    ):
        (foreign / "manifest.json").write_text(text)
        with pytest.raises(TsrateError, match="not an earlier tsrate export"):
            export_parquet(snapshot, foreign)
        assert (foreign / "thesis.txt").read_text() == "keep me"
    (foreign / "manifest.json").write_text((destination / "manifest.json").read_text())
    export_parquet(snapshot, foreign)  # what tsrate wrote there is replaced
    assert not (foreign / "thesis.txt").exists()
    assert len(pd.read_parquet(foreign / "marts" / "scores.parquet")) == 6
    with pytest.raises(TsrateError, match="no published snapshot"):
        export_parquet(tmp_path / "nowhere.duckdb", tmp_path / "out")


def test_the_pause_hook_does_nothing_unless_asked(monkeypatch, capsys):
    from tsrate.platform.stages import pause_point

    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)  # a pause sleeps: recorded, not timed
    monkeypatch.delenv("TSRATE_TEST_PAUSE_AT", raising=False)
    pause_point("publish")
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "build")
    pause_point("publish")  # another stage: no pause
    assert slept == [] and "TSRATE_TEST_PAUSED" not in capsys.readouterr().err
    monkeypatch.setenv("TSRATE_TEST_PAUSE_SECONDS", "7")
    pause_point("build")  # the named stage: announced, then one sleep of the asked length
    assert slept == [7.0] and "TSRATE_TEST_PAUSED build" in capsys.readouterr().err


def test_schedules_and_parameters_come_from_config():
    config = ScheduleConfig.from_vars(
        {
            "nightly_cron": "30 1 * * 1-5",
            "weekly_cron": "0 6 * * 0",
            "schedule_timezone": "America/New_York",
            "nightly_price_source": "yahoo",
            "writer_lock_timeout_s": 600,
        }
    )
    deployments = {d.name: d for d in build_deployments(config)}
    assert set(deployments) == {"tsrate-nightly", "tsrate-weekly"}
    nightly, weekly = deployments["tsrate-nightly"], deployments["tsrate-weekly"]
    assert [s.schedule.cron for s in nightly.schedules] == ["30 1 * * 1-5"]
    assert [s.schedule.cron for s in weekly.schedules] == ["0 6 * * 0"]
    assert nightly.schedules[0].schedule.timezone == "America/New_York"
    assert nightly.parameters == {"source": "yahoo", "rate": False, "lock_timeout": 600.0}
    assert weekly.parameters == {"source": "auto", "rate": True, "lock_timeout": 600.0}
    assert nightly.concurrency_limit == 1 and weekly.concurrency_limit == 1
    assert nightly.entrypoint.endswith("pipeline.py:pipeline_flow")


@pytest.mark.parametrize(
    "values, problem",
    [
        ({"nightly_cron": "every night"}, "nightly_cron"),
        ({"schedule_timezone": "Mars/Olympus"}, "Invalid timezone"),
        ({"nightly_price_source": "ftp"}, "nightly_price_source"),
        ({"writer_lock_timeout_s": -1}, "writer_lock_timeout_s"),
    ],
)
def test_bad_schedule_config_is_named(values, problem):
    with pytest.raises(TsrateError, match=problem):
        ScheduleConfig.from_vars(values)


def test_prefect_yaml_matches_the_served_deployments():
    """`prefect deploy` and `tsrate serve` schedule the same runs (the config defaults)."""
    config = ScheduleConfig.from_vars()
    declared = yaml.safe_load((project_dir() / "prefect.yaml").read_text())["deployments"]
    by_name = {d["name"]: d for d in declared}
    assert set(by_name) == {"tsrate-nightly", "tsrate-weekly"}
    crons = {"tsrate-nightly": config.nightly_cron, "tsrate-weekly": config.weekly_cron}
    for name, parameters in deployment_parameters(config).items():
        entry = by_name[name]
        assert entry["entrypoint"] == "flows/pipeline.py:pipeline_flow"
        assert entry["parameters"] == parameters
        assert entry["schedules"] == [{"cron": crons[name], "timezone": config.timezone}]
        assert entry["concurrency_limit"] == 1


def _partition_and_batch():
    import numpy as np

    from tsrate.robustness.forecast.plan import Partition
    from tsrate.systems.base import ForecastBatch

    dates = np.array(["2022-10-03", "2022-10-04", "2022-10-05"], dtype="datetime64[D]")
    batch = ForecastBatch(
        ticker="AAPL",
        perturbation_id="P1",
        window_end_dates=dates,
        contexts=np.ones((3, 4)),
        horizon=2,
        clean_futures=np.ones((3, 2)),
        study_range=(1.0, 2.0),
    )
    return Partition("naive", "AAPL", "P1", "k" * 32), batch


def test_partition_files_round_trip_and_are_checked(tmp_path):
    import dataclasses

    import numpy as np

    from tsrate.robustness.forecast.distributed import read_partition_file, write_partition_file

    partition, batch = _partition_and_batch()
    forecasts = np.arange(6, dtype=float).reshape(3, 2) + 0.25
    path = write_partition_file(tmp_path, partition, batch.window_end_dates, forecasts, 1.5)
    assert path == tmp_path / f"{partition.input_key}.parquet"
    assert not list(tmp_path.glob(".*"))  # written under a temporary name, then renamed
    back, seconds = read_partition_file(path, partition, batch)
    np.testing.assert_array_equal(back, forecasts)
    assert seconds == 1.5

    other = dataclasses.replace(partition, input_key="x" * 32)
    with pytest.raises(TsrateError, match="holds partition k+, expected x+"):
        read_partition_file(path, other, batch)
    shifted = dataclasses.replace(batch, window_end_dates=batch.window_end_dates + 1)
    with pytest.raises(TsrateError, match="windows are not those of the study"):
        read_partition_file(path, partition, shifted)
    shorter = dataclasses.replace(batch, horizon=3)
    with pytest.raises(TsrateError, match="expected 3 × 3"):
        read_partition_file(path, partition, shorter)
    foreign = tmp_path / "foreign.parquet"
    pd.DataFrame({"forecast": [1.0]}).to_parquet(foreign)
    with pytest.raises(TsrateError, match="not a tsrate partition file"):
        read_partition_file(foreign, partition, batch)


def test_dask_address_resolution_and_bad_addresses(monkeypatch):
    from tsrate.robustness.forecast.distributed import (
        DASK_ADDRESS,
        dask_task_runner,
        resolve_dask_address,
    )

    monkeypatch.delenv(DASK_ADDRESS, raising=False)
    assert resolve_dask_address(None) is None  # the default: the local process pool
    monkeypatch.setenv(DASK_ADDRESS, "tcp://scheduler:8786")
    assert resolve_dask_address(None) == "tcp://scheduler:8786"
    assert resolve_dask_address("local:2") == "local:2"  # the CLI flag wins
    pytest.importorskip("prefect_dask")
    with pytest.raises(TsrateError, match="use tcp://host:8786"):
        dask_task_runner("scheduler:8786")
    assert dask_task_runner("tcp://scheduler:8786").address == "tcp://scheduler:8786"
    local = dask_task_runner("local:3")
    assert local.cluster_kwargs["n_workers"] == 3
    assert local.cluster_kwargs["env"]["OMP_NUM_THREADS"] == "1"


def test_cli_export_and_serve_dry_run(tmp_path, monkeypatch, capsys):
    from tsrate.cli import main

    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    assert main(["export", str(tmp_path / "bi")]) == 2
    assert "no published snapshot" in capsys.readouterr().err
    scored_warehouse(warehouse, "run-a", rows=5)
    publish(warehouse, "run-a")
    assert main(["export", str(tmp_path / "bi")]) == 0
    assert len(pd.read_parquet(tmp_path / "bi" / "marts" / "scores.parquet")) == 5
    capsys.readouterr()
    assert main(["serve", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    config = ScheduleConfig.from_vars()
    # one line per deployment, tab-separated: name, cron, time zone, parameters as JSON
    rows = {line.split("\t")[0]: line.split("\t") for line in printed.splitlines()}
    assert rows["tsrate-nightly"][1:3] == [config.nightly_cron, config.timezone]
    assert rows["tsrate-weekly"][1:3] == [config.weekly_cron, config.timezone]
    assert json.loads(rows["tsrate-weekly"][3]) == {
        "source": "auto",
        "rate": True,
        "lock_timeout": config.lock_timeout_s,
    }
    assert all(len(row) == 4 for row in rows.values())


def test_partition_files_carry_window_failures(tmp_path):
    import numpy as np

    failures_module = pytest.importorskip("tsrate.systems.failures")
    from tsrate.robustness.forecast.distributed import read_partition_file, write_partition_file

    partition, batch = _partition_and_batch()
    values = np.arange(6, dtype=float).reshape(3, 2)
    values[1] = np.nan
    failure = failures_module.WindowFailure(row=1, reason="no number in the reply", raw_text="?")
    partial = failures_module.PartialForecasts(values, (failure,))
    path = write_partition_file(tmp_path, partition, batch.window_end_dates, partial, 2.0)
    back, seconds = read_partition_file(path, partition, batch)
    assert isinstance(back, failures_module.PartialForecasts) and seconds == 2.0
    assert back.failures == (failure,)
    np.testing.assert_array_equal(back.values, values)  # NaN rows included


def test_unfinished_runs_are_closed_interrupted_and_finished_ones_kept(tmp_path):
    from tsrate.platform.warehouse import close_interrupted_runs

    path = tmp_path / "runs.duckdb"
    states = ["running", "forecasted", "building", "publishing", "succeeded", "build_failed"]
    runs_table(path, [(f"r{i}", f"2026-01-0{i + 1}", s) for i, s in enumerate(states)])
    con = duckdb.connect(str(path))
    closed = close_interrupted_runs(con)
    assert closed == [("r0", "running"), ("r2", "building"), ("r3", "publishing")]
    after = dict(con.execute("select run_id, status from raw.runs").fetchall())
    assert after == {
        "r0": "interrupted",
        "r1": "forecasted",  # the nightly refresh's finished state: kept
        "r2": "interrupted",
        "r3": "interrupted",
        "r4": "succeeded",
        "r5": "build_failed",
    }
    finished = con.execute(
        "select count(*) from raw.runs where status = 'interrupted' and finished_at is not null"
    ).fetchone()[0]
    assert finished == 3
    assert close_interrupted_runs(con) == []
    con.close()


def test_the_build_picks_the_newest_buildable_run_and_says_why_newer_ones_are_not(tmp_path):
    from tsrate.platform.warehouse import buildable_run

    path = tmp_path / "runs.duckdb"
    runs_table(
        path,
        [
            ("old", "2026-01-01", "succeeded"),
            ("good", "2026-01-02", "forecasted"),
            ("bad", "2026-01-03", "build_failed"),
            ("cut", "2026-01-04", "interrupted"),
        ],
    )
    con = duckdb.connect(str(path))
    run_id, notes = buildable_run(con)
    assert run_id == "good"
    assert notes == [
        "run cut is interrupted: interrupted because of cut",
        "run bad is build_failed: build_failed because of bad",
    ]
    con.execute("update raw.runs set status = 'failed'")
    with pytest.raises(TsrateError, match="no run can be built: run cut is failed"):
        buildable_run(con)
    con.close()


def test_progress_counts_done_and_weighs_the_eta_by_each_systems_cost():
    from tsrate.platform.progress import Progress, duration

    now = [0.0]
    lines = []
    # 2 slow partitions (6 s of compute each) and 4 cheap ones (1 s each)
    progress = Progress(["slow"] * 2 + ["cheap"] * 4, lines.append, tty=False, clock=lambda: now[0])
    assert progress.eta() is None
    now[0] = 3.0
    progress.update("slow", "slow A", 6.0)  # 3 s of wall for 6 s of compute: 2 workers
    # left: 1 slow (6 s) + 4 cheap (unknown: the mean so far, 6 s) = 30 s compute = 15 s wall
    assert progress.eta() == pytest.approx(15.0)
    assert lines[-1] == "[1/6]  16% slow A ETA 15s"
    now[0] = 3.5
    progress.update("cheap", "cheap A", 1.0)
    # left: 1 slow (6 s) + 3 cheap (1 s each) = 9 s compute; wall/compute 3.5 / 7
    assert progress.eta() == pytest.approx(9 * 0.5)
    for label in ("slow B", "cheap B", "cheap C", "cheap D"):
        progress.update(label.split()[0], label, 1.0)
    assert lines[-1] == "[6/6] 100% cheap D"  # no ETA once done
    assert (duration(42), duration(185), duration(3720)) == ("42s", "3m05s", "1h02m")


def test_steps_run_in_process_keep_their_retries_and_retry_conditions(monkeypatch):
    from prefect import flow, task
    from prefect.context import FlowRunContext

    from tsrate.platform.orchestration import call, run_flow

    calls = []

    def only_io(task, task_run, state) -> bool:  # noqa: ANN001 - Prefect's signature
        try:
            state.result()
        except TsrateError:
            return False
        except Exception:  # noqa: BLE001
            return True
        return False

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=only_io)
    def flaky(kind: str, failures: int) -> str:
        calls.append(kind)
        if calls.count(kind) <= failures:
            raise (TsrateError if kind == "bad input" else OSError)(kind)
        return "ok"

    assert call(flaky, "network", 2) == "ok"  # two I/O failures retried, the third works
    assert calls.count("network") == 3
    with pytest.raises(OSError):
        call(flaky, "down", 5)  # retries exhausted
    assert calls.count("down") == 3
    with pytest.raises(TsrateError):
        call(flaky, "bad input", 1)  # deterministic: never retried
    assert calls.count("bad input") == 1

    @flow
    def probe(x: int) -> tuple[int, bool]:
        return x + 1, FlowRunContext.get() is None

    monkeypatch.setenv("TSRATE_PREFECT", "never")
    assert run_flow(probe, x=1) == (2, True)  # a plain function: no Prefect server needed
    monkeypatch.setenv("TSRATE_PREFECT", "sometimes")
    with pytest.raises(TsrateError, match="TSRATE_PREFECT"):
        run_flow(probe, x=1)
