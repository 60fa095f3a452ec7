"""The report's verdict and reading, as pure functions over small hand-made frames: best
and worst with the gap, ties, ratings that do not separate the systems, whether the
leaderboard separates the lowest SMAPE and MASE, and the reading's most robust system and
worst perturbation (the page shell: tests/unit/test_report_page.py; the report built from a
real snapshot: tests/integration/test_report_marts.py and its neighbours).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support.report_builders import (
    stability_rows,
)
from tests.support.report_frames import RUN, two_systems
from tsrate.robustness.report.render import (
    ReportData,
    build_report,
    reading_paragraph,
)


def test_verdict_comes_first_and_names_best_and_worst_with_the_gap():
    report = build_report(two_systems(), generated_at="now")
    assert report.html.index('id="verdict"') < report.html.index('id="study"')
    verdict = re.search(r'<section id="verdict">(.*?)</section>', report.html, re.S).group(1)
    plain = re.sub(r"<[^>]+>", "", verdict)
    # good: rating 1 everywhere, bad: 3 everywhere -> a gap of 2 levels
    assert "good is the most robust" in plain and "bad the least" in plain
    assert "a gap of 2.00 rating levels" in plain
    assert "lowest mean SMAPE" in plain
    overview = re.search(r'<section id="overview">(.*?)</section>', report.html, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", overview, re.S)
    assert len(rows) == 3 and "good" in rows[1] and "bad" in rows[2]


def test_reading_names_the_most_robust_system_and_the_worst_perturbation():
    text = reading_paragraph(two_systems())
    plain = re.sub(r"<[^>]+>", "", text)
    assert "the most robust is good" in plain
    assert "the least robust bad" in plain
    assert "hurts most is P2" in plain
    assert "most accurate system by SMAPE is good" in plain
    assert "industry as the confounder shows more bias" in plain
    assert "(6.00 vs 2.00)" in plain


def test_reading_without_ratings_says_so():
    empty = two_systems(ratings=pd.DataFrame(), system_summary=pd.DataFrame())
    assert "No ratings" in reading_paragraph(empty)


def _verdict_text(data: ReportData) -> str:
    report = build_report(data, generated_at="now")
    verdict = re.search(r'<section id="verdict">(.*?)</section>', report.html, re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", verdict))


def _with_twin(base: ReportData, of: str = "good") -> ReportData:
    """``base`` plus a system 'twin' rated exactly as ``of``."""
    twin = {
        name: pd.concat([frame, frame[frame["system_id"] == of].assign(system_id="twin")])
        for name, frame in (("system_summary", base.system_summary), ("ratings", base.ratings))
    }
    return two_systems(**twin)


def test_verdict_names_systems_that_tie_together():
    """Two systems with the same mean rating are both the most robust: the verdict does not
    crown the first by name order (the default study's fracast and naive tie at 1.90)."""
    tied = _with_twin(two_systems())
    tied.stability = stability_rows(tied, {("smape", "P1", "twin"): 0.3})  # twin's one shaky
    plain = _verdict_text(tied)
    assert "Of 3 rated systems, good and twin tie as the most robust" in plain
    assert "and bad the least" in plain
    assert "is the most robust" not in plain
    # the firmness counts both leaders' ratings, each named
    n = int((tied.ratings["system_id"] == "good").sum())
    assert (
        f"How firm: 1 of the leaders' {2 * n} ratings is shaky (good 0 of {n}, twin 1 of {n};"
        in plain
    )
    laggards = _verdict_text(_with_twin(two_systems(), of="bad"))
    assert "good is the most robust" in laggards and "bad and twin tie as the least" in laggards


def test_verdict_says_when_the_ratings_do_not_separate_the_systems():
    base = two_systems()
    summary = base.system_summary.assign(avg_rating=2.0)
    plain = _verdict_text(two_systems(system_summary=summary))
    assert "All 2 rated systems have the same mean robustness rating" in plain
    assert "the ratings do not separate them" in plain
    assert "most robust" not in plain


def _board(good: tuple[float, float], bad: tuple[float, float]) -> pd.DataFrame:
    """marts.leaderboard's all-perturbation SMAPE rows: (lower, upper) skill-score bounds."""
    return pd.DataFrame(
        [dict(BOARD_ROW, scope="all", system_id=system, skill_score=(low + high) / 2,
              skill_score_lower=low, skill_score_upper=high)
         for system, (low, high) in (("good", good), ("bad", bad))]
        + [dict(BOARD_ROW, scope="P1", system_id="bad", skill_score=0.9,
                skill_score_lower=0.8, skill_score_upper=0.95)]  # another scope: not read
    )  # fmt: skip


BOARD_ROW = dict(run_id=RUN, metric="smape", win_rate=0.5, win_rate_lower=0.4,
                 win_rate_upper=0.6, average_rank=1.5, n_tasks=6, num_failures=0,
                 baseline_system_id="bad", reason=None)  # fmt: skip


@pytest.mark.parametrize(
    ("good", "bad", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "good has the lowest mean SMAPE (3.00), clearly ahead of bad"),
        (
            (0.1, 0.3),
            (0.2, 0.4),
            "good has the lowest mean SMAPE (3.00), but not separably from bad",
        ),
        ((0.05, 0.1), (0.2, 0.3), "yet the leaderboard ranks bad (5.00) ahead"),
    ],
)
def test_verdict_says_whether_the_leaderboard_separates_the_lowest_smape(good, bad, says):
    """The runner-up by mean SMAPE against the leader, by the leaderboard's 95 % skill-score
    intervals (all perturbations): apart, overlapping, or apart the other way."""
    plain = _verdict_text(two_systems(leaderboard=_board(good, bad)))
    assert says in plain
    assert (
        f"([{good[0]:.3g}, {good[1]:.3g}] vs [{bad[0]:.3g}, {bad[1]:.3g}])"
        in plain.replace("0.0,", "0,")
        or f"[{good[0]}, {good[1]}] vs [{bad[0]}, {bad[1]}]" in plain
    )


