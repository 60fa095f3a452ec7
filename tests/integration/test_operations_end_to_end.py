"""Operations end to end: `tsrate run` killed (SIGKILL) at each stage, Parquet publishing, the lock.

The kill test drives real `tsrate run` processes on a tiny study. Each is told by the test
hook ``TSRATE_TEST_PAUSE_AT=<stage>`` (tsrate.platform.stages) to stop at one stage, then killed
there; the published snapshot must stay byte-identical and queryable, and the run after the
kills must produce the marts of an uninterrupted run. Child processes talk to the test's
Prefect API (no ephemeral server start per process).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.integration.killed_runs import (
    OVERRIDES,
    RUN_FLAGS,
    SELECT,
    kill_at,
    run_environment,
    start_run,
)
from tests.integration.serve_process import (
    descendants,
    run_weekly,
    start_serve,
    wait_for_line,
    wait_gone,
)
from tests.support.warehouses import read
from tsrate.config import project_dir

pytestmark = pytest.mark.slow

PARTITIONS = 2 * 2 * 2  # tickers × systems × perturbations


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_released(warehouse: Path) -> None:
    """Nothing (no orphaned dbt either) holds the live file: a read-write open succeeds."""
    deadline = time.monotonic() + 10
    while True:
        try:
            duckdb.connect(str(warehouse)).close()
            return
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class SnapshotPoller(threading.Thread):
    """A BI-style reader: polls the snapshot and the Parquet folder while a run publishes,
    checking each time that it sees one complete publication (row counts as recorded)."""

    def __init__(self, snapshot: Path) -> None:
        super().__init__(daemon=True)
        self.snapshot = snapshot
        self.stopping = threading.Event()
        self.errors: list[str] = []
        self.seen: set[str] = set()
        self.polls = 0

    def poll(self) -> None:
        con = duckdb.connect(str(self.snapshot), read_only=True)
        try:
            run_id, counts = con.execute(
                "select run_id, row_counts from published_runs order by published_at desc limit 1"
            ).fetchone()
            for table, rows in json.loads(counts).items():
                assert con.execute(f"select count(*) from {table}").fetchone()[0] == rows, table
            marts_runs = con.execute("select distinct run_id from marts.window_errors").fetchall()
            assert marts_runs == [(run_id,)], (marts_runs, run_id)
        finally:
            con.close()
        folder = (self.snapshot.parent / "parquet").resolve()  # resolve once: one run's files
        if folder.exists():
            manifest = json.loads((folder / "manifest.json").read_text())
            for relative, entry in manifest.items():
                rows = duckdb.sql(f"select count(*) from '{folder / relative}'").fetchall()[0][0]
                assert rows == entry["rows"], relative
            published = pd.read_parquet(folder / "published_runs.parquet")
            assert published["run_id"].iloc[-1] == folder.name
        self.seen.add(run_id)
        self.polls += 1

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.poll()
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                self.errors.append(repr(exc))
            time.sleep(0.1)


def _marts(snapshot: Path) -> dict[str, pd.DataFrame]:
    """Every published mart, run ids left out (they differ between runs by design)."""
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        names = [
            row[0]
            for row in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts' order by 1"
            ).fetchall()
        ]
        frames = {}
        for name in names:
            columns = [row[0] for row in con.execute(f"describe marts.{name}").fetchall()]
            exclude = " exclude (run_id)" if "run_id" in columns else ""
            frames[name] = con.execute(f"select *{exclude} from marts.{name} order by all").df()
        return frames
    finally:
        con.close()


def test_killed_runs_leave_the_snapshot_intact_and_the_next_run_resumes(
    tmp_path, monkeypatch, capsys, prefect_harness
):
    from flows.pipeline import pipeline_flow
    from tsrate.cli import main

    # an uninterrupted run of the study: the reference marts, and a snapshot to protect
    reference = tmp_path / "reference" / "tsrate.duckdb"
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    first_run = pipeline_flow(
        overrides=OVERRIDES, workers=1, warehouse=str(reference), select=SELECT
    )
    reference_snapshot = reference.parent / "published" / "tsrate.duckdb"
    expected = _marts(reference_snapshot)
    assert expected and all(len(frame) for frame in expected.values())

    # a warehouse whose published snapshot came from that run, its live file still empty
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir(parents=True)
    shutil.copy(reference_snapshot, snapshot)
    published = _digest(snapshot)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))

    def second_run_fails_fast(holder_pid: int) -> None:
        """A second `tsrate run` while the first writes: a clear error, not DuckDB's, that
        says what the first is doing; `tsrate status` and `tsrate runs` answer beside it."""
        log = tmp_path / "run-second.log"
        second = start_run(tmp_path, warehouse, log)
        assert second.wait(timeout=120) == 2
        assert f"is being written by pid {holder_pid}" in log.read_text()
        assert ", now: forecast" in log.read_text()
        capsys.readouterr()
        assert main(["status", "--format", "json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["writer"]["pid"] == holder_pid
        assert status["writer"]["activity"].startswith("forecast")
        assert status["published_run_id"] == first_run
        assert main(["runs"]) == 0
        out, err = capsys.readouterr()
        assert first_run in out and f"pid {holder_pid}" in err

    for stage in ("ingest", "inference", "build", "publish"):
        kill_at(tmp_path, warehouse, stage, second_run_fails_fast if stage == "inference" else None)
        assert _digest(snapshot) == published, f"killed at {stage}: the snapshot changed"
        capsys.readouterr()
        assert main(["status", "--format", "json"]) == 0  # the killed run's text is stale
        assert json.loads(capsys.readouterr().out)["writer"] is None
        assert main(["query", "select run_id from published_runs"]) == 0
        assert first_run in capsys.readouterr().out
        if warehouse.exists():
            _assert_released(warehouse)
        if stage == "ingest":  # killed inside the price load: nothing half-stored
            assert read(warehouse, "select count(*) n from raw.prices")["n"][0] == 0
        if stage == "inference":  # one partition landed before the kill
            stored = read(warehouse, "select count(*) n from raw.forecast_partitions")["n"][0]
            assert stored == 1
        if stage == "publish":  # the new files were written, never swapped in
            assert list(snapshot.parent.glob(".*.partial"))

    # the next run resumes: every partition reused, marts as the uninterrupted run's
    log = tmp_path / "run-final.log"
    reader = SnapshotPoller(snapshot)
    reader.start()
    process = start_run(tmp_path, warehouse, log)
    try:
        assert process.wait(timeout=300) == 0, log.read_text()[-4000:]
    finally:
        reader.stopping.set()
        reader.join(timeout=30)
    reader.poll()  # once more, after the run
    assert reader.errors == [] and reader.polls > 10
    runs = read(warehouse, "select run_id, status from raw.runs order by started_at")
    final_run = runs["run_id"].iloc[-1]
    assert runs["status"].iloc[-1] == "succeeded"
    # the runs killed while forecasting, building and publishing were all closed
    assert runs["status"].iloc[:-1].tolist() == ["interrupted"] * 3
    reuse = read(
        warehouse,
        "select count_if(reused) reused, count(*) n from raw.run_partitions where run_id = ?",
        [final_run],
    )
    assert reuse["reused"][0] == PARTITIONS and reuse["n"][0] == PARTITIONS
    dupes = read(
        warehouse,
        "select count(*) n from (select system_id, ticker, window_end_date, perturbation_id, "
        "horizon_step from raw.forecasts group by all having count(*) > 1)",
    )
    assert dupes["n"][0] == 0
    history = read(snapshot, "select run_id from published_runs order by published_at")
    assert history["run_id"].tolist() == [first_run, final_run]
    assert reader.seen == {first_run, final_run}  # the old publication, then the new one
    resumed = _marts(snapshot)
    assert resumed.keys() == expected.keys()
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(resumed[name], frame, obj=f"marts.{name}")
    assert not list(snapshot.parent.glob(".*.partial"))  # leftovers of the kill removed
    # the Parquet copy is the new run's
    parquet = snapshot.parent / "parquet"
    assert parquet.resolve().name == final_run
    exported = duckdb.sql(
        f"select * exclude (run_id) from '{parquet / 'marts' / 'window_errors.parquet'}' "
        "order by all"
    ).df()
    pd.testing.assert_frame_equal(exported, expected["window_errors"])


def test_writes_hold_the_prefect_writer_slot_when_the_limit_exists(tmp_path, prefect_harness):
    from prefect import flow
    from prefect.client.orchestration import get_client

    from tsrate.platform.locking import WRITER_LIMIT, ensure_writer_limit, warehouse_writer

    def active_slots() -> int | None:
        with get_client(sync_client=True) as client:
            try:
                return client.read_global_concurrency_limit_by_name(WRITER_LIMIT).active_slots
            except Exception:  # noqa: BLE001 - the limit does not exist
                return None

    @flow
    def probe(warehouse: str) -> list[int | None]:
        seen = []
        with warehouse_writer(warehouse):
            seen.append(active_slots())
            with warehouse_writer(warehouse):  # re-entrant: sub-flows take it again
                seen.append(active_slots())
        seen.append(active_slots())
        return seen

    warehouse = str(tmp_path / "tsrate.duckdb")
    assert probe(warehouse) == [None, None, None]  # no limit: the file lock alone
    ensure_writer_limit()  # what `tsrate serve` does
    try:
        with get_client(sync_client=True) as client:
            assert client.read_global_concurrency_limit_by_name(WRITER_LIMIT).limit == 1
        assert probe(warehouse) == [1, 1, 0]
    finally:
        with get_client(sync_client=True) as client:
            client.delete_global_concurrency_limit_by_name(WRITER_LIMIT)


def test_a_flow_run_names_itself_in_the_lock(tmp_path, monkeypatch, prefect_harness):
    """A writer in a Prefect flow run names its flow run in the lock file: beside its command
    line, or alone where that is Prefect's engine (``python -m prefect.engine``, which a
    served or worker's run is: the lock named ``.../prefect/engine.py`` and nothing else)."""
    from prefect import flow

    from tsrate.platform.locking import warehouse_writer, writer_status

    warehouse = str(tmp_path / "tsrate.duckdb")

    @flow(flow_run_name="nightly-probe")
    def probe() -> str:
        with warehouse_writer(warehouse):
            return writer_status(warehouse)["command"]

    words = "Prefect flow run 'nightly-probe' of flow 'probe'"
    monkeypatch.setattr(sys, "argv", ["/venv/bin/tsrate", "run", "--lock-timeout", "60"])
    assert probe() == f"/venv/bin/tsrate run --lock-timeout 60; {words}"
    engine = str(Path(sys.prefix) / "lib" / "site-packages" / "prefect" / "engine.py")
    monkeypatch.setattr(sys, "argv", [engine])
    assert probe() == words
    assert writer_status(warehouse) is None  # released: nobody writes


