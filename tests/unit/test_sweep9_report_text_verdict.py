"""The core report's verdict (tsrate.robustness.report.sections) against numbers worked out
independently from the mart rows each test builds: means by plain Python loops over the
rows, best and worst by sorting those loops' results, ties in seed order, the leaderboard's
separation by its intervals, and shaky counts from the documented 60 % rule
(tests/support/sweep9_report_text.py formats every expected number).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_text.json): an analyst acts on these words, so a mutant that names
the wrong system as best, reverses a direction word, prints a number that no longer matches
the mart row it names, or drops the shaky marker changes a checked string here.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support.report_text import (
    ROBUSTNESS,
    RUN,
    SEED,
    plain,
    rating_rows,
    report_data,
    summaries,
    three_systems,
    uniform,
)
from tests.support.sweep9_report_text import (
    fmt,
    nums,
    stability_of,
)
from tsrate.robustness.report.sections import (
    shaky_counts,
    verdict_section,
)


def by_hand_means(levels: dict) -> dict[str, float]:
    """Mean over the robustness metrics of each metric's mean rating over perturbations."""
    return {
        system: sum(sum(v) / len(v) for m, v in by_metric.items() if m in ROBUSTNESS) / 6
        for system, by_metric in levels.items()
    }


# ----------------------------------------------------------------------------- verdict


def test_the_verdict_names_best_and_worst_by_the_hand_worked_means():
    """zeta: WRS industry (1+1+2+2)/4 = 1.5, five metrics at 2 -> 11.5/6 = 1.92; alpha: APE
    company 3, five at 1 -> 8/6 = 1.33; mid: PIE company 1, five at 4 -> 21/6 = 3.50. Best
    alpha, worst mid, gap 3.50 - 1.33 = 2.17 on a 1 to 4 scale; SMAPE lowest alpha (20),
    highest mid (40); MASE lowest mid (0.5, not the lowest SMAPE: no "too")."""
    levels = three_systems()
    means = by_hand_means(levels)
    assert [round(means[s], 4) for s in SEED] == [1.9167, 1.3333, 3.5]
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert (
        "Of 3 rated systems, alpha is the most robust (mean robustness rating 1.33 on a 1 "
        "(best) to 4 scale, over 6 robustness metrics and the perturbations) and mid the "
        "least (3.50): a gap of 2.17 rating levels." in text
    )
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )
    assert "By MASE, mid has the lowest mean (0.5)." in text
    assert "How firm these ratings are is unknown" in text


def test_the_verdict_numbers_trace_to_the_rows_they_print():
    levels = three_systems()
    html = verdict_section(report_data(rating_rows(levels)))
    means = by_hand_means(levels)
    printed = nums(html)
    ratings = [n for n in printed if n["column"] == "avg_rating"]
    assert [(n["where"]["system_id"], n["agg"]) for n in ratings] == [
        ("alpha", "avg"),
        ("mid", "avg"),
    ]
    for n in ratings:
        assert n["value"] == pytest.approx(means[n["where"]["system_id"]], abs=1e-12)
        assert n["where"]["metric"] == sorted(ROBUSTNESS)
        assert n["text"] == fmt(n["value"])
    levels_num = [n for n in printed if n["column"] == "rating_levels"]
    assert [(n["value"], n["agg"], n["text"]) for n in levels_num] == [(4.0, "max", "4")]
    gap = re.search(r'data-derived="robustness_gap" data-value="([^"]*)"', html).group(1)
    assert float(gap) == pytest.approx(means["mid"] - means["alpha"], abs=1e-12)


