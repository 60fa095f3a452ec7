"""Pipeline flow behind ``tsrate run``: ingest (when needed), forecast, build, publish.

``tsrate run`` starts :func:`pipeline_flow` by its entrypoint, as ``prefect.yaml`` names it:
with a Prefect API configured (``PREFECT_API_URL``: ``tsrate serve``'s server, ``prefect server start``, a deployment run) the flows are
orchestrated and recorded there; without one they run in this process as plain functions,
so no temporary Prefect server is started per command (it cost 10-50 s per run and could
outlive a killed run). ``TSRATE_PREFECT=always`` orchestrates anyway (a temporary server,
owned and stopped by tsrate); the Dask path always orchestrates.
Run it alone with ``python flows/pipeline.py``.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from pathlib import Path

from flows.build import build_flow
from flows.forecast import forecast_flow
from flows.ingest import ingest_flow
from tsrate.config import Study, project_dir, warehouse_path
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.locking import warehouse_writer
from tsrate.platform.orchestration import NO_CACHE, flow, task
from tsrate.platform.orchestration import call as _call
from tsrate.platform.progress import phase, run_logger
from tsrate.platform.publish import publish, published_path, published_run_ids
from tsrate.platform.published_paths import check_publish
from tsrate.platform.stages import pause_point
from tsrate.platform.warehouse import (
    STOPPED_AFTER_PUBLICATION,
    close_interrupted_runs,
    connect,
    mark_published_runs_succeeded,
    set_run_status,
)
from tsrate.robustness.forecast.distributed import dask_task_runner, resolve_dask_address
from tsrate.robustness.forecast.execute import finish_run, new_run_id
from tsrate.robustness.forecast.workers import start_early
from tsrate.robustness.report.render import (
    default_report_path,
    render_report,
    write_rendered,
    write_report,
)
from tsrate.robustness.study import StudyCheckError, flow_study, system_problems
from tsrate.robustness.study_inputs import read_seed, stored_state


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, SIGTERM (tsrate.cli turns it into KeyboardInterrupt) or Prefect's own signal."""
    return isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "TerminationSignal"


def _missing_tickers(warehouse: str, tickers: tuple[str, ...]) -> list[str]:
    with connect(warehouse) as con:
        stored = {r[0] for r in con.execute("select distinct ticker from raw.prices").fetchall()}
    return [t for t in tickers if t not in stored]


def _close_interrupted_runs(warehouse: str) -> list[tuple[str, str]]:
    """Mark runs left running, building or publishing by a stopped process ``interrupted``
    (one whose snapshot was swapped in: ``succeeded``, and said here).

    Called under the writer lock, when no other process can be running one.
    """
    published = published_run_ids(published_path(Path(warehouse)))
    with connect(warehouse) as con:
        for run_id in mark_published_runs_succeeded(con, published):
            run_logger().info(STOPPED_AFTER_PUBLICATION.format(run_id))
        return close_interrupted_runs(con)


def _recheck_systems(systems: tuple[str, ...], warehouse: str) -> None:
    """The study's systems checked again under the writer lock, before anything is written:
    the check before the lock cannot read the registered language models while another
    process writes the warehouse, and leaves a well-formed id it does not know to this one
    (a cron run waiting with ``--lock-timeout`` for a registered model). Only ids outside
    the systems seed need the warehouse."""
    seed = {row["system_id"]: row for row in read_seed(project_dir() / "seeds" / "systems.csv")}
    if all(system_id in seed for system_id in systems):
        return
    _, imported, readable = stored_state(Path(warehouse), None, None)
    problems = system_problems(systems, seed, imported, readable or [])
    if problems:
        raise StudyCheckError(problems)


