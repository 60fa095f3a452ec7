"""Shares at the published rating are printed rounded DOWN in every suite table, as the core
report prints them (tsrate.robustness.report.numbers.format_share): a shaky share (under
60 %) must never read as 0.60 / 0.6 beside a verdict that counts it shaky.

Expected texts are worked out by hand: 118 of 197 counted resamples is 0.59898..., which is
0.59 to two decimals rounded down (ordinary rounding prints 0.60); 1199 of 1999 is
0.599799..., 0.599 to three decimals rounded down (three significant figures print 0.6).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tsrate.suites.understanding import report as und


def _rated(share: float) -> pd.DataFrame:
    return pd.DataFrame(
        [("retrieval_mape", "trend", "alpha", 12.5, 10.0, 15.0, 2.0, share)],
        columns=[
            "metric", "feature", "system_id", "raw_score", "ci_low", "ci_high", "rating",
            "share_at_rating",
        ],
    )  # fmt: skip


def _share_cell(html: str) -> str:
    cells = re.findall(r"<td>([^<]*)</td>", html)
    return cells[-1]


def test_understanding_rated_scores_never_print_a_shaky_share_as_060():
    share = 118 / 197  # 0.59898...: shaky (under 0.6)
    assert share < 0.6
    assert _share_cell(und.rated_scores_html(_rated(share))) == "0.59"


def test_understanding_rated_scores_print_shares_rounded_down():
    assert _share_cell(und.rated_scores_html(_rated(0.6))) == "0.60"
    assert _share_cell(und.rated_scores_html(_rated(0.875))) == "0.87"
    assert _share_cell(und.rated_scores_html(_rated(1.0))) == "1.00"
    assert _share_cell(und.rated_scores_html(_rated(0.0))) == "0.00"
    assert _share_cell(und.rated_scores_html(_rated(np.nan))) == ""
