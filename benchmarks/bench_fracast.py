"""fracast on the default study (speed target: under 3 minutes on this CPU).

Forecasts the default study's tickers × windows × perturbations with fracast alone into a
fresh temporary warehouse (bundled skfolio prices) and prints wall time, the summed model
time of the partitions and the machine's load average.

    .venv/bin/python benchmarks/bench_fracast.py [workers]
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

from tsrate.config import Study, load_companies
from tsrate.forecasting import run_forecasts
from tsrate.sources import load_skfolio_sp500
from tsrate.warehouse import connect, store_prices


def main() -> None:
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else (os.cpu_count() or 1)
    study = dataclasses.replace(Study.from_vars(), systems=("fracast",))
    with tempfile.TemporaryDirectory() as folder:
        warehouse = Path(folder) / "tsrate.duckdb"
        with connect(warehouse) as con:
            store_prices(con, load_skfolio_sp500(list(study.tickers)), "skfolio")
            load_before = os.getloadavg()
            started = time.perf_counter()
            summary = run_forecasts(
                con, study, load_companies(), workers=workers, progress=lambda line: None
            )
            wall = time.perf_counter() - started
    print(
        f"fracast, default study ({len(study.tickers)} tickers × P0–P3): "
        f"{summary.computed} partitions, {summary.forecast_rows} rows, wall {wall:.1f} s, "
        f"model time {sum(summary.per_system_seconds.values()):.1f} s, workers {workers}, "
        f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
