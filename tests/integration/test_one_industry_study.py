"""A study whose tickers share one industry: the industry confounder is constant, so
pie_industry is 0 for every system by construction. It is published as not defined (a null
score and rating with the reason), while ape_industry, a randomised effect estimate, and the
company scores (two companies) stay rated. The model's hand-computed unit cases (one-industry,
one-ticker and two-industry runs) run in tests/integration/test_sweep12_newcode.py."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.config import project_dir

pytestmark = pytest.mark.slow

STUDY = ["--tickers", "ZZA,ZZB", "--start", "2022-01-03", "--end", "2022-10-14",
         "--context-length", "30", "--horizon", "5", "--stride", "3",
         "--systems", "naive,random"]  # fmt: skip
REASON = (
    "not defined for this study: pie_industry measures the bias of confounding by industry, "
    "and the study has fewer than two industries (give its tickers industries with "
    "--companies or the price file's industry column)"
)


def test_pie_of_a_one_industry_study_is_not_rated_and_says_why(tmp_path):
    dates = pd.bdate_range("2022-01-03", periods=200).strftime("%Y-%m-%d")
    frames = []
    for i, ticker in enumerate(["ZZA", "ZZB"]):
        steps = np.random.default_rng(i).normal(0, 0.01, len(dates))
        frames.append(
            pd.DataFrame(
                {
                    "ticker": ticker,
                    "date": dates,
                    "company_name": f"{ticker} Corp",
                    "industry": "Widgets",
                    "close": 40.0 * (i + 1) * np.exp(np.cumsum(steps)),
                }
            )
        )
    prices = tmp_path / "prices.csv"
    pd.concat(frames, ignore_index=True).to_csv(prices, index=False)
    warehouse = tmp_path / "tsrate.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "run", "--file", str(prices), *STUDY,
         "--select", "+ratings"],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)), cwd=project_dir(),
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        scores = con.execute(
            "select metric, count(*), count(raw_score), count(*) filter (where separates_systems), "
            "count(score_reason), list_distinct(list(score_reason)) from marts.robustness_scores "
            "where measure <> 'wrs' group by 1 order by 1"
        ).fetchall()
        ratings = con.execute(
            "select metric, count(*), count(rating), list_distinct(list(rating_reason)) "
            "from marts.ratings where metric in ('ape_industry', 'pie_industry', 'pie_company') "
            "and is_default_outcome group by 1 order by 1"
        ).fetchall()
    finally:
        con.close()
    by_metric = {row[0]: row[1:] for row in scores}
    assert sorted(by_metric) == ["ape_company", "ape_industry", "pie_company", "pie_industry"]
    n, scored, separating, n_reasons, reasons = by_metric["pie_industry"]
    assert n > 0 and scored == 0 and separating == 0 and n_reasons == n and reasons == [REASON]
    for metric in ("ape_company", "ape_industry", "pie_company"):
        n, scored, _, n_reasons, _ = by_metric[metric]
        assert n > 0 and scored == n and n_reasons == 0, metric
    (ape, n_ape, rated_ape, _), (company, n_company, rated_company, _), pie = ratings
    assert (ape, company) == ("ape_industry", "pie_company")
    assert n_ape > 0 and rated_ape > 0 and n_company > 0 and rated_company > 0
    assert pie[0] == "pie_industry" and pie[1] > 0 and pie[2] == 0
    assert pie[3] == ["not rated: " + REASON]
