"""Pure helpers of benchmarks/bench_scale.py: size parsing, stage log parsing, linear fit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_scale  # noqa: E402

# Lines as flows/ingest.py, flows/forecast.py, flows/build.py and flows/pipeline.py print them.
LOG = [
    (20.0, "16:37:20.101 | INFO    | Flow run 'x' - ingested 2520 rows for 10 tickers from "
     "/tmp/p.parquet into /tmp/w.duckdb in 0.3s"),
    (21.0, "16:37:21.000 | INFO    | Flow run 'x' - dbt build finished in 99.0s"),
    (26.5, "16:37:26.500 | INFO    | Flow run 'y' - run r1 forecast: 120 partitions "
     "(0 reused, 120 computed, 367200 rows) in 5.5s [biased 1.0s, naive 1.2s]"),
    (66.4, "16:38:06.400 | INFO    | Flow run 'z' - dbt build finished in 39.9s"),
    (67.7, "16:38:07.700 | INFO    | Task run 'publish_task-0' - published 30 tables "
     "(541112 rows) to /tmp/w/published/tsrate.duckdb and Parquet /tmp/w/p in 1.3s"),
    (68.0, "16:38:08.000 | INFO    | Flow run 'x' - run r1 succeeded in 48.0s; readers ..."),
]  # fmt: skip


def test_parse_stage_lines_reads_seconds_rows_and_windows():
    stages = bench_scale.parse_stage_lines(LOG)
    assert set(stages) == {"ingest", "inference", "build", "publish", "pipeline"}
    assert stages["ingest"]["rows"] == 2520 and stages["ingest"]["tickers"] == 10
    assert stages["inference"]["rows"] == 367200
    assert stages["inference"]["computed"] == 120
    assert stages["inference"]["seconds"] == pytest.approx(5.5)
    assert stages["inference"]["start"] == pytest.approx(21.0)
    # the last end-of-build line wins
    assert stages["build"]["seconds"] == pytest.approx(39.9)
    assert stages["build"]["start"] == pytest.approx(66.4 - 39.9)
    assert stages["publish"]["rows"] == 541112
    assert stages["pipeline"]["seconds"] == pytest.approx(48.0)


def test_parse_stage_lines_ignores_other_lines():
    assert bench_scale.parse_stage_lines([(1.0, "ingested some rows somewhere")]) == {}


def test_linear_fit_recovers_a_line_and_scores_noise():
    slope, intercept, r2 = bench_scale.linear_fit([0.5, 1.0, 2.0], [60.0, 110.0, 210.0])
    assert slope == pytest.approx(100.0)
    assert intercept == pytest.approx(10.0)
    assert r2 == pytest.approx(1.0)
    _, _, noisy = bench_scale.linear_fit([1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0])
    assert noisy == pytest.approx(0.64)
    with pytest.raises(ValueError, match="two distinct"):
        bench_scale.linear_fit([1.0, 1.0], [2.0, 3.0])


def test_parse_size_and_peak_between():
    assert bench_scale.parse_size("500x10") == (500, 10)
    with pytest.raises(ValueError, match="TICKERSxYEARS"):
        bench_scale.parse_size("500")
    samples = [(0.0, 100.0), (1.0, 300.0), (2.0, 200.0), (5.0, 900.0)]
    assert bench_scale.peak_between(samples, 1.6, 2.2) == 200.0
    assert bench_scale.peak_between(samples, 0.9, 2.0) == 300.0
