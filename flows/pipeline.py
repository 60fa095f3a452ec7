"""Pipeline flow behind ``tsrate run``: ingest (when needed), forecast, build, publish.

Run it alone with ``python flows/pipeline.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.build import build_flow
from flows.forecast import forecast_flow
from flows.ingest import ingest_flow
from tsrate.config import Study, warehouse_path
from tsrate.distributed import dask_task_runner, resolve_dask_address
from tsrate.forecasting import finish_run, new_run_id
from tsrate.locking import warehouse_writer
from tsrate.publish import publish
from tsrate.report import write_report
from tsrate.warehouse import connect


def _missing_tickers(warehouse: str, tickers: tuple[str, ...]) -> list[str]:
    with connect(warehouse) as con:
        stored = {r[0] for r in con.execute("select distinct ticker from raw.prices").fetchall()}
    return [t for t in tickers if t not in stored]


def _close_interrupted_runs(warehouse: str) -> list[str]:
    """Mark runs left ``running`` by a killed process as ``interrupted``.

    Called under the writer lock, when no other process can be running one.
    """
    with connect(warehouse) as con:
        stale = [
            row[0]
            for row in con.execute(
                "select run_id from raw.runs where status = 'running' order by started_at"
            ).fetchall()
        ]
        for run_id in stale:
            finish_run(con, run_id, "interrupted", "the process running it stopped (killed?)")
    return stale


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
) -> str:
    """Run the whole study end to end; return the run id whose marts were built.

    ``source``: ``auto`` ingests the bundled skfolio sample only when a study ticker has no
    stored prices; ``skfolio``/``file``/``yahoo`` always ingest first; ``none`` never does.
    The run holds the warehouse writer lock throughout (``lock_timeout``: seconds to wait
    while another writer holds it; 0: fail at once). ``rate=False`` stops after the
    forecasts (the nightly refresh); ``select`` limits the dbt build (default: every model).
    ``dask_address`` (else env ``TSRATE_DASK_ADDRESS``, else the ``dask_address`` var):
    forecast partitions on that Dask scheduler (``local[:N]``: a LocalCluster) instead of
    the local process pool.
    """
    logger = get_run_logger()
    warehouse = warehouse or str(warehouse_path())
    with warehouse_writer(warehouse, lock_timeout, logger.info):
        interrupted = _close_interrupted_runs(warehouse)
        if interrupted:
            logger.info(
                "runs %s were interrupted earlier; finished partitions are reused", interrupted
            )
        return _run_pipeline(
            overrides, source, path, force, workers, warehouse, rate, select, dask_address
        )


def _run_pipeline(
    overrides: dict | None,
    source: str,
    path: str | None,
    force: bool,
    workers: int | None,
    warehouse: str,
    rate: bool,
    select: str | None,
    dask_address: str | None = None,
) -> str:
    logger = get_run_logger()
    started = time.perf_counter()
    study = Study.from_vars(overrides)
    if source == "auto":
        missing = _missing_tickers(warehouse, study.tickers)
        if missing:
            logger.info("no stored prices for %s: ingesting the bundled skfolio sample", missing)
            ingest_flow(source="skfolio", warehouse=warehouse)
    elif source != "none":
        ingest_flow(
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
    forecast(overrides=overrides, force=force, workers=workers, warehouse=warehouse, run_id=run_id)
    if not rate:
        logger.info("run %s forecasted; ratings are left for the next full run", run_id)
        return run_id
    try:
        build_flow(run_id=run_id, warehouse=warehouse, select=select)
    except BaseException as exc:
        with connect(warehouse) as con:
            finish_run(con, run_id, "build_failed", str(exc)[-2000:])
        raise
    published = publish_task(warehouse, run_id)
    with connect(warehouse) as con:
        finish_run(con, run_id, "succeeded")
    if select is None:  # the report needs every rating mart
        logger.info("report written to %s", write_report(Path(published)).path)
    else:
        logger.info("partial build (--select %s): no report written", select)
    logger.info(
        "run %s succeeded in %.1fs; readers and BI tools use the snapshot %s",
        run_id,
        time.perf_counter() - started,
        published,
    )
    return run_id


@task(cache_policy=NO_CACHE)  # writes files and the warehouse: never cached
def publish_task(warehouse: str, run_id: str) -> str:
    """Copy marts and seeds into the read-only snapshot and Parquet, swapped in atomically."""
    logger = get_run_logger()
    started = time.perf_counter()
    try:
        result = publish(Path(warehouse), run_id)
    except BaseException as exc:
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
