"""rating_leave_one_out's library: each rating re-rated with one other system removed or one
new system added, checked by hand and against a direct recomputation with
tsrate.methods.ratings.ratings_frame (the function the published ratings come from)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.ratings import ratings_frame
from tsrate.robustness.marts.ratings import CORE_IDEALS, assigned_ratings, leave_one_out


def scores_frame(rows: list[tuple[str, str, str, float]], max_score=np.nan) -> pd.DataFrame:
    """(metric, perturbation, system, raw_score) rows as score_table returns them."""
    frame = pd.DataFrame(rows, columns=["metric", "perturbation_id", "system_id", "raw_score"])
    frame["run_id"] = "r1"
    frame["higher_is_better"] = frame["metric"] == "sign_accuracy"
    robust = frame["metric"].str.startswith(("wrs", "ape", "pie"))
    frame["metric_family"] = np.where(robust, "robustness", "accuracy")
    frame["outcome"] = np.where(robust, "max_abs_residual", None)
    frame["is_default_outcome"] = True
    frame["max_score"] = np.where(frame["metric"].str.startswith("wrs"), max_score, np.nan)
    frame["score_spread"] = np.nan
    return frame


def test_hand_worked_three_systems():
    """a=1, b=2, c=3 on 3 levels: ratings 1, 2, 3. Without a, {2, 3} split in 3 gives b=1,
    c=2; without c, a=1, b=2; without b, a=1, c=2. A new score below 1 shifts everyone up
    one group boundary: 4 distinct values split [2, 1, 1] -> a stays 1."""
    scores = scores_frame([("smape", "P0", s, v) for s, v in (("a", 1.0), ("b", 2.0), ("c", 3.0))])
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index("system_id")
    assert loo.loc["a", "rating"] == 1 and not loo.loc["a", "changes_if_one_removed"]
    assert loo.loc["b", "changed_by_removing"] == "a (2->1)"
    assert loo.loc["c", "changed_by_removing"] == "a (3->2), b (3->2)"
    assert loo.loc["c", "n_removals_changing"] == 2
    assert (loo.loc["c", "rating_min_one_removed"], loo.loc["c", "rating_max_one_removed"]) == (
        2,
        2,
    )
    # a new score at 0.5: [0.5, 1] [2] [3] -> a 1, b 2, c 3; at 1.5: [1, 1.5] [2] [3];
    # at 2.5: [1, 2] [2.5] [3] -> b 1; at 4 (no bound above for SMAPE's 2? SMAPE <= 2, so
    # above 3 is impossible): the places are 0.5, 1.5, 2.5
    assert (loo.loc["b", "rating_min_one_added"], loo.loc["b", "rating_max_one_added"]) == (1, 2)
    assert loo.loc["b", "changes_if_one_added"]
    assert (loo.loc["c", "rating_min_one_added"], loo.loc["c", "rating_max_one_added"]) == (3, 3)


def _same(a, b) -> bool:
    """Equal ratings, a null equal to a null."""
    return (pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and not pd.isna(b) and a == b)


def _direct(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """The published rating of every system in every subset, by ratings_frame."""
    higher = scores.groupby("metric")["higher_is_better"].first().to_dict()
    return ratings_frame(
        scores, levels, higher, ideal=CORE_IDEALS, maximum_column="max_score"
    ).set_index(["metric", "perturbation_id", "system_id"])["rating"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_direct_recomputation_with_ratings_frame(seed):
    rng = np.random.default_rng(seed)
    systems = ["a", "b", "c", "d", "e"]
    rows = []
    for metric in ("smape", "sign_accuracy", "ape_industry", "wrs_company"):
        for perturbation in ("P1", "P2"):
            values = (
                rng.choice([0.0, 0.6, 1.2, 2.4], size=len(systems))
                if metric.startswith("wrs")
                else rng.integers(0, 4, size=len(systems)).astype(float)
            )
            rows += [
                (metric, perturbation, s, float(v)) for s, v in zip(systems, values, strict=True)
            ]
    scores = scores_frame(rows, max_score=2.4)
    loo = leave_one_out(assigned_ratings(scores, 3), 3)
    full = _direct(scores, 3)
    removed = {gone: _direct(scores[scores["system_id"] != gone], 3) for gone in systems}
    for row in loo.itertuples():
        key = (row.metric, row.perturbation_id, row.system_id)
        expected = full.loc[key]
        assert _same(row.rating, expected)
        others = {g: removed[g].loc[key] for g in systems if g != row.system_id}
        changed = sorted(g for g, r in others.items() if not _same(r, expected))
        assert row.n_removals_changing == len(changed)
        named = [] if pd.isna(row.changed_by_removing) else row.changed_by_removing.split(", ")
        assert [n.split(" ")[0] for n in named] == changed
        known = [int(r) for r in others.values() if not pd.isna(r)]
        if known:
            assert (row.rating_min_one_removed, row.rating_max_one_removed) == (
                min(known),
                max(known),
            )
        else:
            assert pd.isna(row.rating_min_one_removed) and pd.isna(row.rating_max_one_removed)


def test_addition_matches_a_brute_force_over_new_scores():
    """Every place found by leave_one_out is enough: a fine grid of new scores in [0, 3]
    gives the same range of ratings for each system."""
    scores = scores_frame(
        [("ape_company", "P1", s, v) for s, v in zip("abcd", (0.2, 0.5, 0.5, 1.7), strict=True)]
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index("system_id")
    for system in "abcd":
        seen = set()
        for value in np.linspace(0.0, 3.0, 121):
            extra = scores_frame([("ape_company", "P1", "new", float(value))])
            both = pd.concat([scores, extra], ignore_index=True)
            seen.add(int(_direct(both, 3).loc[("ape_company", "P1", system)]))
        got = loo.loc[system]
        assert (got["rating_min_one_added"], got["rating_max_one_added"]) == (min(seen), max(seen))
        assert got["changes_if_one_added"] == (seen != {int(got["rating"])})


def test_lone_and_tied_groups():
    """A lone system: nothing to remove; a tied accuracy group (null ratings) becomes rated
    when one of two systems leaves? no -- the one left is lone, still null: no change."""
    scores = scores_frame(
        [("smape", "P0", "a", 1.0), ("smape", "P0", "b", 1.0), ("ape_industry", "P1", "a", 0.0)]
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3)
    lone = loo[loo["metric"] == "ape_industry"].iloc[0]
    assert lone["n_systems"] == 1 and lone["n_removals_changing"] == 0
    assert pd.isna(lone["rating_min_one_removed"])
    tied = loo[loo["metric"] == "smape"]
    assert tied["rating"].isna().all() and not tied["changes_if_one_removed"].any()
    # a new distinct score rates the tied pair: 1.0 beside 0.5 -> 2, beside 1.5 -> 1
    assert set(itertools.chain(tied["rating_min_one_added"], tied["rating_max_one_added"])) == {
        1,
        2,
    }
    assert tied["changes_if_one_added"].all()
