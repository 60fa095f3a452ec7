"""The scale benchmark runs at a small size (about 30 s), so it cannot rot unnoticed
(issue 29: it had failed at build since staging.stg_systems existed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_scale_benchmark_builds_the_marts_at_a_small_size():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench_ratings_marts.py"),
        "--rows",
        "20000",
        "--tickers",
        "10",
        "--industries",
        "2",
        "--systems",
        "3",
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert "ERROR=" not in out or "ERROR=0" in out, out[-3000:]
    rows = dict(re.findall(r"^\s+(\w+\.\w+)\s+([\d,]+)\s*$", out, flags=re.M))
    # 10 tickers x 3 systems: every one of them has scores, ratings and summaries
    wrs = "intermediate.int_wrs_scores_summed"
    marts = ("marts.accuracy_scores", wrs, "marts.ratings", "marts.system_summary")
    # and the causal marts: confounder distributions, treatment draws, APE/PIE, stability
    causal = (
        "intermediate.int_confounder_distributions",
        "marts.treatment_assignments",
        "marts.perturbation_effects",
        "marts.perturbation_effect_draws",
        "marts.rating_stability",
    )
    for mart in marts + causal:
        assert int(rows[mart].replace(",", "")) > 0, (mart, rows)
