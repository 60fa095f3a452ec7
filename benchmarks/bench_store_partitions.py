"""The run's parent process storing forecasts: ``store_partitions`` on the default study's shape.

144 partitions (6 tickers × 6 systems × P0–P3) of 153 windows × 20 steps, the four systems
with quantile forecasts giving 9 levels, stored into a fresh DuckDB file ``--per`` partitions
per transaction (the run stores what has finished together: 1–3 at a time on 2 workers).
Prints the parent's wall and CPU seconds, median of ``--repeats``; the CPU is what the
forecast workers lose to the parent on a machine with as many workers as cores.

    .venv/bin/python benchmarks/bench_store_partitions.py --per 2 --repeats 5
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.forecast.plan import Partition
from tsrate.robustness.forecast.store import FinishedPartition, store_partitions
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts

SYSTEMS = ("arima", "fracast", "naive", "seasonal_naive", "random", "biased")
WITH_QUANTILES = {"arima", "fracast", "naive", "seasonal_naive"}


def partitions(windows: int = 153, horizon: int = 20) -> list[FinishedPartition]:
    rng = np.random.default_rng(0)
    dates = np.arange(np.datetime64("2022-01-03"), np.datetime64("2022-01-03") + windows)
    finished = []
    for ticker in ("AAPL", "MSFT", "PFE", "MRK", "JPM", "BAC"):
        for system in SYSTEMS:
            for perturbation in ("P0", "P1", "P2", "P3"):
                key = f"{system}-{ticker}-{perturbation}"
                point = rng.normal(100, 1, (windows, horizon))
                output = point
                if system in WITH_QUANTILES:
                    spread = np.sort(rng.normal(0, 1, (windows, horizon, len(QUANTILE_LEVELS))))
                    output = QuantileForecasts(point, point[:, :, None] + spread)
                partition = Partition(system, ticker, perturbation, key)
                finished.append(FinishedPartition(partition, key, dates, output, 1.0))
    return finished


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per", type=int, default=2, help="partitions per transaction")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    finished = partitions()
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            path = Path(folder) / f"w{repeat}.duckdb"
            con = duckdb.connect(str(path))
            create_raw_tables(con)
            wall, cpu = time.perf_counter(), time.process_time()
            for start in range(0, len(finished), args.per):
                store_partitions(con, "run-1", finished[start : start + args.per])
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            rows = con.execute("select count(*) from raw.forecasts").fetchone()[0]
            con.close()
    print(
        f"{len(finished)} partitions ({rows} forecast rows), {args.per} per transaction: "
        f"wall {statistics.median(walls):.2f}s, CPU {statistics.median(cpus):.2f}s "
        f"(medians of {args.repeats}; load {os.getloadavg()[0]:.2f}; "
        f"{platform.machine()}, {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
