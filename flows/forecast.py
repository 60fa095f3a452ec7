"""Forecast flow: run every system of the study on clean and perturbed windows.

Finished (system × ticker × perturbation) partitions are reused unless ``force``; each new
one lands in one transaction, so a killed run resumes where it stopped.
Run it alone with ``python flows/forecast.py``.
"""

from __future__ import annotations

from prefect import flow, get_run_logger

from tsrate.config import Study, load_companies, warehouse_path
from tsrate.forecasting import RunSummary, finish_run, new_run_id, run_forecasts
from tsrate.locking import warehouse_writer
from tsrate.warehouse import connect


@flow(name="tsrate-forecast")
def forecast_flow(
    overrides: dict | None = None,
    force: bool = False,
    workers: int | None = None,
    warehouse: str | None = None,
    run_id: str | None = None,
    lock_timeout: float = 0.0,
) -> RunSummary:
    """Forecast the study (``dbt_project.yml`` vars + ``overrides``); returns the run summary.

    Holds the warehouse writer lock (``lock_timeout``: seconds to wait for it; 0: fail).
    """
    logger = get_run_logger()
    study = Study.from_vars(overrides)
    warehouse = warehouse or str(warehouse_path())
    run_id = run_id or new_run_id()
    with warehouse_writer(warehouse, lock_timeout, logger.info), connect(warehouse) as con:
        try:
            summary = run_forecasts(
                con,
                study,
                load_companies(),
                run_id=run_id,
                force=force,
                workers=workers,
                progress=logger.info,
            )
        except BaseException as exc:
            if con.execute("select 1 from raw.runs where run_id = ?", [run_id]).fetchone():
                finish_run(con, run_id, "failed", f"forecast: {exc}"[:2000])
            raise
        finish_run(con, run_id, "forecasted")
    per_system = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(summary.per_system_seconds.items()))
    logger.info(
        "run %s forecast: %d partitions (%d reused, %d computed, %d rows) in %.1fs [%s]",
        run_id,
        summary.partitions,
        summary.reused,
        summary.computed,
        summary.forecast_rows,
        summary.seconds,
        per_system or "nothing computed",
    )
    return summary


if __name__ == "__main__":
    forecast_flow()