def test_the_verdict_breaks_a_tie_in_seed_order_and_names_both():
    """zeta and alpha both at 1 everywhere, mid at 3: zeta and alpha tie (seed order: zeta
    first though alpha sorts first), mid the least; the leaders' firmness counts both, in the
    order the tie named them."""
    levels = {"zeta": uniform(1, smape=5.0), "alpha": uniform(1, smape=6.0), "mid": uniform(3)}
    ratings = rating_rows(levels)
    stability = stability_of(
        ratings,
        {("wrs_industry", "P1", "alpha"): 0.59, ("wrs_company", "P2", "mid"): 0.1,
         ("ape_company", "P3", "zeta"): 0.6, ("pie_company", "P1", "zeta"): float("nan")},
    )  # fmt: skip
    text = plain(verdict_section(report_data(ratings, stability=stability)))
    n = sum(1 for r in ratings.itertuples() if r.system_id == "zeta")
    assert (
        "Of 3 rated systems, zeta and alpha tie as the most robust (mean robustness rating 1.00"
        in text
    )
    assert "and mid the least (3.00): a gap of 2.00 rating levels." in text
    # 0.59 is under 60 %: shaky; exactly 0.6 and an unknown share are not
    assert (
        f"How firm: 1 of the leaders' {2 * n} ratings is shaky (zeta 0 of {n}, alpha 1 of {n}; "
        "under 60% of bootstrap resamples of the window dates give the published level), "
        f"and 2 of all {3 * n};" in text
    )


def test_the_verdict_names_the_single_leaders_shaky_ratings():
    levels = three_systems()
    ratings = rating_rows(levels)
    stability = stability_of(
        ratings, {("smape", "P0", "alpha"): 0.2, ("mase", "P3", "alpha"): 0.5999,
                  ("smape", "P1", "mid"): 0.0}
    )  # fmt: skip
    text = plain(verdict_section(report_data(ratings, stability=stability)))
    n = sum(1 for r in ratings.itertuples() if r.system_id == "alpha")
    assert f"How firm: 2 of alpha's {n} ratings are shaky (under 60%" in text
    assert f"and 3 of all {len(ratings)};" in text


def test_the_verdict_with_one_system_and_with_all_tied():
    one = rating_rows({"mid": uniform(3)})
    text = plain(verdict_section(report_data(one)))
    assert (
        "Only mid is rated in this run (mean robustness rating 3.00 on a 1 (best) to 4 scale)"
        in text
    )
    tied = rating_rows({s: uniform(2) for s in SEED})
    text = plain(verdict_section(report_data(tied)))
    assert (
        "All 3 rated systems have the same mean robustness rating (2.00 on a 1 (best) to 4" in text
    )


def test_the_verdict_ties_at_the_last_decimal_but_not_beyond():
    """Means within 1e-9 are one tie (rounding of equal fractions: at a mean of 1 the
    relative and absolute tolerances are both 1e-9); 1.5e-9 apart are not."""
    base = rating_rows({s: uniform(1) for s in SEED})
    summary, perturbation_summary = summaries(base)
    for delta, tie in ((5e-10, True), (1.5e-9, False), (1e-6, False)):
        shifted = summary.copy()
        shifted.loc[shifted["system_id"] == "mid", "avg_rating"] += delta
        data = report_data(base)
        data.system_summary = shifted
        text = plain(verdict_section(data))
        assert ("All 3 rated systems" in text) == tie
        if not tie:
            assert "zeta and alpha tie as the most robust" in text and "mid the least" in text


def _board(rows: dict[str, tuple[float, float]], metric: str = "smape") -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id=RUN, scope="all", metric=metric, system_id=s,
                 skill_score_lower=low, skill_score_upper=high)
            for s, (low, high) in rows.items()
        ]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("alpha", "zeta", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "clearly ahead of zeta (30.00)"),
        ((0.3, 0.4), (0.1, 0.3), "but not separably from zeta (30.00)"),  # touching: overlap
        ((0.1, 0.2), (0.2, 0.3), "but not separably from zeta (30.00)"),  # touching: overlap
        ((0.1, 0.2), (0.21, 0.3), "yet the leaderboard ranks zeta (30.00) ahead"),
    ],
)
def test_the_verdict_separates_the_smape_leader_only_by_strictly_apart_intervals(alpha, zeta, says):
    """alpha has the lowest mean SMAPE (20), zeta the runner-up (30), mid the highest (40):
    the leaderboard's intervals decide ahead / behind only when strictly apart."""
    board = _board({"alpha": alpha, "zeta": zeta, "mid": (0.0, 0.05)})
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert f"By accuracy, alpha has the lowest mean SMAPE (20.00), {says}" in text
    assert (
        f"([{fmt(alpha[0])}, {fmt(alpha[1])}] vs [{fmt(zeta[0])}, {fmt(zeta[1])}]); mid has the highest (40.00)."
        in text
    )