def test_the_dask_path_stores_the_forecasts_of_the_local_path(tmp_path, prefect_harness):
    pytest.importorskip("prefect_dask")
    from flows.forecast import forecast_flow
    from tests.support.warehouses import ingest
    from tsrate.config import Study, load_companies
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.forecast.distributed import (
        dask_task_runner,
        partition_folder,
        write_partition_file,
    )
    from tsrate.robustness.forecast.plan import load_series, make_batch, plan_partitions
    from tsrate.systems.registry import resolve_systems

    overrides = {**OVERRIDES, "systems": "naive,biased,random"}
    partitions = 2 * 3 * 2
    local, distributed = tmp_path / "local" / "tsrate.duckdb", tmp_path / "dask" / "tsrate.duckdb"
    for warehouse in (local, distributed):
        ingest(warehouse, ["AAPL", "MSFT"])
    forecast_flow(overrides=overrides, workers=1, warehouse=str(local))

    # a partition file a killed Dask run left behind: loaded as it is, not computed again
    study = Study.from_vars(overrides)
    with connect(distributed) as con:
        series = load_series(con, study)
    left = plan_partitions(study, series, resolve_systems(study, load_companies()))[0]
    batch = make_batch(study, series[left.ticker], left.perturbation_id)
    stored = read(
        local,
        "select forecast from raw.forecasts where system_id = ? and ticker = ? and "
        "perturbation_id = ? order by window_end_date, horizon_step",
        [left.system_id, left.ticker, left.perturbation_id],
    )["forecast"].to_numpy()
    folder = partition_folder(distributed)
    write_partition_file(
        folder, left, batch.window_end_dates, stored.reshape(batch.n_windows, -1), 12345.0
    )

    summary = forecast_flow.with_options(task_runner=dask_task_runner("local:2"))(
        overrides=overrides, warehouse=str(distributed)
    )
    assert (summary.computed, summary.reused) == (partitions, 0)
    assert len(list(folder.glob("*.parquet"))) == partitions
    assert not list(folder.glob(".*"))
    recorded = read(
        distributed,
        "select seconds from raw.forecast_partitions where input_key = ?",
        [left.input_key],
    )
    assert recorded["seconds"].tolist() == [12345.0]
    query = "select * exclude (run_id, partition_key) from raw.forecasts order by all"
    pd.testing.assert_frame_equal(read(distributed, query), read(local, query))

    # stored partitions are never submitted again
    again = forecast_flow.with_options(task_runner=dask_task_runner("local:2"))(
        overrides=overrides, warehouse=str(distributed)
    )
    assert (again.computed, again.reused) == (0, partitions)
    assert read(distributed, "select count(*) n from raw.forecast_partitions")["n"][0] == partitions


