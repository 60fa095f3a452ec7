"""The robustness of uncertainty (issue 27 item 3): WQL and the 80 % interval's absolute
miscalibration are outcomes of the robustness analysis, beside R^max, on a real warehouse
(the session's quantile study, ``quantile_run`` in conftest.py).

Every number is recomputed independently from raw.forecast_quantiles and raw.prices only:
the per-window outcomes by hand (pinball loss, coverage), WRS with scipy's Student t-test
over industries and companies, the APE oracle as the mean paired difference over every
window, and the ratings with tsrate.methods.ratings.assign_ratings. A system without
quantile forecasts appears with a null score, a null rating and the reason."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    WITH_QUANTILES,
    horizon_clusters,
    quantile_steps,
    read,
)
from tsrate.config import load_companies
from tsrate.methods.ratings import assign_ratings

LEVELS = QUANTILE_LEVELS
COLUMNS = QUANTILE_COLUMNS
OUTCOMES = ["wql", "coverage_error_80"]


def independent_outcomes(warehouse, run_id, study) -> pd.DataFrame:
    """Per window: WQL and |coverage_80 - 0.8| from the stored quantiles and prices."""
    steps = quantile_steps(warehouse, run_id, study)
    rows = []
    keys = ["system_id", "ticker", "perturbation_id", "window_end_date"]
    for (system, ticker, perturbation, end), window in steps.groupby(keys):
        actual = window["y"].to_numpy()
        q = window[COLUMNS].to_numpy(dtype=float)
        diff = actual[:, None] - q
        pinball = np.maximum(LEVELS * diff, (LEVELS - 1) * diff).sum()
        covered = (actual >= q[:, 0]) & (actual <= q[:, -1])
        rows.append(
            {
                "system_id": system,
                "ticker": ticker,
                "window_end_date": pd.Timestamp(end),
                "perturbation_id": perturbation,
                "wql": 2 * pinball / (len(LEVELS) * np.abs(actual).sum()),
                "coverage_error_80": abs(covered.mean() - 0.8),
            }
        )
    return pd.DataFrame(rows)


def test_window_outcomes_equal_an_independent_computation(quantile_run):
    warehouse, run_id, study = quantile_run
    ours = read(warehouse, "select * from marts.window_errors")
    ours["window_end_date"] = pd.to_datetime(ours["window_end_date"])
    expected = independent_outcomes(warehouse, run_id, study)
    keys = ["system_id", "ticker", "window_end_date", "perturbation_id"]
    merged = ours.merge(expected, on=keys, how="left", suffixes=("", "_expected"))
    with_q = merged[merged["system_id"].isin(WITH_QUANTILES)]
    assert len(with_q) == len(expected) > 0
    for outcome in OUTCOMES:
        np.testing.assert_allclose(with_q[outcome], with_q[f"{outcome}_expected"], rtol=1e-9)
    biased = merged[merged["system_id"] == "biased"]
    assert len(biased) > 0 and biased[OUTCOMES].isna().all().all()


def test_wrs_on_probabilistic_outcomes_equals_scipy(quantile_run):
    warehouse, run_id, study = quantile_run
    errors = independent_outcomes(warehouse, run_id, study)
    companies = load_companies().set_index("ticker")["industry"]
    errors["industry"] = errors["ticker"].map(companies)
    levels = read(warehouse, "select confidence, weight from seeds.confidence_levels")
    scores = read(
        warehouse,
        "select * from marts.robustness_scores where measure = 'wrs' and outcome in ?",
        [OUTCOMES],
    )
    checked = 0
    for outcome in OUTCOMES:
        for system in WITH_QUANTILES:
            for perturbation in ("P0", "P3"):
                mine = errors[
                    (errors["system_id"] == system) & (errors["perturbation_id"] == perturbation)
                ]
                expected = {}
                # industries: Technology vs Financials; companies: AAPL vs MSFT (Technology)
                for metric, a, b, column in (
                    ("wrs_industry", "Financials", "Technology", "industry"),
                    ("wrs_company", "AAPL", "MSFT", "ticker"),
                ):
                    x = mine.loc[mine[column] == a, outcome].to_numpy()
                    y = mine.loc[mine[column] == b, outcome].to_numpy()
                    if np.ptp(np.concatenate([x, y])) == 0:
                        p = 1.0
                    else:
                        p = stats.ttest_ind(x, y, equal_var=True).pvalue
                        p = 0.0 if np.isnan(p) else p
                    expected[metric] = sum(
                        w
                        for c, w in zip(levels["confidence"], levels["weight"], strict=True)
                        if p < 1 - c
                    )
                for metric, value in expected.items():
                    got = scores[
                        (scores["outcome"] == outcome)
                        & (scores["system_id"] == system)
                        & (scores["perturbation_id"] == perturbation)
                        & (scores["metric"] == metric)
                    ]
                    assert len(got) == 1, (outcome, system, perturbation, metric)
                    assert got["raw_score"].iloc[0] == pytest.approx(value, abs=1e-9)
                    checked += 1
    assert checked == 2 * len(WITH_QUANTILES) * 2 * 2


def test_ape_oracle_on_probabilistic_outcomes_is_the_mean_paired_difference(quantile_run):
    """Every window ran under P0 and P3, so the ATE oracle of every distribution is the mean
    over all windows of outcome(P3) - outcome(P0); oracle_score is its absolute value. The
    estimate is a mean over treatment draws with its spread."""
    warehouse, run_id, study = quantile_run
    errors = independent_outcomes(warehouse, run_id, study)
    scores = read(
        warehouse,
        "select * from marts.robustness_scores where measure = 'ape' and outcome in ?",
        [OUTCOMES],
    )
    keys = ["system_id", "ticker", "window_end_date"]
    for outcome in OUTCOMES:
        wide = errors.pivot_table(index=keys, columns="perturbation_id", values=outcome)
        for system in WITH_QUANTILES:
            diff = wide.loc[system]
            oracle = abs((diff["P3"] - diff["P0"]).mean())
            got = scores[(scores["outcome"] == outcome) & (scores["system_id"] == system)]
            assert set(got["metric"]) == {"ape_industry", "ape_company"}
            np.testing.assert_allclose(got["oracle_score"], oracle, rtol=1e-9, atol=1e-12)
            assert (got["raw_score"] >= 0).all()
            assert (got["n_draws"] + got["n_draws_left_out"] > 1).all()
            assert got["score_spread"].notna().all()


def test_system_without_quantiles_is_null_with_the_reason(quantile_run):
    warehouse, _, _ = quantile_run
    scores = read(
        warehouse,
        "select * from marts.robustness_scores where system_id = 'biased' and outcome in ?",
        [OUTCOMES],
    )
    metrics = read(
        warehouse,
        "select distinct metric, perturbation_id from marts.robustness_scores "
        "where system_id = 'biased' and outcome = 'max_abs_residual'",
    )
    assert len(scores) == 2 * len(metrics) > 0
    assert scores["raw_score"].isna().all()
    assert scores["score_reason"].str.contains("gives no quantile forecasts").all()
    ratings = read(
        warehouse,
        "select * from marts.ratings where outcome in ? and metric_family = 'robustness'",
        [OUTCOMES],
    )
    biased = ratings[ratings["system_id"] == "biased"]
    assert len(biased) == len(scores)
    assert biased["rating"].isna().all() and biased["rank"].isna().all()
    assert biased["rating_reason"].str.startswith("not rated: not analysed on").all()
    rated = ratings[ratings["system_id"] != "biased"]
    assert (rated["n_systems"] == len(WITH_QUANTILES)).all()
    assert not rated["systems_rated_together"].str.contains("biased").any()


def test_ratings_on_probabilistic_outcomes_follow_the_raw_scores(quantile_run):
    """Each (metric, perturbation, outcome) re-rated directly with assign_ratings from the
    robustness scores; a better (lower) raw score never gets a worse rating."""
    warehouse, _, _ = quantile_run
    ratings = read(
        warehouse,
        "select * from marts.ratings where outcome in ? and raw_score is not null",
        [OUTCOMES],
    )
    scores = read(
        warehouse,
        "select * from marts.robustness_scores where outcome in ? and raw_score is not null",
        [OUTCOMES],
    )
    assert set(ratings["outcome"]) == set(OUTCOMES)
    for (metric, perturbation, outcome), block in scores.groupby(
        ["metric", "perturbation_id", "outcome"]
    ):
        maximum = block["max_score"].max() if block["max_score"].notna().any() else None
        expected = assign_ratings(
            dict(zip(block["system_id"], block["raw_score"], strict=True)),
            3,
            ideal=0.0,
            maximum=maximum,
        )
        got = ratings[
            (ratings["metric"] == metric)
            & (ratings["perturbation_id"] == perturbation)
            & (ratings["outcome"] == outcome)
        ].set_index("system_id")
        assert {s: int(got.loc[s, "rating"]) for s in expected} == expected
        ordered = got.sort_values("raw_score")
        assert ordered["rating"].is_monotonic_increasing


def cluster_robust_interval(changes: pd.Series, clusters: pd.Series) -> tuple[float, float, float]:
    """statsmodels' cluster-robust mean: OLS of the changes on a constant, cov_type 'cluster'
    (CR1: its small-sample factor G / (G - 1) * (N - 1) / (N - K), K = 1) and use_t=True (a t
    quantile with G - 1 degrees of freedom): (standard error, lower end, upper end)."""
    import statsmodels.api as sm

    groups = pd.factorize(clusters)[0]
    fit = sm.OLS(changes.to_numpy(), np.ones(len(changes))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    assert fit.df_resid_inference == len(set(groups)) - 1
    low, high = fit.conf_int(alpha=0.05)[0]
    return float(fit.bse[0]), float(low), float(high)


def test_uncertainty_effects_equal_paired_differences_with_a_clustered_interval(quantile_run):
    """mean_change = mean over windows of outcome(P3) - outcome(P0); the interval is
    statsmodels' cluster-robust t interval of that mean, centred on it, over clusters = a
    ticker's windows whose origins lie in the same stretch of `horizon` trading days, from
    the first window's origin. Where the clusters have equal sizes it is scipy's t interval
    over the cluster means."""
    warehouse, run_id, study = quantile_run
    errors = independent_outcomes(warehouse, run_id, study)
    errors["cluster"] = horizon_clusters(warehouse, errors, study.horizon)
    effects = read(warehouse, "select * from marts.uncertainty_effects")
    keys = ["system_id", "ticker", "window_end_date", "cluster"]
    unequal = 0
    for outcome in OUTCOMES:
        wide = errors.pivot_table(index=keys, columns="perturbation_id", values=outcome)
        wide["change"] = wide["P3"] - wide["P0"]
        for system in WITH_QUANTILES:
            mine = wide.loc[system]
            cluster = mine.index.get_level_values("cluster").to_series(index=mine.index)
            means = mine.groupby(level="cluster")["change"].mean()
            sizes = mine.groupby(level="cluster")["change"].size()
            if means.nunique() == 1:  # every cluster the same: the interval is a point
                se, low, high = 0.0, mine["change"].mean(), mine["change"].mean()
            else:
                se, low, high = cluster_robust_interval(mine["change"], cluster)
            if sizes.nunique() == 1:  # equal sizes: the t interval over the cluster means
                assert se == pytest.approx(stats.sem(means), rel=1e-9, abs=1e-15)
            else:
                unequal += 1
            got = effects[(effects["system_id"] == system) & (effects["outcome"] == outcome)]
            assert len(got) == 1
            row = got.iloc[0]
            assert row["mean_change"] == pytest.approx(mine["change"].mean(), abs=1e-12)
            assert row["n_clusters"] == len(means) >= 2
            assert row["change_se"] == pytest.approx(se, rel=1e-9, abs=1e-15)
            assert row["change_ci_low"] == pytest.approx(low, rel=1e-6, abs=1e-12)
            assert row["change_ci_high"] == pytest.approx(high, rel=1e-6, abs=1e-12)
            assert bool(row["beyond_noise"]) == bool(low > 0 or high < 0)
    # the study's last cluster of a ticker is partial: the check covers unequal clusters,
    # where an interval over the cluster means is centred elsewhere than the change
    assert unequal > 0
    biased = effects[effects["system_id"] == "biased"]
    assert len(biased) == 2 and biased["mean_change"].isna().all()
    assert biased["reason"].str.contains("no quantile forecasts").all()


def test_every_uncertainty_interval_contains_its_change(quantile_run):
    """What the report prints side by side agrees: in every row of marts.uncertainty_effects
    with an interval, change_ci_low <= mean_change <= change_ci_high, and beyond_noise is
    exactly '0 lies outside the interval' (a point interval at a change of 0 is not beyond)."""
    warehouse, _, _ = quantile_run
    effects = read(warehouse, "select * from marts.uncertainty_effects")
    rows = effects[effects["change_ci_low"].notna()]
    assert len(rows) >= 2 * len(WITH_QUANTILES)
    assert rows["change_ci_high"].notna().all() and rows["mean_change"].notna().all()
    assert (rows["change_ci_low"] <= rows["mean_change"]).all()
    assert (rows["mean_change"] <= rows["change_ci_high"]).all()
    tested = rows[rows["beyond_noise"].notna()]
    assert len(tested) == len(rows)  # every pair has quantiles in this study
    outside = (tested["change_ci_low"] > 0) | (tested["change_ci_high"] < 0)
    assert (tested["beyond_noise"].astype(bool) == outside).all()
    # the beyond-noise verdict's direction is the sign of the change shown beside it
    beyond = tested[tested["beyond_noise"].astype(bool)]
    assert ((beyond["mean_change"] > 0) == (beyond["change_ci_low"] > 0)).all()


def test_leave_one_out_equals_a_direct_recomputation(quantile_run):
    """Every published rating re-rated by tsrate.methods.ratings.ratings_frame with each
    other system removed, from marts.ratings' raw scores and robustness_scores' max_score."""
    from tsrate.methods.ratings import ratings_frame
    from tsrate.robustness.marts.ratings import CORE_IDEALS

    warehouse, _, _ = quantile_run
    ratings = read(warehouse, "select * from marts.ratings where raw_score is not null")
    maxima = read(
        warehouse,
        "select metric, perturbation_id, system_id, outcome, max_score from marts.robustness_scores",
    )
    ratings = ratings.merge(
        maxima, on=["metric", "perturbation_id", "system_id", "outcome"], how="left"
    )
    loo = read(warehouse, "select * from marts.rating_leave_one_out")
    assert len(loo) == len(ratings)
    ratings["outcome_key"] = ratings["outcome"].fillna("")
    loo["outcome_key"] = loo["outcome"].fillna("")
    checked = 0
    for outcome, block in ratings.groupby("outcome_key"):
        higher = block.groupby("metric")["higher_is_better"].first().to_dict()
        for gone in sorted(set(block["system_id"])):
            rest = block[block["system_id"] != gone]
            again = ratings_frame(
                rest, 3, higher, ideal=CORE_IDEALS, maximum_column="max_score"
            ).set_index(["metric", "perturbation_id", "system_id"])["rating"]
            for row in rest.itertuples():
                new = again.loc[(row.metric, row.perturbation_id, row.system_id)]
                same = (pd.isna(new) and pd.isna(row.rating)) or new == row.rating
                check = loo[
                    (loo["outcome_key"] == outcome)
                    & (loo["metric"] == row.metric)
                    & (loo["perturbation_id"] == row.perturbation_id)
                    & (loo["system_id"] == row.system_id)
                ].iloc[0]
                text = check["changed_by_removing"]
                named = [] if pd.isna(text) else [n.split(" (")[0] for n in text.split(", ")]
                group = block[
                    (block["metric"] == row.metric)
                    & (block["perturbation_id"] == row.perturbation_id)
                ]
                assert (gone in named) == (not same), (
                    gone,
                    row.system_id,
                    row.rating,
                    new,
                    check.to_dict(),
                    group[["system_id", "raw_score", "rating", "max_score"]].to_dict("records"),
                )
                checked += 1
    assert checked > 100


def test_the_report_shows_the_uncertainty_effects_leave_one_out_and_leakage(quantile_run):
    from tsrate.robustness.report.numbers import num
    from tsrate.robustness.report.probabilistic import provenance_section
    from tsrate.robustness.report.relative import leave_one_out_section, uncertainty_section

    warehouse, _, _ = quantile_run
    effects = read(warehouse, "select * from marts.uncertainty_effects")
    html = uncertainty_section(effects, num)
    assert html.count("<tr>") == 2 + len(effects)  # a header row per outcome's table
    assert 'data-mart="marts.uncertainty_effects"' in html
    assert html.count("no quantile forecasts") == 2  # biased, at both outcomes
    verdicts = effects["beyond_noise"].dropna()
    assert html.count("beyond noise)") == int(verdicts.astype(bool).sum())
    loo = read(warehouse, "select * from marts.rating_leave_one_out where outcome is null")
    html = leave_one_out_section(loo, num)
    changing = int(loo["changes_if_one_removed"].sum())
    assert f"Of {len(loo)} ratings, {changing} change" in html
    assert html.count("<tr>") == (1 + changing if changing else 0)
    provenance = read(warehouse, "select * from marts.run_provenance")
    leakage = read(
        warehouse,
        "select system_id, count(*) as n_windows, "
        "count(*) filter (where in_training_data) as n_flagged, "
        "count(in_training_data) as n_known, min(leakage_basis) as leakage_basis, "
        "min(leakage_reason) as leakage_reason from marts.window_leakage group by 1",
    )
    html = provenance_section(provenance, leakage)
    assert html.count("windows (no training)") == len(leakage) == len(provenance)