@flow(name="tsrate-pipeline")
def pipeline_flow(
    overrides: dict | None = None,
    source: str = "auto",
    path: str | None = None,
    force: bool = False,
    workers: int | None = None,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
    rate: bool = True,
    select: str | None = None,
    dask_address: str | None = None,
    study: Study | None = None,
) -> str:
    """Run the whole study end to end; return the run id whose marts were built.

    ``study``: the study, typed and checked by the caller (``tsrate run`` checks it once);
    without it, ``dbt_project.yml`` vars + ``overrides`` (a scheduled deployment reads the
    config when it starts). Either way it is made once, here, and the typed study is what
    every step (the forecast flow included) receives.

    ``source``: ``auto`` ingests the bundled skfolio sample only when a study ticker has no
    stored prices; ``skfolio``/``file``/``yahoo`` always ingest first; ``none`` never does.
    A real folder where the published ``parquet`` link belongs is refused first, before the
    lock (:func:`tsrate.platform.published_paths.check_publish`), when the run rates.
    The run holds the warehouse writer lock throughout (``lock_timeout``: seconds to wait
    while another writer holds it; 0: fail at once). ``rate=False`` stops after the
    forecasts (the nightly refresh); ``select`` limits the dbt build (default: every model).
    ``dask_address`` (else env ``TSRATE_DASK_ADDRESS``, else the ``dask_address`` var):
    forecast partitions on that Dask scheduler (``local[:N]``: a LocalCluster) instead of
    the local process pool.
    """
    logger = run_logger()
    study = flow_study(study, overrides)
    warehouse = warehouse or str(warehouse_path())
    if rate:  # pre-flight (a scheduled run too): what would stop the publish at the end
        check_publish(warehouse)
    with warehouse_writer(warehouse, lock_timeout, logger.info):
        _recheck_systems(study.systems, warehouse)
        for run_id, state in _close_interrupted_runs(warehouse):
            logger.info(
                "run %s was stopped while %s: marked interrupted (finished partitions are reused)",
                run_id,
                state,
            )
        return _run_pipeline(
            study, source, path, force, workers, warehouse, rate, select, dask_address
        )


def _run_pipeline(
    study: Study,
    source: str,
    path: str | None,
    force: bool,
    workers: int | None,
    warehouse: str,
    rate: bool,
    select: str | None,
    dask_address: str | None = None,
) -> str:
    # dbt starts and parses the project (seconds) while prices are ingested and the
    # forecasts run; it touches no database until the build phase hands it the run id
    if rate:
        dbt.prepare_build(Path(warehouse), select)
    # likewise the forecast workers' fork server imports their libraries (torch, statsmodels)
    # once, meanwhile, when the run will compute its forecasts here
    if workers != 1 and not resolve_dask_address(dask_address):
        start_early(study.systems, warehouse, force)  # `tsrate run` started it already
    try:
        return _run_steps(
            study, source, path, force, workers, warehouse, rate, select, dask_address
        )
    finally:
        dbt.discard_prepared()  # unused: no rating, or a failure before the build
        dbt.discard_pending()  # a failure between the models and the publication


def _run_steps(
    study: Study,
    source: str,
    path: str | None,
    force: bool,
    workers: int | None,
    warehouse: str,
    rate: bool,
    select: str | None,
    dask_address: str | None = None,
) -> str:
    logger = run_logger()
    started = time.perf_counter()
    if source == "auto":
        missing = _missing_tickers(warehouse, study.tickers)
        if missing:
            logger.info("no stored prices for %s: ingesting the bundled skfolio sample", missing)
            with phase("ingest", logger.info):
                _call(ingest_flow, source="skfolio", warehouse=warehouse)
    elif source != "none":
        with phase("ingest", logger.info):
            _call(
                ingest_flow,
                source=source,
                path=path,
                tickers=list(study.tickers),
                start=study.start.isoformat(),
                end=study.end.isoformat(),
                warehouse=warehouse,
            )
    run_id = new_run_id()
    address = resolve_dask_address(dask_address)
    forecast = forecast_flow
    if address:
        logger.info("forecasting on the Dask cluster at %s", address)
        forecast = forecast_flow.with_options(task_runner=dask_task_runner(address))
    with phase("forecast", logger.info):
        _call(
            forecast,
            study=study,
            force=force,
            workers=workers,
            warehouse=warehouse,
            run_id=run_id,
        )
    if not rate:
        logger.info("run %s forecasted; ratings are left for the next full run", run_id)
        return run_id
    with connect(warehouse) as con:
        set_run_status(con, run_id, "building")
    try:
        with phase("build (dbt)", logger.info):
            # the data tests run read-only while publish copies the marts (publish_task
            # waits for their verdict before it writes the warehouse or swaps anything in)
            # dbt's unit tests check the SQL on fixed inputs: tsrate build and CI run them
            _call(build_flow, run_id=run_id, warehouse=warehouse, select=select,
                  release_early=True, unit_tests=False)  # fmt: skip
    except BaseException as exc:
        if not _interrupted(exc):  # stopped: left `building`, as a kill would; the next run
            with connect(warehouse) as con:  # marks it interrupted
                finish_run(con, run_id, "build_failed", str(exc)[-2000:])
        raise
    with phase("publish", logger.info):
        # the report (it needs every rating mart) is rendered beside the Parquet export
        published = _call(publish_task, warehouse, run_id, report=select is None)
    rendered = _RENDERED.pop(run_id, None)
    pause_point("published")  # test hook: swapped in, not yet marked succeeded
    with connect(warehouse) as con:
        finish_run(con, run_id, "succeeded")
    if select is None:
        with phase("report", logger.info):
            path = (
                rendered.write(Path(published))
                if rendered is not None
                else write_report(Path(published)).path
            )
            logger.info("report written to %s", path)
    else:
        logger.info("partial build (--select %s): no report written", select)
    logger.info(
        "run %s succeeded in %.1fs; readers and BI tools use the snapshot %s",
        run_id,
        time.perf_counter() - started,
        published,
    )
    return run_id


