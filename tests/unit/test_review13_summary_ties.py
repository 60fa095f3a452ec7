"""The suite reports' summary table gives systems with the same mean goodness the same rank
(1, 1, 3), as the verdict above it names them together as a tie and as the core report's
summary ranks equal means: it used to number them 1, 2, 3, ranking one tied system above
the other by name.

Hand-worked: on metric m1 (higher is better, 3 levels) alpha and beta are rated 3 (goodness
1 = 100 %) and gamma 1 (0 %); mean goodness 100 %, 100 %, 0 %.
"""

from __future__ import annotations

import re

import pandas as pd

from tsrate.suites.verdict import summary_table_html, verdict_html


def _ratings(rows):
    return pd.DataFrame(
        rows, columns=["suite_run_id", "metric", "system_id", "rating", "rating_levels",
                       "higher_is_better"]
    )  # fmt: skip


def _ranks(html: str) -> dict[str, str]:
    body = html.split("<tbody>", 1)[1]
    rows = re.findall(r"<tr><td>([^<]*)</td><td><code>([^<]*)</code>", body)
    return {system: rank for rank, system in rows}


TIED = [("r", "m1", "alpha", 3, 3, True), ("r", "m1", "beta", 3, 3, True),
        ("r", "m1", "gamma", 1, 3, True)]  # fmt: skip


def test_tied_systems_share_a_rank_in_the_summary_table():
    ratings = _ratings(TIED)
    assert "tie for best" in verdict_html(ratings, "m", "s")
    assert _ranks(summary_table_html(ratings)) == {"alpha": "1", "beta": "1", "gamma": "3"}


def test_tied_systems_share_a_rank_when_some_systems_are_not_compared():
    # delta is rated on m2 only: the verdict compares alpha, beta and gamma on m1
    ratings = _ratings([*TIED, ("r", "m2", "delta", 2, 3, True)])
    assert _ranks(summary_table_html(ratings)) == {
        "alpha": "1", "beta": "1", "gamma": "3", "delta": "–",
    }  # fmt: skip


def test_distinct_means_keep_distinct_ranks():
    ratings = _ratings([("r", "m1", "alpha", 3, 3, True), ("r", "m1", "beta", 2, 3, True),
                        ("r", "m1", "gamma", 1, 3, True)])  # fmt: skip
    assert _ranks(summary_table_html(ratings)) == {"alpha": "1", "beta": "2", "gamma": "3"}
