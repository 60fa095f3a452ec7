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


def _table_shares(html: str, heading: str) -> list[str]:
    """The share column of the ratings table after ``heading`` (its last cell per row)."""
    part = html.split(heading, 1)[1]
    table = part.split("</table>", 1)[0]
    return [re.findall(r"<td>([^<]*)</td>", row)[-1] for row in table.split("<tr>")[2:]]


def test_reasoning_every_rating_table_never_prints_a_shaky_share_as_06():
    from tsrate.suites.reasoning import report as rsn

    share = 1199 / 1999  # 0.599799...: 2000 resamples (var bootstrap_resamples), one undefined
    assert share < 0.6
    ratings = pd.DataFrame(
        [("r1", "accuracy", "qa_single", "alpha", 0.8, 2, 3, True, 1, None, 2),
         ("r1", "accuracy", "qa_single", "beta", 0.7, 1, 3, True, 2, None, 2)],
        columns=["suite_run_id", "metric", "task", "system_id", "raw_score", "rating",
                 "rating_levels", "higher_is_better", "rank", "rating_reason", "n_systems"],
    )  # fmt: skip
    stability = ratings[["suite_run_id", "metric", "task", "system_id"]].assign(
        ci_low=[0.7, 0.6], ci_high=[0.9, 0.8], share_at_rating=[share, 0.875]
    )
    tasks = pd.DataFrame(columns=["suite_run_id", "task", "system_id", "accuracy"])
    html = rsn.render_report(
        {"tasks": tasks, "forecasts": pd.DataFrame(), "context": pd.DataFrame(),
         "ratings": ratings, "stability": stability}
    )  # fmt: skip
    # rounded down to three decimals: 0.599 and 0.875 (three significant figures: 0.6, 0.875)
    assert _table_shares(html, "Every rating") == ["0.599", "0.875"]


def test_interpretability_ratings_table_never_prints_a_shaky_share_as_06():
    from tsrate.suites.interpretability import report as interp

    share = 27993 / 6**6  # an exact 6-seed bootstrap's share: 0.5999871...
    assert share < 0.6
    ratings = pd.DataFrame(
        [("r1", "test_mse", "d1", "imv", 0.1, 1, 3, False, 1, None, 2, share, 0.0, 6),
         ("r1", "test_mse", "d1", "tcdf", 0.2, 3, 3, False, 2, None, 2, 0.75, 0.0, 6)],
        columns=["suite_run_id", "metric", "variant_id", "model_id", "raw_score", "rating",
                 "rating_levels", "higher_is_better", "rank", "rating_reason", "n_models",
                 "share_at_rating", "share_mc_se", "n_seeds"],
    )  # fmt: skip
    empty = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "dataset_id", "model_id", "measure",
                 "attention", "target_index", "source_index", "lag"]
    )  # fmt: skip
    html = interp.render_report(
        {"cells": empty, "alpha": empty, "correctness": empty, "scores": empty,
         "sensitivity": pd.DataFrame(), "ratings": ratings}
    )  # fmt: skip
    # the table's columns: ... share_at_rating, n_seeds, rating_reason; rounded down to four
    # decimals: 0.5999 (four significant figures: 0.6) and 0.75
    part = html.split("<h2>Ratings</h2>", 1)[1].split("</table>", 1)[0]
    shares = [re.findall(r"<td>([^<]*)</td>", row)[5] for row in part.split("<tr>")[2:]]
    assert shares == ["0.5999", "0.75"]
