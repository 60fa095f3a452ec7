"""Tests written for the mutation sweep of the rating-stability and ratings marts
(``tsrate.robustness.marts.stability``; tests/planted/sweep_stability_marts.json): each
metric rated by its own published score, the worst distributions, the effect resamples, the
rating stability's block length, the score table and the leave-one-out ratings.

Every expectation is computed independently of the product: small examples worked by hand
(derivations in the comments) or NumPy written out from the definitions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tests.support.stability_inputs import (
    accuracy_study_stability,
    empty_effects,
    empty_scores,
    stability_settings,
)
from tests.support.sweep_stability import (
    DAYS,
    LEVELS,
    rows,
)
from tsrate.robustness.marts.stability import (
    _worst_distributions,
    effect_resamples,
    wrs_stability,
)

# --------------------------------------------------------------------------- stability mart


def test_wrs_stability_rates_each_metric_by_its_own_published_score_and_worst_value():
    """One system under one perturbation (a lone system: rated by its absolute value,
    ceil(L * |score - 0| / max_score), L = 3). The published scores are taken as they are:
    wrs_industry 1.8 of at most 2.4 -> ceil(3 * 0.75) = 3; wrs_company 1.0 of at most 4.8
    -> ceil(3 * 0.208) = 1 (swapping the worst values would give 2 and 2; an ideal of 1
    instead of 0 would give ceil(3 * 0.8 / 1.4) = 2 for wrs_industry)."""
    rng = np.random.default_rng(1)
    data = []
    for ticker, industry in (("A", "Tech"), ("B", "Tech"), ("C", "Bank"), ("D", "Bank")):
        for row in rows("s", "P1", ticker, rng.normal(0, 1, 12)):
            data.append(row | {"ticker": ticker, "industry": industry})
    errors = pd.DataFrame(data)
    scores = pd.DataFrame(
        {
            "metric": ["wrs_industry", "wrs_company"],
            "system_id": "s",
            "perturbation_id": "P1",
            "raw_score": [1.8, 1.0],
            "max_score": [2.4, 4.8],
        }
    )
    frames = wrs_stability(errors, scores, LEVELS, DAYS[:12], np.ones((3, 12)), "y", 3, 0.9)
    out = pd.concat(frames).drop_duplicates("metric").set_index("metric")
    assert out.loc["wrs_industry", "raw_score"] == 1.8
    assert out.loc["wrs_company", "raw_score"] == 1.0
    assert out.loc["wrs_industry", "rating"] == 3
    assert out.loc["wrs_company", "rating"] == 1


def test_worst_distributions_break_ties_by_the_first_distribution_id():
    """d1 and d2 tie on |APE_m| = 2 (signs differ): with top_k = 1 the first id, d1, is
    resampled; by PIE % d3 (9) is the largest. d2 is not resampled."""
    effects = pd.DataFrame(
        {
            "run_id": "r",
            "system_id": "S1",
            "distribution_id": ["d1", "d2", "d3"],
            "confounder": "industry",
            "perturbation_id": "P1",
            "ape_matched": [-2.0, 2.0, 1.0],
            "pie_percent": [5.0, 5.0, 9.0],
        }
    )
    ids = pd.Series(["d1", "d2", "d3"])
    mask = _worst_distributions(effects, "r", ["S1"], ids, ["P1"], 1)
    np.testing.assert_array_equal(mask[0, :, 0], [True, False, True])


def test_a_mean_over_distributions_resamples_every_distribution_whatever_top_k():
    """top_k limits the work only for the max aggregation: a mean needs every distribution,
    so top_k = 1 or 2 gives the same resamples as top_k = 0 (all), and every multiplicity 1
    gives the published mean over distributions (perturbation_effect_scores)."""
    from tests.support.effect_study import SETTINGS, effect_inputs, published_effects
    from tsrate.methods.causal.effects import effect_scores

    errors, sets, distributions, dates = effect_inputs()
    effects, _ = published_effects(errors, sets, distributions)
    settings = SETTINGS | {"distribution_aggregation": "mean"}
    weights = np.vstack([np.ones(dates.size), np.resize([2.0, 0.0, 1.0], dates.size)])
    args = (sets, distributions, "r1", dates, weights, settings)
    every = effect_resamples(errors, effects, 0, *args)
    assert set(every) == {"ape_company", "ape_industry", "pie_company", "pie_industry"}
    # resample 0 draws every date once: the published scores of the mean aggregation
    published = effect_scores(effects, "mean").set_index(["metric", "system_id", "perturbation_id"])
    for metric, (keys, boot) in every.items():
        index = pd.MultiIndex.from_arrays(
            [[metric] * len(keys), keys["system_id"], keys["perturbation_id"]]
        )
        want = published["raw_score"].reindex(index).to_numpy()
        np.testing.assert_allclose(boot[0], want, rtol=1e-10, err_msg=metric)
    for top_k in (1, 2):
        top = effect_resamples(errors, effects, top_k, *args)
        assert set(top) == set(every)
        for metric, (keys, boot) in every.items():
            pd.testing.assert_frame_equal(top[metric][0], keys)
            np.testing.assert_allclose(top[metric][1], boot, rtol=1e-12, err_msg=metric)
            assert np.isfinite(boot).all()


def test_effect_resamples_of_systems_with_different_perturbation_sets():
    """'flat' is run on P0 P1 P2 and 'moved' on P0 P1 only: with every multiplicity 1 the
    resampled APE_m / PIE % of both sets, side by side, are the published scores
    (perturbation_effects -> perturbation_effect_scores, with the worst case over
    distributions)."""
    from tests.support.effect_study import SEED, SETTINGS, effect_inputs
    from tsrate.methods.causal.effects import effect_scores, study_effects

    errors, sets, distributions, dates = effect_inputs()
    sets = sets.assign(perturbation_set=["P0 P1 P2", "P0 P1"])
    effects = study_effects(errors, sets, distributions, SEED, draws=3, estimand="ATE")
    published = effect_scores(effects, "max").set_index(["metric", "system_id", "perturbation_id"])
    ones = np.ones((2, dates.size))
    resamples = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, ones, SETTINGS
    )
    assert set(resamples) == {"ape_company", "ape_industry", "pie_company", "pie_industry"}
    for metric, (keys, boot) in resamples.items():
        assert sorted(zip(keys["system_id"], keys["perturbation_id"], strict=True)) == [
            ("flat", "P1"),
            ("flat", "P2"),
            ("moved", "P1"),
        ]
        index = pd.MultiIndex.from_arrays(
            [[metric] * len(keys), keys["system_id"], keys["perturbation_id"]]
        )
        want = published["raw_score"].reindex(index).to_numpy()
        np.testing.assert_allclose(boot, [want, want], rtol=1e-10, err_msg=metric)


def accuracy_only_inputs(n_dates: int = 10):
    """Two systems, accuracy metrics only (no robustness scores, no effects)."""
    dates = pd.bdate_range("2024-01-01", periods=n_dates)
    rng = np.random.default_rng(0)
    rows = []
    for system, ticker, date in itertools.product(("S1", "S2"), ("AAA", "BBB"), dates):
        rows.append(("r1", system, "P0", ticker, "Tech", date, rng.random(), 1 + rng.random()))
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry"]
    columns += ["window_end_date", "smape", "mase"]
    errors = pd.DataFrame(rows, columns=columns).assign(
        sign_accuracy=50.0, max_abs_residual=rng.random(len(rows))
    )
    sets = pd.DataFrame(
        {
            "run_id": "r1",
            "system_id": ["S1", "S2"],
            "perturbation_set": "P0",
            "has_effects": False,
        }
    )
    return errors, empty_scores(), empty_effects(), sets


@pytest.mark.parametrize(
    "asked,resampled", [(4, True), (1, True), (5, True), (6, False), (100, False)]
)
def test_rating_stability_publishes_the_configured_block_length(asked, resampled):
    """The block length is the setting as configured; with the 10 window dates fewer than
    two blocks (6 and 100) nothing is resampled (null shares, the reason given)."""
    from tsrate.robustness.marts.stability import COLUMNS

    errors, no_scores, no_effects, sets = accuracy_only_inputs()
    settings = stability_settings(bootstrap_block_length=asked)
    out = accuracy_study_stability(errors, no_scores, no_effects, sets, settings)
    assert set(out["metric"]) == {"smape", "mase", "sign_accuracy"}
    assert out["block_length"].eq(asked).all()
    assert out["share"].notna().any() == resampled
    assert (
        out["separation_reason"].str.contains("too few for blocks").fillna(False).all() != resampled
    )
    assert list(out.columns) == COLUMNS
    assert isinstance(out.index, pd.RangeIndex)
    # only sign accuracy is higher-is-better
    assert (out["higher_is_better"] == (out["metric"] == "sign_accuracy")).all()


def test_rating_stability_refuses_a_block_length_below_one():
    errors, no_scores, no_effects, sets = accuracy_only_inputs()
    settings = stability_settings(bootstrap_block_length=0)
    with pytest.raises(ValueError, match="block_length"):
        accuracy_study_stability(errors, no_scores, no_effects, sets, settings)


def test_rating_stability_takes_each_runs_own_published_wrs():
    """Two runs of the same systems: each run's wrs_industry rows carry that run's published
    score (r1: 0.6 and 1.8, r2: 2.4 and 0.0), not the other run's."""

    errors, _, no_effects, sets = accuracy_only_inputs()
    errors = errors.assign(industry=np.where(errors["ticker"] == "AAA", "Tech", "Bank"))
    errors = pd.concat([errors, errors.assign(run_id="r2")], ignore_index=True)
    sets = pd.concat([sets, sets.assign(run_id="r2")], ignore_index=True)
    published = {("r1", "S1"): 0.6, ("r1", "S2"): 1.8, ("r2", "S1"): 2.4, ("r2", "S2"): 0.0}
    scores = pd.DataFrame(
        [
            dict(run_id=r, metric="wrs_industry", outcome="max_abs_residual", system_id=s)
            | dict(perturbation_id="P0")
            | dict(raw_score=v, max_score=2.4)
            for (r, s), v in published.items()
        ]
    )
    settings = stability_settings(bootstrap_block_length=3)
    out = accuracy_study_stability(errors, scores, no_effects, sets, settings)
    wrs = out.loc[out["metric"] == "wrs_industry"].drop_duplicates(["run_id", "system_id"])
    got = {(r, s): v for r, s, v in wrs[["run_id", "system_id", "raw_score"]].to_numpy()}
    assert got == published


