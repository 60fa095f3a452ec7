"""What a reader of a report acts on first, against hand-worked cases: the suite verdict's
shaky threshold, the core report's rating colours and partial order, the uncertainty
verdict's direction and the leaderboard's order (round 4 of the planted errors,
tests/planted/round4_suites.json)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tsrate.robustness.report.probabilistic import leaderboard_section
from tsrate.robustness.report.ratings import _partial_order, _rating_level
from tsrate.robustness.report.relative import uncertainty_section
from tsrate.suites.verdict import system_scores, verdict_html


def plain_num(value, *_args, **_kwargs) -> str:
    """A stand-in for the report's ``num``: the value as text."""
    return "–" if value is None else f"{value:g}"


def test_a_share_of_exactly_sixty_percent_is_not_shaky():
    """Convention (core report, docs): a rating is shaky when UNDER 60 % of resamples give its
    level, so a share of 0.6 is firm and 0.59 shaky. Two systems, two ratings each (3
    levels, lower is better): a's shares 0.6 and 0.59 -> 1 shaky; b's 0.6 and 0.6 -> 0."""
    ratings = pd.DataFrame(
        {
            "system_id": ["a", "a", "b", "b"],
            "rating": [1, 1, 3, 2],
            "rating_levels": [3] * 4,
            "higher_is_better": [False] * 4,
            "share_at_rating": [0.6, 0.59, 0.6, 0.6],
        }
    )
    scores = system_scores(ratings).set_index("system_id")
    assert scores.loc["a", "n_shaky"] == 1 and scores.loc["b", "n_shaky"] == 0
    html = verdict_html(ratings, "the tasks", "x")
    # a: goodness 1, 1 -> 100 %; b: 0 and 1/2 -> 25 %; a leads with 1 of 2 shaky, 1 in all
    assert 'data-derived="leader_shaky" data-value="1.0"' in html
    assert 'data-derived="shaky" data-value="1.0"' in html
    assert 'data-derived="gap" data-value="75.0"' in html


def _rating_row(rating, levels, higher):
    return SimpleNamespace(
        rating=rating, rating_levels=levels, higher_is_better=higher, raw_score=1.0
    )


def test_rating_colours_green_at_the_best_level_and_red_at_the_worst_in_either_direction():
    """Rating 1 = the lowest raw score (Tables 5-6). Lower is better: level 1 is the best
    (green, ``good``) and level L the worst (red, ``poor``); higher is better: the reverse.
    Anything between is ``mid``."""

    def tone(rating, levels, higher):
        html = _rating_level(_rating_row(rating, levels, higher), {"system_id": "s"})
        return html.split('class="rating ', 1)[1].split('"', 1)[0]

    assert [tone(r, 5, False) for r in (1, 2, 3, 4, 5)] == ["good", "mid", "mid", "mid", "poor"]
    assert [tone(r, 5, True) for r in (1, 2, 3, 4, 5)] == ["poor", "mid", "mid", "mid", "good"]
    assert tone(None, 5, True) == "none"


def test_partial_order_reads_by_rank_with_ties_joined():
    """``a < b = c``: systems by ascending rank (1 = lowest raw score), ties share a rank
    and are listed by name; an unranked system is left out."""
    rows = [
        SimpleNamespace(system_id="a_mid", rank=2),
        SimpleNamespace(system_id="z_low", rank=1),
        SimpleNamespace(system_id="b_mid", rank=2),
        SimpleNamespace(system_id="c_high", rank=4),
        SimpleNamespace(system_id="unrated", rank=float("nan")),
    ]
    assert _partial_order(rows) == "z_low &lt; a_mid = b_mid &lt; c_high"


def _effects(change: float, beyond: bool | None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system_id": ["s"],
            "perturbation_id": ["P1"],
            "outcome": ["wql"],
            "mean_clean": [1.0],
            "mean_perturbed": [1.0 + change],
            "mean_change": [change],
            "change_ci_low": [change - 0.1],
            "change_ci_high": [change + 0.1],
            "beyond_noise": [beyond],
            "reason": [None],
            "coverage_80_change": [0.0],
            "ape_industry": [0.0],
            "ape_industry_spread": [0.0],
        }
    )


