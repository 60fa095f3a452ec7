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


@flow(name="tsrate-build")
def build_flow(
    run_id: str | None = None, warehouse: str | None = None, select: str | None = None
) -> None:
    """Build and test every dbt model for ``run_id`` (default: the latest forecasted run)."""
    logger = get_run_logger()
    started = time.perf_counter()
    dbt.build(
        run_id=run_id, warehouse=warehouse or warehouse_path(), on_line=logger.info, select=select
    )
    logger.info("dbt build finished in %.1fs", time.perf_counter() - started)


if __name__ == "__main__":
    build_flow(sys.argv[1] if len(sys.argv) > 1 else None)