# --------------------------------------------------------------------------- ratings mart


def test_score_table_and_assigned_ratings_carry_outcome_view_and_ideal():
    """score_table stacks robustness rows (their outcome) and accuracy rows (no outcome, in
    the default view); assigned_ratings keeps both and rates a lone WRS against ideal 0 and
    its max_score: 1.8 of 2.4 -> ceil(3 * 1.8 / 2.4) = ceil(2.25) = 3 for both analyses
    (an ideal of 1 would give ceil(3 * 0.8 / 1.4) = 2); a lone SMAPE has no ideal: null."""
    from tsrate.robustness.marts.ratings import assigned_ratings, score_table

    keys = dict(run_id="r1", perturbation_id="P1", system_id="a")
    robustness = pd.DataFrame(
        [
            keys
            | dict(metric=m, higher_is_better=False, outcome="max_abs_residual")
            | dict(is_default_outcome=True, raw_score=1.8, max_score=2.4, score_spread=np.nan)
            for m in ("wrs_industry", "wrs_company")
        ]
    )
    accuracy = pd.DataFrame(
        [keys | dict(metric="smape", higher_is_better=False, mean=0.4)]
        + [keys | dict(metric="mase", higher_is_better=False, mean=np.nan)]  # undefined: left out
    )
    table = score_table(robustness, accuracy)
    assert sorted(table.columns) == sorted(
        ["run_id", "metric", "perturbation_id", "system_id", "higher_is_better", "outcome"]
        + ["is_default_outcome", "raw_score", "max_score", "score_spread", "metric_family"]
    )
    assert list(table["metric"]) == ["wrs_industry", "wrs_company", "smape"]
    smape = table.iloc[2]
    assert (smape["raw_score"], smape["metric_family"]) == (0.4, "accuracy")
    assert smape["outcome"] is None and bool(smape["is_default_outcome"])
    rated = assigned_ratings(table, 3).set_index("metric")
    assert rated.loc["wrs_industry", "rating"] == 3
    assert rated.loc["wrs_company", "rating"] == 3
    assert pd.isna(rated.loc["smape", "rating"])
    assert rated.loc["wrs_industry", "outcome"] == "max_abs_residual"
    assert pd.isna(rated.loc["smape", "outcome"])
    assert bool(rated.loc["smape", "is_default_outcome"])