def test_verdict_without_a_leaderboard_says_nothing_of_separation():
    plain = _verdict_text(two_systems())
    assert "lowest mean SMAPE (3.00) and bad the highest (5.00)" in plain
    assert "leaderboard" not in plain


@pytest.mark.parametrize(
    ("good", "bad", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "By MASE, good has the lowest mean too (3.00), clearly ahead of"),
        ((0.1, 0.3), (0.2, 0.4), "By MASE, good has the lowest mean too (3.00), but not separably"),
        ((0.05, 0.1), (0.2, 0.3), "By MASE, good has the lowest mean too (3.00), yet the leader"),
    ],
)
def test_verdict_says_whether_the_leaderboard_separates_the_lowest_mase(good, bad, says):
    """The lowest mean MASE against the runner-up, by the leaderboard's MASE skill-score
    intervals, and never by its SMAPE rows (the default study's fracast is clearly ahead of
    naive on SMAPE but not on MASE)."""
    board = _board((0.3, 0.4), (0.1, 0.2))  # SMAPE: good clearly ahead
    mase = _board(good, bad).assign(metric="mase")
    plain = _verdict_text(two_systems(leaderboard=pd.concat([board, mase], ignore_index=True)))
    assert says in plain
    assert "MASE skill scores' 95 %" in plain
    mase_sentence = plain[plain.index("By MASE") :]
    assert f"[{good[0]:.3g}, {good[1]:.3g}] vs [{bad[0]:.3g}, {bad[1]:.3g}]" in mase_sentence


def test_verdict_names_the_lowest_mase_when_it_is_not_the_lowest_smape():
    base = two_systems()
    summary = base.system_summary.copy()
    mase = summary["metric"] == "mase"
    summary.loc[mase, "avg_raw_score"] = summary.loc[mase, "system_id"].map(
        {"good": 4.0, "bad": 2.5}
    )
    plain = _verdict_text(two_systems(system_summary=summary))
    assert "good has the lowest mean SMAPE (3.00)" in plain
    assert "By MASE, bad has the lowest mean (2.50)." in plain
    assert "lowest mean too" not in plain
