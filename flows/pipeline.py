"""Pipeline flow behind ``tsrate run``: ingest (when needed), forecast, build, publish.

Run it alone with ``python flows/pipeline.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, get_run_logger, task

from flows.build import build_flow
from flows.forecast import forecast_flow
from flows.ingest import ingest_flow
from tsrate.config import Study, warehouse_path
from tsrate.forecasting import finish_run, new_run_id
from tsrate.publish import publish
from tsrate.report import write_report
from tsrate.warehouse import connect


def _missing_tickers(warehouse: str, tickers: tuple[str, ...]) -> list[str]:
    with connect(warehouse) as con:
        stored = {r[0] for r in con.execute("select distinct ticker from raw.prices").fetchall()}
    return [t for t in tickers if t not in stored]


@flow(name="tsrate-pipeline")
def pipeline_flow(
    overrides: dict | None = None,
    source: str = "auto",
    path: str | None = None,
    force: bool = False,
    workers: int | None = None,
    warehouse: str | None = None,
) -> str:
    """Run the whole study end to end; return the run id whose marts were built.

    ``source``: ``auto`` ingests the bundled skfolio sample only when a study ticker has no
    stored prices; ``skfolio``/``file``/``yahoo`` always ingest first; ``none`` never does.
    """
    logger = get_run_logger()
    started = time.perf_counter()
    study = Study.from_vars(overrides)
    warehouse = warehouse or str(warehouse_path())
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
    forecast_flow(
        overrides=overrides, force=force, workers=workers, warehouse=warehouse, run_id=run_id
    )
    try:
        build_flow(run_id=run_id, warehouse=warehouse)
    except BaseException as exc:
        with connect(warehouse) as con:
            finish_run(con, run_id, "build_failed", str(exc)[-2000:])
        raise
    published = publish_task(warehouse, run_id)
    with connect(warehouse) as con:
        finish_run(con, run_id, "succeeded")
    logger.info("report written to %s", write_report(Path(published)).path)
    logger.info(
        "run %s succeeded in %.1fs; readers and BI tools use the snapshot %s",
        run_id,
        time.perf_counter() - started,
        published,
    )
    return run_id


@task
def publish_task(warehouse: str, run_id: str) -> str:
    """Copy marts and seeds into the read-only snapshot, swapped in atomically."""
    logger = get_run_logger()
    started = time.perf_counter()
    try:
        result = publish(Path(warehouse), run_id)
    except BaseException as exc:
        with connect(warehouse) as con:
            finish_run(con, run_id, "publish_failed", str(exc)[-2000:])
        raise
    logger.info(
        "published %d tables (%d rows) to %s in %.1fs",
        len(result.row_counts),
        sum(result.row_counts.values()),
        result.path,
        time.perf_counter() - started,
    )
    return str(result.path)


if __name__ == "__main__":
    pipeline_flow()