def test_a_rise_in_wql_beyond_noise_hurts_and_a_fall_helps():
    """WQL and |coverage - 0.8| are losses (lower is better): a change (perturbed - clean)
    above 0 beyond noise means the perturbation HURTS the system, below 0 that it helps."""
    worse = uncertainty_section(_effects(0.3, True), plain_num)
    better = uncertainty_section(_effects(-0.3, True), plain_num)
    noise = uncertainty_section(_effects(0.3, False), plain_num)
    assert "<b>hurts</b>" in worse and "<b>helps</b>" not in worse
    assert "<b>helps</b>" in better and "<b>hurts</b>" not in better
    assert (
        "within noise" in noise and "<b>" not in noise.split("<table>", 1)[1].split("</table>")[0]
    )


def test_leaderboard_lists_the_highest_skill_score_first():
    """fev's skill score = 1 - geometric mean relative error: higher is better, so the
    leaderboard reads best first (an undefined score last)."""
    board = pd.DataFrame(
        {
            "scope": ["all"] * 3,
            "metric": ["mase"] * 3,
            "system_id": ["weak", "none", "strong"],
            "skill_score": [0.1, None, 0.4],
            "skill_score_lower": [0.0, None, 0.3],
            "skill_score_upper": [0.2, None, 0.5],
            "win_rate": [0.3, None, 0.7],
            "average_rank": [2.0, None, 1.0],
            "n_tasks": [4, 0, 4],
            "num_failures": [0, 4, 0],
            "reason": [None, "no forecasts", None],
        }
    )
    html = leaderboard_section(board, plain_num)
    assert html.index(">strong<") < html.index(">weak<") < html.index(">none<")


def _directions(suite: str) -> dict[str, bool]:
    """metric -> higher is better, read straight from the seed file (not through the code)."""
    import csv
    from pathlib import Path

    seed = Path(__file__).resolve().parents[2] / "seeds" / "suite_rating_specs.csv"
    with seed.open() as handle:
        return {
            row["metric"]: row["higher_is_better"].strip().lower() == "true"
            for row in csv.DictReader(handle)
            if row["suite"] == suite
        }


#: per suite: its rating_table, the comparison's key columns and system column, and the
#: (metric, group value) comparisons drawn: one metric of each direction
PROPERTY_CASES = {
    "reasoning": (
        "tsrate.suites.reasoning.marts",
        {"metric": None, "task": None},
        "system_id",
        (("accuracy", "qa_single"), ("mae", "forecast_without_context"), ("series_gap", "qa_two")),
    ),
    "interpretability": (
        "tsrate.suites.interpretability.marts",
        {"metric": None, "variant_id": None},
        "model_id",
        (("test_mse", "v1"), ("beta_spearman_margin", "v1"), ("beta_std", "v2")),
    ),
}


@pytest.mark.parametrize("suite", sorted(PROPERTY_CASES))
def test_a_better_raw_score_never_gets_a_worse_goodness(suite):
    """The property a reader relies on: within one rated comparison, a system whose raw
    score is better in the metric's direction (the seed file's higher_is_better) never
    gets a lower goodness than one with a worse score (a bounded metric such as accuracy
    may leave even the best below the top level: its distance from the ideal decides)."""
    import importlib

    from tsrate.suites.verdict import goodness

    module, keys, system, cases = PROPERTY_CASES[suite]
    rating_table = importlib.import_module(module).rating_table
    group = [k for k in keys if k != "metric"][0]
    directions = _directions(suite)
    rng = np.random.default_rng(4)
    for draw in range(20):
        frames = []
        for metric, value in cases:
            n = int(rng.integers(2, 7))
            frames.append(
                pd.DataFrame(
                    {
                        "suite_run_id": "r",
                        "metric": metric,
                        group: value,
                        system: [f"s{i}" for i in range(n)],
                        "raw_score": rng.uniform(0.01, 0.99, n).round(2),
                    }
                )
            )
        rated = rating_table(pd.concat(frames, ignore_index=True), int(rng.integers(3, 6)))
        rated = rated.assign(goodness=goodness(rated))
        assert set(rated["metric"]) == {m for m, _ in cases}
        for metric, block in rated.groupby("metric"):
            sign = 1.0 if directions[metric] else -1.0
            better = sign * block["raw_score"].to_numpy(float)
            good = block["goodness"].to_numpy(float)
            assert np.isfinite(good).all(), (draw, metric, block)
            for i in range(len(block)):
                for j in range(len(block)):
                    if better[i] > better[j]:
                        assert good[i] >= good[j], (draw, metric, block)
