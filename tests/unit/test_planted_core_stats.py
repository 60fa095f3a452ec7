"""Planted-error tests for the core statistics of the robustness paper (WRS t-tests, ratings,
the block bootstrap, the causal estimators, the user-study tests, the leaderboard).

Each test pins one scientific choice -- a weight, a ddof, a tail, a direction, an offset --
against an independent computation: SciPy / NumPy written out from the paper's equations, a
tiny example worked by hand, or a property that must hold. They were written to catch
planted errors that the other unit tests let through (tsrate's mutation sweep).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tests.support.stability_inputs import (
    accuracy_study_stability,
    empty_effects,
    empty_scores,
    stability_settings,
)
from tsrate.config import project_dir
from tsrate.methods.causal.estimators import perturbation_effects
from tsrate.methods.causal.matching import nearest_neighbour_means
from tsrate.methods.noise import snap_rows_to_zero
from tsrate.methods.ratings import (
    assign_ratings,
    bootstrap_summary,
    moving_block_indices,
    ratings_frame,
    separability,
)
from tsrate.methods.stability import aggregate_distributions, wrs_resampled
from tsrate.methods.user_study import user_study_tests
from tsrate.methods.wrs import complete_systems, weighted_rejection_pairs, wrs_pair_table
from tsrate.robustness.marts.leaderboard import leaderboard
from tsrate.robustness.marts.ratings import assigned_ratings
from tsrate.robustness.marts.stability import (
    _summaries,
    _worst_distributions,
    mean_over_draws,
)

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})


# --------------------------------------------------------------------------- WRS t-tests


def test_pooled_variance_weights_each_group_by_its_own_size() -> None:
    """Groups of very different sizes AND variances: the pooled variance must weight each
    group's variance by its own n - 1 (scipy.stats.ttest_ind, equal_var=True). With equal
    group sizes a swap of the weights would go unnoticed, so the sizes here are 5 and 60."""
    rng = np.random.default_rng(11)
    sizes = {"A": 5, "B": 60, "C": 17}
    spreads = {"A": 0.2, "B": 3.0, "C": 1.0}
    rows = []
    for group, n in sizes.items():
        for i, value in enumerate(1.0 + spreads[group] * rng.standard_normal(n)):
            rows.append(("S1", "P1", group, i, value))
    frame = pd.DataFrame(
        rows, columns=["system_id", "perturbation_id", "industry", "i", "max_abs_residual"]
    )
    pairs = weighted_rejection_pairs(frame, "industry", LEVELS)
    first = pairs.drop_duplicates(["group_a", "group_b"])
    assert len(first) == 3
    for row in first.itertuples(index=False):
        a = frame.loc[frame["industry"] == row.group_a, "max_abs_residual"]
        b = frame.loc[frame["industry"] == row.group_b, "max_abs_residual"]
        expected = sps.ttest_ind(a, b, equal_var=True)
        assert row.t_statistic == pytest.approx(expected.statistic, rel=1e-10)
        assert row.p_value == pytest.approx(expected.pvalue, rel=1e-10)
        assert row.dof == len(a) + len(b) - 2


def test_a_system_with_one_missing_window_is_left_out_of_that_outcome_entirely() -> None:
    """wrs_pair_table analyses a system on an outcome only over ALL its windows: one NaN
    window removes every row of that system (never a score over part of its windows), and
    leaves the complete systems untouched."""
    rng = np.random.default_rng(3)
    companies = {"AAA": "Tech", "BBB": "Tech", "CCC": "Pharma", "DDD": "Pharma"}
    rows = []
    for system, (ticker, industry), w in itertools.product(
        ("S1", "S2"), companies.items(), range(6)
    ):
        rows.append(("r1", system, ticker, industry, w, "P1", float(rng.random())))
    frame = pd.DataFrame(
        rows,
        columns=[
            "run_id",
            "system_id",
            "ticker",
            "industry",
            "window_end_date",
            "perturbation_id",
            "wql",
        ],
    )
    frame.loc[(frame["system_id"] == "S2") & (frame["window_end_date"] == 3), "wql"] = np.nan
    mask = complete_systems(frame, "wql")
    np.testing.assert_array_equal(mask, (frame["system_id"] == "S1").to_numpy())
    table = wrs_pair_table(frame, LEVELS, ["wql"])
    assert set(table["system_id"]) == {"S1"}
    # S1's pairs: one industry pair, one company pair inside each of the two industries
    assert len(table) == (1 + 2) * len(LEVELS)


# --------------------------------------------------------------------------- block bootstrap


def test_block_starts_cover_every_date_of_the_circle() -> None:
    """Circular block bootstrap: a block starts at any of the n dates (0 .. n - 1) and runs
    on modulo n, so the last date starts blocks too and blocks wrap to the first date. With
    n = 6, L = 2 and 400 resamples of 3 blocks each, every one of the 6 starts appears (a
    given start is missed with probability (5/6)^1200 < 1e-90)."""
    n, length = 6, 2
    idx = moving_block_indices(n, length, 400, np.random.default_rng(0))
    starts = idx[:, ::length]  # every block's first position
    assert set(np.unique(starts)) == set(range(n))
    # consecutive inside a block, on the circle: the block starting at 5 is (5, 0)
    np.testing.assert_array_equal((idx[:, 1::length] - idx[:, ::length]) % n, 1)
    assert ((idx[:, ::length] == n - 1) & (idx[:, 1::length] == 0)).any()


def test_bootstrap_interval_is_the_equal_tailed_percentile_interval() -> None:
    """ci_low / ci_high at confidence c are the (1 - c) / 2 and 1 - (1 - c) / 2 quantiles of
    the resampled scores (numpy.quantile, linear), here c = 0.8 -> the 10 % and 90 %
    quantiles; the point lies inside, so the interval is not widened."""
    rng = np.random.default_rng(5)
    boot = rng.normal(loc=[2.0, 5.0], scale=[0.5, 1.0], size=(500, 2))
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})
    point = np.array([2.0, 5.0])
    out = bootstrap_summary(groups, point, boot, 3, 0.8).drop_duplicates("system_id")
    expected = np.quantile(boot, [0.10, 0.90], axis=0)
    np.testing.assert_allclose(out["ci_low"].to_numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(out["ci_high"].to_numpy(), expected[1], rtol=1e-12)


def test_each_resample_is_snapped_to_zero_on_its_own_scale() -> None:
    """Floating noise of 0 in a resample matrix: each ROW (one resample of the systems'
    scores) is judged by its own largest |x| (|x| <= 1e-12 x max(1, row max) -> 0), worked
    by hand: 5e-12 beside 10 is noise (bound 1e-11); 5e-12 beside 0.5 is not (bound 1e-12),
    although the column holding it also holds 0.5."""
    values = np.array([[5e-12, 10.0], [0.5, 5e-12]])
    expected = np.array([[0.0, 10.0], [0.5, 5e-12]])
    np.testing.assert_array_equal(snap_rows_to_zero(values), expected)


# --------------------------------------------------------------------------- leaderboard


def test_average_rank_gives_tied_systems_the_mean_of_their_places() -> None:
    """Average rank over tasks, ties sharing the MEAN of the places they occupy (scipy's
    rankdata 'average'), worked by hand: task 1 relative errors (base 1, a 0.5, b 0.5) ->
    ranks 3, 1.5, 1.5; task 2 (1, 2, 0.5) -> 2, 3, 1."""
    rows = []
    errors = {"seasonal_naive": [1.0, 1.0], "a": [0.5, 2.0], "b": [0.5, 0.5]}
    for system, values in errors.items():
        for index, value in enumerate(values):
            rows.append(("r", "all", "mase", f"t{index}", f"b{index}", system, value))
    frame = pd.DataFrame(
        rows,
        columns=["run_id", "scope", "metric", "task_id", "block_id", "system_id", "test_error"],
    )
    board = leaderboard(frame, n_resamples=0).set_index("system_id")
    assert board.loc["seasonal_naive", "average_rank"] == pytest.approx((3 + 2) / 2)
    assert board.loc["a", "average_rank"] == pytest.approx((1.5 + 3) / 2)
    assert board.loc["b", "average_rank"] == pytest.approx((1.5 + 1) / 2)
    ranks = np.mean([sps.rankdata([1.0, 0.5, 0.5]), sps.rankdata([1.0, 2.0, 0.5])], axis=0)
    np.testing.assert_allclose(board.loc[["seasonal_naive", "a", "b"], "average_rank"], ranks)


# --------------------------------------------------------------------------- APE / PIE


def _simpson_observed() -> pd.DataFrame:
    """A Simpson's paradox worked by hand: the favoured industry X draws the treatment P1 3
    times out of 4 and has high errors; inside each industry P1 LOWERS the error by 1.

    X: P1 -> 10, 10, 10; P0 -> 11.   Y: P1 -> 0; P0 -> 1, 1, 1.
    APE_o = mean(P1) - mean(P0) = 30/4 - 14/4 = +4; APE_m (ATE, exact stratification, both
    arms in every stratum) = sum_s N_s/N (mean_T,s - mean_C,s) = -1; ATT = -1 too.
    PIE % = | |APE_o| - |APE_m| | x 100 = |4 - 1| x 100 = 300 (paper eq. 3), not
    |APE_o - APE_m| x 100 = 500.
    """
    rows = [("X", "P1", 10.0)] * 3 + [("X", "P0", 11.0)]
    rows += [("Y", "P1", 0.0)] + [("Y", "P0", 1.0)] * 3
    frame = pd.DataFrame(rows, columns=["industry", "perturbation_id", "max_abs_residual"])
    frame["ticker"] = frame["industry"] + frame.index.astype(str)
    frame["window_end_date"] = pd.Timestamp("2024-01-02")
    return frame


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
@pytest.mark.parametrize("propensity", ["share", "logistic"])
def test_pie_compares_absolute_effects_when_matching_flips_the_sign(
    estimand: str, propensity: str
) -> None:
    out = perturbation_effects(
        _simpson_observed(), "industry", estimand=estimand, propensity=propensity
    ).iloc[0]
    assert out["ape_observational"] == pytest.approx(4.0)
    assert out["ape_matched"] == pytest.approx(-1.0, abs=1e-6)
    assert out["pie_percent"] == pytest.approx(300.0, abs=1e-4)


@pytest.mark.parametrize("tol", [0.0, 1e-12])
def test_nearest_neighbour_matching_averages_exact_ties_even_without_tolerance(tol: float) -> None:
    """1-NN matching with replacement, ties averaged: every pool unit at the minimal
    distance is a match. Worked by hand, with dyadic scores so the distances are exact:
    query 0.5 -> pool units AT 0.5 (values 1 and 3) -> 2; query 0.5 with pool 0.25 and 0.75
    only (equal distance on both sides, values 1 and 3) -> 2; query 0.875 -> 0.75 -> 3."""
    got = nearest_neighbour_means(
        np.array([0.5]), np.array([0.5, 0.5, 0.125]), np.array([1.0, 3.0, 10.0]), tol=tol
    )
    np.testing.assert_array_equal(got, [2.0])
    got = nearest_neighbour_means(
        np.array([0.5, 0.875]), np.array([0.25, 0.75]), np.array([1.0, 3.0]), tol=tol
    )
    np.testing.assert_array_equal(got, [2.0, 3.0])


@pytest.mark.parametrize(
    "how,expected", [("max_abs", 3.0), ("mean_abs", 2.0), ("max", 1.0), ("mean", -1.0)]
)
def test_resampled_worst_case_takes_absolute_values_of_signed_effects(
    how: str, expected: float
) -> None:
    """The worst case over distributions of a resampled APE: max_abs = max |APE_m| (a
    NEGATIVE effect of -3 is the worst), mean_abs = mean |APE_m|, by hand on (-3, 1); NaN
    (a distribution without an estimate in this resample) is skipped."""
    values = np.array([[-3.0, 1.0, np.nan]])
    np.testing.assert_allclose(aggregate_distributions(values, how), [expected])


def test_the_mean_over_draws_skips_draws_without_an_estimate() -> None:
    """A draw with an empty arm has no estimate (NaN) and is left out of the mean over
    draws, as perturbation_effects publishes it: draws (NaN, 4) -> 4, not (0 + 4) / 2;
    (NaN, NaN) -> NaN; (1, 2) -> 1.5. Layout: rows = draw r x distribution d, r-major."""
    values = np.array([np.nan, np.nan, 1.0, 4.0, np.nan, 2.0])  # draw 0: d0..d2, draw 1
    got = mean_over_draws(values.reshape(1, 1, 6, 1), 2)
    np.testing.assert_allclose(got.ravel(), [4.0, np.nan, 1.5])


def test_the_distributions_resampled_are_the_worst_ones_by_abs_ape_and_by_pie() -> None:
    """With bootstrap_effect_distributions = 1, the one distribution with the LARGEST |APE_m|
    (here a negative effect, -5) and the one with the largest PIE % are re-estimated, per
    system, treatment and confounder; the others are not (hand-picked values, chosen so that
    the least extreme ones, d2 by |APE| and d3 by PIE, are a different set)."""
    effects = pd.DataFrame(
        {
            "run_id": "r",
            "system_id": "S1",
            "distribution_id": ["d1", "d2", "d3", "d4"],
            "confounder": ["industry", "industry", "industry", "company"],
            "perturbation_id": "P1",
            "ape_matched": [-5.0, 1.0, 2.0, 0.1],
            "pie_percent": [30.0, 80.0, 20.0, 5.0],
        }
    )
    mask = _worst_distributions(
        effects, "r", ["S1"], pd.Series(["d1", "d2", "d3", "d4"]), ["P1"], 1
    )
    # d1: largest |APE| of industry; d2: largest PIE of industry; d4: the only company one
    np.testing.assert_array_equal(mask[0, :, 0], [True, True, False, True])


def test_a_lone_robustness_score_is_rated_by_its_distance_from_the_ideal_zero() -> None:
    """rating_stability rates robustness metrics by the rule of the published ratings: a
    lone system has the ideal 0 and (WRS) its max_score as worst value, so a WRS of 0 earns
    rating 1 and a WRS of 4.0 out of 7.2 the slice ceil(3 x 4.0 / 7.2) = 2 (of L = 3) --
    the same numbers as assign_ratings with ideal 0, not a null rating."""
    keys = pd.DataFrame({"system_id": ["S1", "S1"], "perturbation_id": ["P1", "P2"]})
    point = np.array([0.0, 4.0])
    boot = np.array([[0.0, 4.0], [0.0, 4.0]])
    out = _summaries("wrs_industry", keys, point, boot, 3, 0.9, np.array([7.2, 7.2]))
    ratings = out.drop_duplicates("perturbation_id").set_index("perturbation_id")["rating"]
    assert ratings.to_dict() == {"P1": 1, "P2": 2}
    assert assign_ratings({"S1": 4.0}, 3, ideal=0.0, maximum=7.2) == {"S1": 2}


# --------------------------------------------------------------------------- user study


def test_paired_tests_of_the_user_study_use_the_lower_tail_of_the_papers_hypothesis() -> None:
    """Table 4's paired hypotheses are 'mean before < mean after' (d = before - after < 0):
    the p-value is the LOWER tail P(T_25 <= t) (scipy.stats.t.cdf), 0.12 and 0.06 for the
    printed t = -1.18 and -1.62 as the paper reports; the two-sided p is twice it."""
    summary = pd.read_csv(project_dir() / "seeds" / "user_study_summary.csv")
    out = user_study_tests(summary).set_index("test_id")
    paired = summary[(summary.test_kind == "paired_t") & (summary.reported_t.fillna(0) != 0)]
    assert len(paired) == 3
    for test in paired.to_dict("records"):
        row = out.loc[test["test_id"]]
        expected = sps.t.cdf(test["reported_t"], test["n"] - 1)
        assert row["p_value"] == pytest.approx(expected, rel=1e-9)
        assert row["p_two_sided"] == pytest.approx(2 * expected, rel=1e-9)
        assert bool(row["rejected"]) == (expected < test["alpha"])
    assert round(float(out.loc["T4_HP2_FAIRNESS", "p_value"]), 2) == 0.12
    assert round(float(out.loc["T4_HP1_P2", "p_value"]), 2) == 0.06


def test_scores_exactly_one_spread_apart_are_separable() -> None:
    """separability's rule: i and j are NOT separable when |s_i - s_j| < max(spread_i,
    spread_j) -- strictly. Worked by hand with dyadic numbers (exact differences): scores
    1.0 and 1.5 with spreads 0.5 differ by exactly the spread -> separable; with spreads
    0.5 and 0.625 -> not separable."""
    flags, reasons = separability(["a", "b"], [1.0, 1.5], [0.5, 0.5])
    assert flags == [True, True] and reasons == [None, None]
    flags, _ = separability(["a", "b"], [1.0, 1.5], [0.5, 0.625])
    assert flags == [False, False]


# --------------------------------------------------------------------------- published ratings


def _score_rows(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    """(metric, system, raw_score, max_score) rows of one run and perturbation, in the
    layout of tsrate.robustness.marts.ratings.score_table."""
    frame = pd.DataFrame(rows, columns=["metric", "system_id", "raw_score", "max_score"])
    robust = frame["metric"].str.startswith(("wrs", "ape", "pie"))
    return frame.assign(
        run_id="r1",
        perturbation_id="P1",
        higher_is_better=frame["metric"] == "sign_accuracy",
        metric_family=np.where(robust, "robustness", "accuracy"),
        outcome=np.where(robust, "max_abs_residual", None),
        is_default_outcome=True,
        score_spread=np.nan,
    )


def test_every_robustness_metric_has_the_ideal_zero_and_wrs_its_worst_value() -> None:
    """DESIGN.md: WRS, APE and PIE have the ideal 0 (no bias, no effect), so a group of
    systems all tied at 0 is rated 1 on each of the six robustness metrics; accuracy metrics
    have no ideal here (tied SMAPE: null rating). A lone WRS is rated against its known
    worst value max_score: 4.0 out of 7.2 -> slice ceil(3 x 4.0 / 7.2) = 2."""
    metrics = ["wrs_industry", "wrs_company", "ape_industry", "ape_company"]
    metrics += ["pie_industry", "pie_company"]
    rows = [(m, s, 0.0, 7.2 if m.startswith("wrs") else np.nan) for m in metrics for s in "ab"]
    rows += [("smape", s, 0.3, np.nan) for s in "ab"]
    rated = assigned_ratings(_score_rows(rows), 3)
    by_metric = rated.groupby("metric")["rating"].agg(lambda r: set(r.astype(object)))
    for metric in metrics:
        assert by_metric[metric] == {1}, metric
    assert rated.loc[rated["metric"] == "smape", "rating"].isna().all()

    lone = assigned_ratings(_score_rows([("wrs_industry", "a", 4.0, 7.2)]), 3)
    assert lone["rating"].tolist() == [2]


def test_a_lone_higher_is_better_score_at_its_ideal_earns_the_top_rating() -> None:
    """For a higher-is-better metric rating L is best, so a lone system AT the metric's ideal
    value gets L (absolute_rating mirrors the level), and one at the worst end gets 1: sign
    accuracy with ideal 100 and worst 0, L = 3 -> 100 earns 3; 0 earns 1; 50 is
    the middle slice ceil(3 x 50 / 100) = 2, mirrored 3 + 1 - 2 = 2."""
    for score, expected in ((100.0, 3), (0.0, 1), (50.0, 2)):
        scores = pd.DataFrame(
            {
                "metric": ["sign_accuracy"],
                "perturbation_id": ["P1"],
                "system_id": ["a"],
                "raw_score": [score],
                "worst": [0.0],
            }
        )
        rated = ratings_frame(
            scores,
            3,
            {"sign_accuracy": True},
            ideal={"sign_accuracy": 100.0},
            maximum_column="worst",
        )
        assert rated["rating"].tolist() == [expected], score


def test_a_resampled_wrs_is_undefined_when_a_group_has_one_window() -> None:
    """The pooled t-test needs two values per group: a resample that draws a single date
    leaves each company with one window, so its WRS is NaN (not a score of 0); the full
    sample (every date once) is the ordinary WRS, here with two clearly different groups
    rejected at every level (1 + 0.8 + 0.6 = 2.4)."""
    dates = np.array(["2024-01-01", "2024-01-02", "2024-01-03"], dtype="datetime64[D]")
    rows = []
    for ticker, base in (("AAA", 1.0), ("BBB", 10.0)):
        for k, date in enumerate(dates):
            rows.append(("S1", "P1", ticker, "Tech", date, base + 0.1 * k))
    frame = pd.DataFrame(
        rows,
        columns=[
            "system_id",
            "perturbation_id",
            "ticker",
            "industry",
            "window_end_date",
            "max_abs_residual",
        ],
    )
    weights = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    keys, point, boot = wrs_resampled(frame, "ticker", LEVELS, "industry", dates, weights)
    assert keys.to_dict("records") == [{"system_id": "S1", "perturbation_id": "P1"}]
    assert point.tolist() == [pytest.approx(2.4)]
    assert boot[0, 0] == pytest.approx(2.4)
    assert np.isnan(boot[1, 0])


def test_rating_stability_rates_accuracy_as_the_published_ratings_do_without_an_ideal() -> None:
    """Accuracy metrics have no ideal in the published ratings, so a lone system is not
    rated (null) -- even with a perfect SMAPE of 0, where a rule with the ideal 0 would
    give rating 1. rating_stability must re-rate by the same rule: null rating, and no
    resample puts the system on any level (so it has no share)."""
    dates = pd.bdate_range("2024-01-01", periods=10)
    rng = np.random.default_rng(0)
    rows = []
    for ticker, date in itertools.product(("AAA", "BBB"), dates):
        rows.append(("r1", "S1", "P0", ticker, "Tech", date, 0.0, 0.5 + rng.random(), 50.0))
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry"]
    columns += ["window_end_date", "smape", "mase", "sign_accuracy"]
    errors = pd.DataFrame(rows, columns=columns).assign(max_abs_residual=rng.random(len(rows)))
    sets = pd.DataFrame(
        {"run_id": ["r1"], "system_id": ["S1"], "perturbation_set": ["P0"], "has_effects": False}
    )
    settings = stability_settings(bootstrap_resamples=20)
    out = accuracy_study_stability(errors, empty_scores(), empty_effects(), sets, settings)
    smape = out.loc[out["metric"] == "smape"]
    assert smape["raw_score"].eq(0.0).all()
    assert smape["rating"].isna().all()
    assert smape["share"].isna().all()  # no resample rates it: no share, not 0
    published = assigned_ratings(_score_rows([("smape", "S1", 0.0, np.nan)]), 3)
    assert published["rating"].isna().all()
