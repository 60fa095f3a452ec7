"""Build flow: tsrate's dbt build (seeds, models, unit and data tests) for one run.

dbt runs in a child process, so the DuckDB file is released when it ends; its full log goes
to ``<warehouse folder>/logs/`` and a summary (counts, failures by name) to the run's log.
Run it alone with ``python flows/build.py [RUN_ID]``.
"""

from __future__ import annotations

import sys
import time

from tsrate.config import warehouse_path
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.locking import warehouse_writer
from tsrate.platform.orchestration import flow
from tsrate.platform.progress import run_logger


@flow(name="tsrate-build")
def build_flow(
    run_id: str | None = None,
    warehouse: str | None = None,
    select: str | None = None,
    lock_timeout: float = 0.0,
    release_early: bool = False,
    unit_tests: bool = True,
) -> None:
    """Build and test every dbt model for ``run_id`` (default: the latest forecasted run).

    Holds the warehouse writer lock (``lock_timeout``: seconds to wait for it; 0: fail).
    ``release_early``: return once the models are built, the data tests still running
    read-only in dbt's child; the caller (the pipeline, which holds the lock throughout)
    gets their verdict from :func:`tsrate.platform.dbt_runner.finish_build` before it
    writes the warehouse or publishes. ``unit_tests`` False: a full build leaves dbt's unit
    tests to ``tsrate build`` and CI (:func:`tsrate.platform.dbt_runner.build`).
    """
    logger = run_logger()
    started = time.perf_counter()
    warehouse = warehouse or str(warehouse_path())
    with warehouse_writer(warehouse, lock_timeout, logger.info):
        dbt.build(
            run_id=run_id,
            warehouse=warehouse,
            on_line=logger.info,
            select=select,
            release_early=release_early,
            unit_tests=unit_tests,
        )
    if release_early and dbt.pending_build(warehouse):
        logger.info("dbt models built in %.1fs; data tests running", time.perf_counter() - started)
    else:
        logger.info("dbt build finished in %.1fs", time.perf_counter() - started)


if __name__ == "__main__":
    build_flow(sys.argv[1] if len(sys.argv) > 1 else None)
