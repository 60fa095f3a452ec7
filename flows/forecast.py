"""Forecast flow: run every system of the study on clean and perturbed windows.

Finished (system × ticker × perturbation) partitions are reused unless ``force``; each new
one lands in one transaction, so a killed run resumes where it stopped.
By default partitions run in a local process pool. Run with a ``DaskTaskRunner``
(``forecast_flow.with_options(task_runner=tsrate.robustness.forecast.distributed.dask_task_runner(address))``,
which ``tsrate run --dask ADDRESS`` does) and each partition is a Prefect task on the Dask
cluster that writes a Parquet file, loaded into the warehouse as it finishes.
Run it alone with ``python flows/forecast.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pandas as pd

from tsrate.config import Study, warehouse_path
from tsrate.platform.locking import warehouse_writer
from tsrate.platform.orchestration import NO_CACHE, flow, flow_run_context, task
from tsrate.platform.progress import run_logger
from tsrate.platform.warehouse import connect
from tsrate.robustness.companies import study_companies
from tsrate.robustness.forecast.distributed import (
    forecast_partition_file,
    partition_folder,
    read_partition_file,
)
from tsrate.robustness.forecast.execute import (
    PartitionExecutor,
    RunSummary,
    finish_run,
    new_run_id,
    run_forecasts,
)
from tsrate.robustness.forecast.plan import Partition
from tsrate.robustness.study import flow_study
from tsrate.systems.base import ForecastBatch
from tsrate.systems.registered import Registration, from_environment

#: Partitions submitted to the task runner at a time (Dask or Prefect's own). Each holds its
#: batch until stored; a wave this size keeps a large cluster busy while a 500-ticker x
#: 10-year study's batches never sit in memory all at once.
WAVE = 512


# Not cached by Prefect: the partition file named by its input_key is the cache (a rerun
# finds it, or finds the partition stored and never submits it), and results stay out of
# Prefect's result storage.
@task(name="forecast-partition", cache_policy=NO_CACHE)
def forecast_partition(
    study_json: str,
    companies: pd.DataFrame,
    partition: Partition,
    batch: ForecastBatch,
    folder: str,
    reuse_file: bool,
    registered: tuple[Registration, ...] = (),
) -> str:
    """Forecast one partition on a worker into ``folder/<input_key>.parquet``; return the path.
    ``registered``: the run's registered language models (the worker builds with them)."""
    return forecast_partition_file(
        study_json, companies, partition, batch, folder, reuse_file, registered
    )


def _task_runner_executor(folder: str, reuse_files: bool) -> PartitionExecutor:
    """Submit each partition to the flow's task runner; yield results as files land."""

    def execute(
        study_json: str,
        companies: pd.DataFrame,
        todo: list[Partition],
        batches: Mapping[Partition, ForecastBatch],
    ) -> Iterator[tuple[Partition, tuple]]:
        from prefect.futures import as_completed  # orchestrated: Prefect is loaded

        # the run's registered language models (run_forecasts exports them while it runs)
        registered = tuple(from_environment().values())
        # in waves, so that only a wave's batches are held at once (not the whole study's)
        for start in range(0, len(todo), WAVE):
            submitted = {}
            for partition in todo[start : start + WAVE]:
                future = forecast_partition.submit(
                    study_json,
                    companies,
                    partition,
                    batches[partition],
                    folder,
                    reuse_files,
                    registered,
                )
                submitted[future.task_run_id] = (future, partition)
            for future in as_completed([future for future, _ in submitted.values()]):
                partition = submitted[future.task_run_id][1]
                yield partition, read_partition_file(future.result(), partition, batches[partition])

    return execute


def _on_dask() -> bool:
    context = flow_run_context()
    return context is not None and type(context.task_runner).__name__ == "DaskTaskRunner"


@flow(name="tsrate-forecast")
def forecast_flow(
    overrides: dict | None = None,
    force: bool = False,
    workers: int | None = None,
    warehouse: str | None = None,
    run_id: str | None = None,
    lock_timeout: float = 0.0,
    study: Study | None = None,
) -> RunSummary:
    """Forecast the study; returns the run summary. ``study``: the typed study (the pipeline
    flow passes the one it made); without it, ``dbt_project.yml`` vars + ``overrides``.

    Holds the warehouse writer lock (``lock_timeout``: seconds to wait for it; 0: fail).
    """
    logger = run_logger()
    study = flow_study(study, overrides)
    warehouse = warehouse or str(warehouse_path())
    run_id = run_id or new_run_id()
    executor = None
    if _on_dask():
        folder = partition_folder(warehouse)
        logger.info("forecast partitions run on Dask; partition files land in %s", folder)
        executor = _task_runner_executor(str(folder), reuse_files=not force)
    with warehouse_writer(warehouse, lock_timeout, logger.info), connect(warehouse) as con:
        try:
            summary = run_forecasts(
                con,
                study,
                study_companies(con),  # the seed + stored metadata (tsrate.robustness.companies)
                run_id=run_id,
                force=force,
                workers=workers,
                progress=logger.info,
                executor=executor,
            )
        except BaseException as exc:
            stopped = isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == (
                "TerminationSignal"
            )  # Ctrl-C or SIGTERM: left `running`, as a kill would; the next run closes it
            if (
                not stopped
                and con.execute("select 1 from raw.runs where run_id = ?", [run_id]).fetchone()
            ):
                finish_run(con, run_id, "failed", f"forecast: {exc}"[:2000])
            raise
        finish_run(con, run_id, "forecasted")

    def seconds(per_system: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.1f}s" for k, v in sorted(per_system.items())) or "none"

    # model time (wall) per system; its CPU time; the workers' one-time setup (imports, weights)
    logger.info(
        "run %s forecast: %d partitions (%d reused, %d computed, %d rows) in %.1fs [%s]; "
        "forecast CPU [%s]; worker setup [%s]",
        run_id,
        summary.partitions,
        summary.reused,
        summary.computed,
        summary.forecast_rows,
        summary.seconds,
        seconds(summary.per_system_seconds) if summary.computed else "nothing computed",
        seconds(summary.per_system_cpu_seconds),
        seconds(summary.per_system_setup_seconds),
    )
    for line in summary.describe_problems():  # skipped systems, windows without a forecast
        logger.warning("run %s: %s", run_id, line)
    return summary


if __name__ == "__main__":
    forecast_flow()
