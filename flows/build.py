"""Build flow: ``dbt build`` (seeds, staging, intermediate, marts, tests) for one run.

dbt runs in a child process, so the DuckDB file is released when it ends.
Run it alone with ``python flows/build.py [RUN_ID]``.
"""

from __future__ import annotations

import sys
import time

from prefect import flow, get_run_logger

from tsrate import dbt
from tsrate.config import warehouse_path
from tsrate.locking import warehouse_writer
from tsrate.testhooks import pause_point, pause_requested


@flow(name="tsrate-build")
def build_flow(
    run_id: str | None = None,
    warehouse: str | None = None,
    select: str | None = None,
    lock_timeout: float = 0.0,
) -> None:
    """Build and test every dbt model for ``run_id`` (default: the latest forecasted run).

    Holds the warehouse writer lock (``lock_timeout``: seconds to wait for it; 0: fail).
    """
    logger = get_run_logger()
    started = time.perf_counter()
    warehouse = warehouse or str(warehouse_path())
    on_line = logger.info
    if pause_requested("build"):  # test hook: stop mid-build, after the first finished model

        def on_line(line: str) -> None:
            logger.info(line)
            if " OK created " in line:
                pause_point("build", freeze_children=True)

    with warehouse_writer(warehouse, lock_timeout, logger.info):
        dbt.build(run_id=run_id, warehouse=warehouse, on_line=on_line, select=select)
    logger.info("dbt build finished in %.1fs", time.perf_counter() - started)


if __name__ == "__main__":
    build_flow(sys.argv[1] if len(sys.argv) > 1 else None)