def test_leave_one_out_adds_no_sign_accuracy_above_its_maximum_of_100():
    """Sign accuracy (higher is better: levels fill from the best end, rating 3 = best) a =
    50, b = 100 on 3 levels: distinct best first [100] [50] [] -> b 3, a 2. A new system can
    score below 50 (at 25: [100] [50] [25] -> b 3) or between (at 75: [100] [75] [50] -> b 3),
    never above 100: so b's ratings with one added are 3 and 3 (a place above 100 would push
    b to 2). Under P2, a = 0 and b = 100: a new system can only score between them (no sign
    accuracy below 0, and a place AT 0 is no new place: it would tie with a), at 50: [100]
    [50] [0] -> b 3, so again (3, 3), not (2, 3)."""
    from tsrate.robustness.marts.ratings import assigned_ratings, leave_one_out

    scores = pd.DataFrame(
        {
            "run_id": "r1",
            "metric": "sign_accuracy",
            "perturbation_id": ["P1", "P1", "P2", "P2"],
            "system_id": ["a", "b", "a", "b"],
            "higher_is_better": True,
            "metric_family": "accuracy",
            "outcome": None,
            "is_default_outcome": True,
            "raw_score": [50.0, 100.0, 0.0, 100.0],
            "max_score": np.nan,
            "score_spread": np.nan,
        }
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index(["perturbation_id", "system_id"])
    for perturbation in ("P1", "P2"):
        b = loo.loc[(perturbation, "b")]
        assert b["rating"] == 3
        assert (b["rating_min_one_added"], b["rating_max_one_added"]) == (3, 3)


def test_leave_one_out_uses_the_groups_largest_worst_value_and_a_place_above_zero():
    """* wrs_industry, a and b tied at 1.2 with max_score 2.4 and 4.8: the group's worst
      value is the larger, 4.8, as in the published ratings: ceil(3 * 1.2 / 4.8) = 1 (2.4
      would give 2); the outcome is carried;
    * mase (no ideal, no upper bound), a lone 0.0: not rated (null); a new system can only
      score above it (at 0 + max(1, 0) = 1): [0] [1] -> a is rated 1, a change."""
    from tsrate.robustness.marts.ratings import assigned_ratings, leave_one_out

    common = dict(run_id="r1", perturbation_id="P1", score_spread=np.nan, is_default_outcome=True)
    wrs = dict(metric="wrs_industry", higher_is_better=False, metric_family="robustness")
    wrs |= dict(outcome="max_abs_residual")
    mase = dict(metric="mase", higher_is_better=False, metric_family="accuracy", outcome=None)
    scores = pd.DataFrame(
        [
            common | wrs | dict(system_id="a", raw_score=1.2, max_score=2.4),
            common | wrs | dict(system_id="b", raw_score=1.2, max_score=4.8),
            common | mase | dict(system_id="a", raw_score=0.0, max_score=np.nan),
        ]
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index(["metric", "system_id"])
    for system in ("a", "b"):
        row = loo.loc[("wrs_industry", system)]
        assert row["rating"] == 1 and row["outcome"] == "max_abs_residual"
        assert (row["rating_min_one_removed"], row["rating_max_one_removed"]) == (1, 1)
    lone = loo.loc[("mase", "a")]
    assert pd.isna(lone["rating"]) and pd.isna(lone["outcome"])
    assert (lone["rating_min_one_added"], lone["rating_max_one_added"]) == (1, 1)
    assert bool(lone["changes_if_one_added"])
