"""Benchmark: the default `tsrate run` from an empty warehouse (the README's main job).

Runs `tsrate run` REPEATS times in a child process, each on a fresh temporary warehouse
(so every forecast partition is computed; nothing is reused), and reports the median wall
time and the peak resident memory of the largest process (the children's max RSS).
The first repeat also pays Prefect's first start; the median hides it.

    .venv/bin/python benchmarks/bench_default_run.py [REPEATS]
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(workdir: Path) -> tuple[float, float, str]:
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(workdir / "tsrate.duckdb"),
        DBT_TARGET_PATH=str(workdir / "target"),
    )
    started = time.perf_counter()
    result = subprocess.run(
        [str(Path(sys.executable).parent / "tsrate"), "run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"tsrate run failed:\n{result.stderr[-3000:]}")
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    forecast_line = next((line for line in result.stderr.splitlines() if " forecast: " in line), "")
    return wall, peak_mib, forecast_line.split("INFO", 1)[-1].strip()


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    walls, peaks = [], []
    for index in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            wall, peak, detail = one_run(Path(tmp))
        walls.append(wall)
        peaks.append(peak)
        print(
            f"run {index + 1}/{repeats}: {wall:.1f}s wall, peak RSS {peak:.0f} MiB; {detail}",
            flush=True,
        )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(
        f"median wall {statistics.median(walls):.1f}s (min {min(walls):.1f}s, max {max(walls):.1f}s); "
        f"peak RSS {max(peaks):.0f} MiB"
    )


if __name__ == "__main__":
    main()