def _paused_run(tmp_path: Path, warehouse: Path, stage: str, name: str) -> subprocess.Popen:
    """`tsrate run` (2 forecast workers, no Prefect API: the default, in-process path)
    stopped by the test hook at ``stage``."""
    marker = tmp_path / f"paused-{name}"
    log = tmp_path / f"run-{name}.log"
    flags = [*RUN_FLAGS[: RUN_FLAGS.index("--workers")], "--workers", "2", "--select", SELECT]
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "tsrate.cli", "run", *flags],
            cwd=project_dir(),
            env=run_environment(
                tmp_path,
                warehouse,
                PREFECT_API_URL="",
                TSRATE_TEST_PAUSE_AT=stage,
                TSRATE_TEST_PAUSE_FILE=str(marker),
            ),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the test can list it
        )
    deadline = time.monotonic() + 300
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"`tsrate run` never paused at {stage}:\n{log.read_text()[-4000:]}")
        time.sleep(0.2)
    return process


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_sigterm_stops_a_run_within_5s_and_no_process_outlives_a_sigkill(tmp_path):
    warehouse = tmp_path / "live" / "tsrate.duckdb"

    # SIGTERM while forecasting: the run, its forecast workers included, ends within 5 s
    process = _paused_run(tmp_path, warehouse, "inference", "term")
    children = descendants(process.pid)
    assert len(children) >= 2, "expected the forecast workers"
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=30)
    assert time.monotonic() - sent < 5.0
    assert code == 128 + signal.SIGTERM
    log = (tmp_path / "run-term.log").read_text()
    assert "stopped by SIGTERM" in log and "Traceback" not in log
    assert wait_gone(children, 5.0) == {}
    _assert_released(warehouse)
    # left as a kill would leave it: one partition stored, the run still `running`
    assert read(warehouse, "select status from raw.runs")["status"].tolist() == ["running"]

    # SIGKILL while forecasting (workers alive) and while dbt builds (the dbt child frozen):
    # no child of the killed run is alive 5 s later
    for stage in ("inference", "build"):
        process = _paused_run(tmp_path, warehouse, stage, f"kill-{stage}")
        children = descendants(process.pid)
        assert children, f"expected child processes at {stage}"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        assert wait_gone(children, 5.0) == {}, f"orphans after a SIGKILL at {stage}"
        _assert_released(warehouse)

    # the next run closes every run the stops left unfinished, whatever their stage
    log = tmp_path / "run-final.log"
    done = start_run(tmp_path, warehouse, log, PREFECT_API_URL="")
    assert done.wait(timeout=600) == 0, log.read_text()[-4000:]
    runs = read(warehouse, "select status, message from raw.runs order by started_at")
    assert runs["status"].tolist() == ["interrupted", "interrupted", "interrupted", "succeeded"]
    assert "while the run was building" in runs["message"][2]