def test_the_verdict_reads_the_mase_rows_for_mase_and_the_all_scope_only():
    """MASE: mid lowest (0.5), zeta runner-up (1.5). The SMAPE rows and another scope's rows
    say otherwise and must not be read."""
    board = pd.concat(
        [
            _board({"alpha": (0.3, 0.4), "zeta": (0.1, 0.2)}),
            _board({"mid": (0.5, 0.6), "zeta": (0.1, 0.2)}, metric="mase"),
            _board({"mid": (0.0, 0.1), "zeta": (0.8, 0.9)}, metric="mase").assign(scope="P1"),
        ],
        ignore_index=True,
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By MASE, mid has the lowest mean (0.5), clearly ahead of zeta (1.50): their MASE" in text
    )
    assert "([0.5, 0.6] vs [0.1, 0.2])." in text
    missing = board.assign(
        skill_score_upper=board["skill_score_upper"].where(board["metric"] != "mase")
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=missing)))
    assert "By MASE, mid has the lowest mean (0.5)." in text


def test_a_leaderboard_without_intervals_says_nothing_of_separation():
    """A leaderboard from before the skill-score intervals (no bound columns): the verdict
    names the lowest and highest SMAPE without a separation clause."""
    board = _board({"alpha": (0.3, 0.4), "zeta": (0.1, 0.2)}).drop(
        columns=["skill_score_lower", "skill_score_upper"]
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )
    assert "leaderboard" not in text


def test_one_missing_bound_is_enough_to_say_nothing_of_separation():
    """Only the runner-up's upper SMAPE bound is null: no interval comparison is printed."""
    board = _board({"alpha": (0.3, 0.4), "zeta": (0.1, float("nan"))})
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )


def test_a_board_without_the_runner_up_says_nothing_of_separation():
    board = _board({"alpha": (0.3, 0.4), "mid": (0.1, 0.2)})  # zeta, the runner-up: absent
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )


def test_two_systems_are_compared_by_smape_and_mase():
    """zeta (SMAPE 30, MASE 1.5) and alpha (SMAPE 20, MASE 2): two systems are enough for
    both sentences; alpha lowest by SMAPE, zeta by MASE. With alpha's MASE at 1, alpha is
    lowest by both (too)."""
    levels = three_systems()
    del levels["mid"]
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and zeta the highest (30.00)." in text
    )
    assert "By MASE, zeta has the lowest mean (1.50)." in text
    levels["alpha"]["mase"] = [1.0] * 4
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert "By MASE, alpha has the lowest mean too (1.00)." in text


def test_no_too_when_there_was_no_smape_sentence():
    """Only alpha has SMAPE rows (no SMAPE sentence: nothing to compare), alpha and zeta
    have MASE: the MASE sentence does not say "too"."""
    levels = three_systems()
    del levels["mid"]
    levels["alpha"]["mase"] = [1.0] * 4
    ratings = rating_rows(levels)
    ratings = ratings[(ratings["metric"] != "smape") | (ratings["system_id"] == "alpha")]
    text = plain(verdict_section(report_data(ratings)))
    assert "lowest mean SMAPE" not in text
    assert "By MASE, alpha has the lowest mean (1.00)." in text


def test_the_verdict_says_too_when_smape_and_mase_agree():
    levels = three_systems()
    levels["alpha"]["mase"] = [0.1] * 4
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert "By MASE, alpha has the lowest mean too (0.1)." in text


def test_shaky_counts_by_the_documented_rule():
    ratings = rating_rows({"zeta": uniform(1), "alpha": uniform(2)})
    stability = stability_of(
        ratings, {("smape", "P0", "zeta"): 0.5, ("wrs_company", "P2", "zeta"): 0.6,
                  ("mase", "P1", "alpha"): 0.0}
    )  # fmt: skip
    counts = shaky_counts(report_data(ratings, stability=stability)).set_index("system_id")
    n = len(ratings) // 2
    assert counts.loc["zeta"].tolist() == [n, 1] and counts.loc["alpha"].tolist() == [n, 1]