class _ReportBeside:
    """The run's report, rendered in a thread from the new snapshot (read-only) while its
    Parquet files are written and the data tests finish; written once the run succeeded.
    A rendering error is raised where the report is written, as a serial render's was."""

    def __init__(self, name: str) -> None:
        self.name = name  # the snapshot's file name, as the page shows it
        self.future: concurrent.futures.Future = concurrent.futures.Future()

    def start(self, staging: Path) -> Callable[[], None]:
        def render() -> None:
            try:
                self.future.set_result(render_report(staging, self.name))
            except BaseException as exc:  # noqa: BLE001 - raised by write()
                self.future.set_exception(exc)

        threading.Thread(target=render, name="tsrate-report", daemon=True).start()
        return lambda: concurrent.futures.wait([self.future])

    def write(self, snapshot: Path) -> Path:
        run_id, report = self.future.result()
        return write_rendered(run_id, report, default_report_path(snapshot)).path


#: reports rendered beside their run's publication (publish_task), by run id
_RENDERED: dict[str, _ReportBeside] = {}


class _BuildFailed(Exception):
    """The build's data tests failed while the marts were being copied."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


@task(cache_policy=NO_CACHE)  # writes files and the warehouse: never cached
def publish_task(warehouse: str, run_id: str, report: bool = False) -> str:
    """Copy marts and seeds into the read-only snapshot and Parquet, swapped in atomically.

    When the build released the warehouse before its data tests
    (:func:`tsrate.platform.dbt_runner.build` with ``release_early``), the copy runs beside
    them and their verdict is awaited before the run's status is written and anything is
    swapped in: failing tests mark the run ``build_failed`` and publish nothing.
    ``report``: render the run's report from the new snapshot beside the Parquet export
    (the pipeline writes it once the run has succeeded).
    """
    logger = run_logger()
    started = time.perf_counter()

    def tests_passed() -> None:
        """Wait for the build's data tests (raise when they failed); the run is publishing."""
        try:
            dbt.finish_build(Path(warehouse))
        except dbt.DbtError as exc:
            raise _BuildFailed(exc) from exc
        with connect(warehouse) as con:
            set_run_status(con, run_id, "publishing")

    pending = dbt.pending_build(Path(warehouse))
    if not pending:
        tests_passed()
    try:
        beside = _ReportBeside(published_path(Path(warehouse)).name) if report else None
        result = publish(
            Path(warehouse),
            run_id,
            before_swap=tests_passed if pending else None,
            beside=beside.start if beside is not None else None,
        )
        if beside is not None:
            _RENDERED[run_id] = beside
    except _BuildFailed as failed:
        with connect(warehouse) as con:
            finish_run(con, run_id, "build_failed", str(failed.error)[-2000:])
        raise failed.error from None
    except BaseException as exc:
        dbt.finish_build(Path(warehouse), kill=True)  # no verdict needed: the run failed
        if not _interrupted(exc):  # stopped: left as it was for the next run to close
            with connect(warehouse) as con:
                finish_run(con, run_id, "publish_failed", str(exc)[-2000:])
        raise
    logger.info(
        "published %d tables (%d rows) to %s and Parquet %s in %.1fs",
        len(result.row_counts),
        sum(result.row_counts.values()),
        result.path,
        result.parquet_path,
        time.perf_counter() - started,
    )
    return str(result.path)


if __name__ == "__main__":
    pipeline_flow()
