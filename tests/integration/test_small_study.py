"""The issue's small study through the real command line (issue 30 item 3):
`tsrate run --tickers KO,XOM --start 2022-07-01 --end 2022-12-28 --stride 3 --systems
naive,random` (9 windows per ticker, 16 treatment draws) builds and publishes; the study
check warns, in under 2 s, that some draws will leave an arm empty, and the marts count the
draws left out (perturbation_effects: n_draws + n_draws_left_out = the draws of every row)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import duckdb
import pytest

from tsrate.config import project_dir
from tsrate.robustness.study import check_study

pytestmark = pytest.mark.slow

ARGS = ["--tickers", "KO,XOM", "--start", "2022-07-01", "--end", "2022-12-28",
        "--stride", "3", "--systems", "naive,random"]  # fmt: skip
OVERRIDES = {
    "study_tickers": ["KO", "XOM"],
    "study_start": "2022-07-01",
    "study_end": "2022-12-28",
    "stride": 3,
    "systems": ["naive", "random"],
}


def test_the_study_check_warns_in_under_two_seconds(tmp_path):
    started = time.perf_counter()
    warnings: list[str] = []
    problems = check_study(OVERRIDES, warehouse=tmp_path / "none.duckdb", warnings=warnings)
    elapsed = time.perf_counter() - started
    assert problems == []
    assert len(warnings) == 1 and "n_draws_left_out" in warnings[0]
    assert elapsed < 2.0


def test_the_small_study_builds_and_publishes_with_its_empty_arm_draws_counted(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "run", *ARGS],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)),
        cwd=project_dir(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # the study's warning is a line of the run's log (stderr, time-stamped), not stdout
    assert "n_draws_left_out" not in result.stdout
    warned = [line for line in result.stderr.splitlines() if "n_draws_left_out" in line]
    assert len(warned) == 1 and " WARNING tsrate.run: " in warned[0]
    published = list(tmp_path.rglob("published/tsrate.duckdb"))
    assert len(published) == 1
    con = duckdb.connect(str(published[0]), read_only=True)
    try:
        draws = con.execute(
            "select distinct n_draws + n_draws_left_out from marts.perturbation_effects"
        ).fetchall()
        left_out = con.execute(
            "select sum(n_draws_left_out) from marts.perturbation_effects"
        ).fetchone()[0]
        scores = con.execute(
            "select sum(n_draws_left_out), count(*) filter (where raw_score is null "
            "and score_reason is null) from marts.robustness_scores where measure <> 'wrs'"
        ).fetchone()
        rated = con.execute("select count(*) from marts.ratings").fetchone()[0]
    finally:
        con.close()
    assert draws == [(16,)]  # every row accounts for all 16 draws
    assert left_out > 0 and scores[0] > 0  # some were left out, and the scores say so
    assert scores[1] == 0  # no score silently missing its value
    assert rated > 0
    # the report names the comparison's relativity, the uncertainty effects and leakage
    html = (published[0].parent / "report.html").read_text()
    for section in ('id="leave-one-out"', 'id="uncertainty"', "Windows inside its training data"):
        assert section in html, section
