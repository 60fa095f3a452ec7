"""Benchmark: the CPU one snapshot publication costs (``tsrate.platform.publish.publish``).

Publishes a built warehouse (e.g. the one ``bench_run_cpu.py --keep W`` leaves) REPEATS
times into a scratch folder, each time as ``tsrate run`` does (snapshot, then Parquet),
and prints the process's CPU seconds (every thread: DuckDB's too) and wall per call, and
their medians. The warehouse is only read. Run it from the checkout to measure (its
``src`` first on ``PYTHONPATH``); alternate two checkouts on the same warehouse for an A/B.

    .venv/bin/python benchmarks/bench_publish.py WAREHOUSE [--repeats 5] [--no-parquet]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tsrate.platform.publish import publish


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-parquet", action="store_true")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tsrate-publish-"))
    cpu, wall = [], []
    try:
        for i in range(options.repeats):
            c0, w0 = time.process_time(), time.perf_counter()
            publish(
                options.warehouse,
                f"bench-{i}",
                target=scratch / "published" / "tsrate.duckdb",
                parquet=not options.no_parquet,
            )
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            print(f"call {i + 1}: CPU {cpu[-1]:.2f} s, wall {wall[-1]:.2f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"median of {len(cpu)}: CPU {statistics.median(cpu):.2f} s, "
          f"wall {statistics.median(wall):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
