"""The run benchmark's model compute: forecast CPU seconds over the cores plus the Python
models' own time, read from the run's log; the workers' setup is not model compute."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_default_run  # noqa: E402

# as flows/forecast.py and the dbt child print them
LOG = (
    "2026-12-04 04:04:59,100 INFO tsrate.run: run r1 forecast: 144 partitions (0 reused, "
    "144 computed, 440640 rows) in 49.6s [arima 53.1s, fracast 32.3s, naive 5.4s]; "
    "forecast CPU [arima 50.0s, fracast 24.0s, naive 5.0s]; "
    "worker setup [arima 2.5s, fracast 7.5s, naive 0.1s]\n"
    "2026-12-04 04:05:09,642 INFO tsrate.run: built 1 exposures, 65 models, 7 seeds "
    "(0 failed; Python models' own time 7.3s)\n"
)


def test_model_compute_is_the_forecast_cpu_over_the_cores_and_the_python_models():
    floor, python = bench_default_run.model_compute(LOG)
    assert floor == pytest.approx((50.0 + 24.0 + 5.0) / (os.cpu_count() or 1))
    assert python == pytest.approx(7.3)
    assert bench_default_run.worker_setup(LOG) == pytest.approx(10.1)


def test_a_log_without_the_lines_gives_no_compute():
    assert bench_default_run.model_compute("nothing computed") == (0.0, 0.0)
    assert bench_default_run.worker_setup("") == 0.0
