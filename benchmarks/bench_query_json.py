"""Benchmark: `tsrate query --format json` against pandas' JSON writer on the same frame.

13 columns (10 floats, 2 texts, 1 integer), 1,000 and 100,000 rows, median of 5 each. The
json format writes 15 significant digits per number (pandas' ``double_precision`` counts
decimal places, which the format used to rely on).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_query_json.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from tsrate.platform.query import QueryResult, format_result


def median_seconds(work: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (1_000, 100_000):
        frame = pd.DataFrame({f"x{i}": rng.normal(size=n) for i in range(10)})
        frame["ticker"], frame["perturbation_id"], frame["k"] = "AAPL", "P1", np.arange(n)
        result = QueryResult(frame, False, n, Path("snapshot.duckdb"))
        ours = median_seconds(lambda r=result: format_result(r, "json"))
        theirs = median_seconds(lambda f=frame: f.to_json(orient="records", double_precision=15))
        print(
            f"{n:,} rows: tsrate json {ours * 1000:.1f} ms, pandas to_json "
            f"{theirs * 1000:.1f} ms, ratio {ours / theirs:.1f}"
        )


if __name__ == "__main__":
    main()