def test_serve_owns_a_prefect_server_and_a_triggered_run_completes(tmp_path):
    """`tsrate serve` without a Prefect server: it starts one (with the UI), a run triggered
    on its weekly deployment completes, and stopping serve leaves no process behind. The
    API URL it prints is the one `prefect` commands take: `prefect deployment inspect` finds
    the weekly deployment with it (the UI's address answered "Deployment ... not found")."""
    import httpx
    from prefect.settings import PREFECT_API_URL, temporary_settings

    warehouse = tmp_path / "live" / "tsrate.duckdb"
    log = tmp_path / "serve.log"
    env = run_environment(tmp_path, warehouse, PREFECT_HOME=str(tmp_path / "prefect-home"))
    env.pop("PREFECT_API_URL")
    serve = start_serve(env, log)
    try:
        seen = wait_for_line(serve, log, "PREFECT_API_URL=", 300)
        ui = seen.split("UI and runs: ", 1)[1].split()[0]
        api = seen.split("API for prefect commands: PREFECT_API_URL=", 1)[1].split()[0]
        assert api == f"{ui}/api"
        assert httpx.get(ui, timeout=30).status_code == 200  # the UI is served
        with temporary_settings({PREFECT_API_URL: api}):
            flow_run = run_weekly(log, workers=1, timeout=600)
        inspect = [sys.executable, "-m", "prefect", "deployment", "inspect"]
        found = subprocess.run(
            [*inspect, "tsrate-pipeline/tsrate-weekly"],
            env=dict(env, PREFECT_API_URL=api),  # as the docs' command line sets it
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert found.returncode == 0, found.stdout + found.stderr
        assert flow_run.state.is_completed(), (flow_run.state, log.read_text()[-3000:])
        runs = read(warehouse, "select status from raw.runs")
        assert runs["status"].tolist() == ["succeeded"]
        # the scheduled run's lines (Prefect's format, its own process) carry the date
        dated = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \| INFO +\| Flow run '")
        lines = [ln for ln in log.read_text().splitlines() if "| Flow run '" in ln]
        assert lines and all(dated.match(ln) for ln in lines), lines[:3]
        children = descendants(serve.pid)
        assert children, "expected the Prefect server"
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            raise
    assert wait_gone(children, 10.0) == {}, "the Prefect server outlived tsrate serve"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_force_stopped_serve_leaves_no_flow_run_behind(tmp_path, prefect_harness):
    """`tsrate serve` killed outright (a second Ctrl-C, a SIGKILL, the OOM killer) while a
    scheduled run writes the warehouse: the run's process (the Runner's child), its forecast
    workers and dbt go with it, and the warehouse is free for the next writer. While it
    writes, the lock names it by its flow run and deployment, not by Prefect's engine.py
    (its command line), in `tsrate status` and every "busy" error."""
    from prefect.client.orchestration import get_client

    from tsrate.platform.locking import WRITER_LIMIT, writer_status

    warehouse = tmp_path / "live" / "tsrate.duckdb"
    marker = tmp_path / "paused-inference"
    log = tmp_path / "serve.log"
    env = run_environment(
        tmp_path,
        warehouse,
        TSRATE_TEST_PAUSE_AT="inference",
        TSRATE_TEST_PAUSE_FILE=str(marker),
    )
    serve = start_serve(env, log)
    try:
        wait_for_line(serve, log, "serving on the Prefect API", 120)
        flow_run = run_weekly(log, workers=2, timeout=0)
        deadline = time.monotonic() + 300
        while not marker.exists():  # the run holds the warehouse, one partition stored
            assert serve.poll() is None and time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.2)
        run_pid = int(marker.read_text().split()[1])
        holder = writer_status(warehouse)
        assert holder["command"] == (
            f"Prefect flow run '{flow_run.name}' of deployment 'tsrate-pipeline/tsrate-weekly'"
        ), holder
        children = descendants(serve.pid)
        assert run_pid in children and len(children) >= 3, "expected the run and its workers"
        serve.send_signal(signal.SIGKILL)  # serve alone: its process group stays
        serve.wait(timeout=30)
        left = wait_gone(children, 10.0)
    finally:
        with contextlib.suppress(ProcessLookupError):  # whatever is left, for the next tests
            os.killpg(serve.pid, signal.SIGKILL)
        # serve created the writer limit on the session's Prefect API and the killed run
        # still holds its slot there (until the lease expires): later flows must not wait
        with get_client(sync_client=True) as client:
            client.delete_global_concurrency_limit_by_name(WRITER_LIMIT)
    assert left == {}, f"processes outlived the killed tsrate serve: {left}"
    _assert_released(warehouse)
    # left as a killed run leaves it: the next run closes it as interrupted
    assert read(warehouse, "select status from raw.runs")["status"].tolist() == ["running"]


def test_the_build_runs_the_data_tests_dbt_would_and_fails_on_the_same_ones(tmp_path, dbt_target):
    """tsrate's build runs the data tests' SQL itself: the same tests as dbt's own
    ``dbt test``, failing on the same ones, each named; a passing build passes them all."""
    import re

    from tests.integration.builds import forecast_and_build
    from tests.support.warehouses import ingest, small_study
    from tsrate.platform import dbt_runner as dbt

    warehouse, target = tmp_path / "tsrate.duckdb", dbt_target
    ingest(warehouse, ["AAPL", "MSFT"])
    study = small_study(
        study_tickers=["AAPL", "MSFT"], systems=["naive", "biased"], perturbations=["P0", "P1"]
    )
    summary: list[str] = []
    run_id = forecast_and_build(warehouse, study, target, select=SELECT, on_line=summary.append)
    passed = next(line for line in summary if line.startswith("data tests: "))
    n_tests = int(re.search(r"data tests: (\d+) run", passed).group(1))
    assert n_tests > 20 and "FAIL=0" in passed

    def dbt_own_tests() -> tuple[int, set[str]]:
        lines: list[str] = []
        with pytest.raises(dbt.DbtError) if failing else _nothing():
            dbt.run_dbt(
                ["test", "--select", SELECT, "--indirect-selection", "cautious",
                 "--exclude", "resource_type:unit_test"],
                None, warehouse, lines.append, target, env_vars={"TSRATE_RUN_ID": run_id},
            )  # fmt: skip
        total = int(re.search(r"TOTAL=(\d+)", "\n".join(lines)).group(1))
        return total, {m.group(1) for m in map(re.compile(r" FAIL \d+ (\S+) ").search, lines) if m}

    failing = False
    assert dbt_own_tests() == (n_tests, set())

    # a grain break: one forecast row stored twice
    con = duckdb.connect(str(warehouse))
    con.execute("insert into raw.forecasts select * from raw.forecasts limit 1")
    con.close()
    with pytest.raises(dbt.DbtError) as caught:  # rebuilds the models, then fails their tests
        dbt.build(run_id, warehouse, lambda line: None, SELECT, target)
    ours = set(re.findall(r"FAIL (\S+): \d+ failing rows", str(caught.value)))
    assert f"FAIL={len(ours)}" in str(caught.value)
    # released early: the build returns after its models; the file can be read beside the
    # tests (the child holds it read-only); their verdict is the same failure
    assert dbt.build(run_id, warehouse, lambda line: None, SELECT, target, release_early=True) == []
    assert dbt.pending_build(warehouse)
    duckdb.connect(str(warehouse), read_only=True).close()
    with pytest.raises(dbt.DbtError) as early:
        dbt.finish_build(warehouse)
    assert set(re.findall(r"FAIL (\S+): \d+ failing rows", str(early.value))) == ours
    assert not dbt.pending_build(warehouse)
    dbt.finish_build(warehouse)  # nothing pending: nothing to do
    failing = True
    total, dbt_failures = dbt_own_tests()  # dbt's own tests on the same rebuilt tables
    assert total == n_tests and dbt_failures
    assert ours == dbt_failures


def test_the_run_publishes_beside_its_data_tests_and_nothing_when_they_fail(
    tmp_path, monkeypatch, prefect_harness
):
    """The run copies the marts into the next snapshot while the data tests run: the dbt
    child releases the file after the models, and the tests read it read-only. Failing tests
    mark the run build_failed, remove the new files and leave the previous snapshot, its
    Parquet and the file as they were."""
    from flows.pipeline import pipeline_flow
    from tsrate.platform import dbt_runner as dbt
    from tsrate.platform.dbt_child import RELEASED

    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    first = pipeline_flow(overrides=OVERRIDES, workers=1, warehouse=str(warehouse), select=SELECT)
    (build_log,) = (tmp_path / "logs").glob(f"dbt-build-{first}-*.log")
    text = build_log.read_text()
    assert text.index("models, seeds and unit tests") < text.index(RELEASED)
    assert text.index(RELEASED) < text.index("data tests: ")
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    published, parquet = _digest(snapshot), (snapshot.parent / "parquet").resolve()

    con = duckdb.connect(str(warehouse))  # a grain break: one forecast row stored twice
    con.execute("insert into raw.forecasts select * from raw.forecasts limit 1")
    con.close()
    with pytest.raises(Exception, match=r"FAIL \S+: \d+ failing rows") as caught:
        pipeline_flow(
            overrides=OVERRIDES, source="none", workers=1, warehouse=str(warehouse), select=SELECT
        )
    assert isinstance(caught.value, dbt.DbtError)
    runs = read(warehouse, "select run_id, status, message from raw.runs order by started_at")
    assert runs["status"].tolist() == ["succeeded", "build_failed"]
    assert "failing rows" in runs["message"].iloc[-1]
    assert _digest(snapshot) == published  # nothing swapped in
    assert (snapshot.parent / "parquet").resolve() == parquet
    assert not list(snapshot.parent.glob(".*.partial"))  # the copy made beside the tests
    assert not (snapshot.parent / "parquet-runs" / runs["run_id"].iloc[-1]).exists()
    assert dbt._PENDING == {}
    _assert_released(warehouse)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False
