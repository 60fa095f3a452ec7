"""The marts that turn robustness scores into what a reader acts on (partial_orders,
confounder_comparison, group_comparisons, modality_pairs, ratings, uncertainty_effects) and
the perturbation sets the causal draws use, against hand-computed cases and independent
recomputations.

``test_rating_marts_unit_cases_pass`` builds those marts on an empty warehouse with the dbt
unit cases forced on (``TSRATE_ALWAYS_UNIT_TESTS=1``: a partial build runs them, and a failing
case fails the build). The cases in the models' YAML give a few hand-made rows and the
outputs worked out by hand from each mart's definition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.integration.builds import unit_cases_pass
from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    WITH_QUANTILES,
    horizon_clusters,
    independent_window_errors,
    quantile_steps,
    read,
)

pytestmark = pytest.mark.slow

#: The marts whose hand-computed unit cases run here (with their parents' cases).
UNIT_CASE_MARTS = (
    "+partial_orders +confounder_comparison +group_comparisons +modality_pairs +uncertainty_effects"
)


def test_rating_marts_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", *UNIT_CASE_MARTS.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def _outcomes(warehouse, run_id, study) -> pd.DataFrame:
    """Per window: WQL = 2 sum pinball / (9 sum |actual|), the 80 % coverage (q10 <= actual
    <= q90) and |coverage - 0.8|, from raw.forecast_quantiles and raw.prices only."""
    steps = quantile_steps(warehouse, run_id, study)
    rows = []
    keys = ["system_id", "ticker", "perturbation_id", "window_end_date"]
    for key, window in steps.groupby(keys):
        y = window["y"].to_numpy()
        q = window[QUANTILE_COLUMNS].to_numpy(dtype=float)
        diff = y[:, None] - q
        pinball = np.maximum(QUANTILE_LEVELS * diff, (QUANTILE_LEVELS - 1) * diff).sum()
        coverage = np.mean((q[:, 0] <= y) & (y <= q[:, -1]))
        rows.append(
            dict(
                zip(keys, key, strict=True),
                wql=2 * pinball / (len(QUANTILE_LEVELS) * np.abs(y).sum()),
                coverage_80=coverage,
                coverage_error_80=abs(coverage - 0.8),
            )
        )
    frame = pd.DataFrame(rows)
    frame["window_end_date"] = pd.to_datetime(frame["window_end_date"])
    return frame


def test_ratings_count_and_list_the_systems_scored_on_the_same_question(quantile_run):
    """n_systems and systems_rated_together: the systems with a score for the same metric,
    perturbation and outcome (robustness_scores; accuracy_scores for the accuracy metrics,
    whose outcome is the metric itself), sorted, space-separated; a system without a score
    is listed with a null rating but not counted."""
    warehouse, _, _ = quantile_run
    scored = read(
        warehouse,
        "select metric, perturbation_id, outcome, system_id from marts.robustness_scores "
        "where raw_score is not null",
    )
    scored = scored.groupby(["metric", "perturbation_id", "outcome"])["system_id"].agg(
        lambda s: " ".join(sorted(s))
    )
    ratings = read(warehouse, "select * from marts.ratings where metric_family = 'robustness'")
    assert ratings["outcome"].nunique() >= 3 and ratings["perturbation_id"].nunique() == 2
    assert ratings["raw_score"].isna().any()  # biased on wql and coverage
    for row in ratings.itertuples():
        expected = scored.loc[(row.metric, row.perturbation_id, row.outcome)]
        assert row.systems_rated_together == expected, row
        assert row.n_systems == len(expected.split()), row


def test_uncertainty_effects_means_se_coverage_change_and_estimates(quantile_run):
    """Per system and outcome (P3 against P0): mean_clean and mean_perturbed = the means of
    the outcome over the P0 and the P3 windows; coverage_80_change = mean coverage(P3) -
    coverage(P0), signed; change_se = the cluster-robust (CR1) standard error of the mean
    change (statsmodels' OLS on a constant, cov_type 'cluster') over clusters of a ticker's
    windows whose origins lie in the same stretch of `horizon` trading days; ape_industry /
    ape_company = robustness_scores' APE for that confounder and outcome."""
    import statsmodels.api as sm

    warehouse, run_id, study = quantile_run
    windows = _outcomes(warehouse, run_id, study)
    windows["cluster"] = horizon_clusters(warehouse, windows, study.horizon)
    effects = read(warehouse, "select * from marts.uncertainty_effects")
    ape = read(
        warehouse,
        "select system_id, outcome, metric, raw_score from marts.robustness_scores "
        "where measure = 'ape' and perturbation_id = 'P3'",
    ).set_index(["system_id", "outcome", "metric"])["raw_score"]
    keys = ["system_id", "ticker", "window_end_date", "cluster"]
    wide = {
        column: windows.pivot_table(index=keys, columns="perturbation_id", values=column)
        for column in ["wql", "coverage_80", "coverage_error_80"]
    }
    checked = 0
    for outcome in ["wql", "coverage_error_80"]:
        for system in WITH_QUANTILES:
            mine = wide[outcome].loc[system]
            cover = wide["coverage_80"].loc[system]
            changes = mine["P3"] - mine["P0"]
            clusters = changes.groupby(level="cluster").mean()
            groups = pd.factorize(changes.index.get_level_values("cluster"))[0]
            fit = sm.OLS(changes.to_numpy(), np.ones(len(changes))).fit(
                cov_type="cluster", cov_kwds={"groups": groups}
            )
            se = 0.0 if clusters.nunique() == 1 else float(fit.bse[0])
            row = effects[(effects["system_id"] == system) & (effects["outcome"] == outcome)]
            assert len(row) == 1
            row = row.iloc[0]
            assert row["mean_clean"] == pytest.approx(mine["P0"].mean(), rel=1e-9)
            assert row["mean_perturbed"] == pytest.approx(mine["P3"].mean(), rel=1e-9)
            change = (cover["P3"] - cover["P0"]).mean()
            assert row["coverage_80_change"] == pytest.approx(change, abs=1e-12)
            assert row["change_se"] == pytest.approx(se, rel=1e-9, abs=1e-15)
            for metric in ["ape_industry", "ape_company"]:
                assert row[metric] == pytest.approx(ape.loc[(system, outcome, metric)], rel=1e-12)
            checked += 1
    assert checked == 2 * len(WITH_QUANTILES)
    # the checks can fail: coverage moves, and the two confounders give different estimates
    assert (effects["coverage_80_change"].dropna() != 0).any()
    assert (effects["ape_industry"] != effects["ape_company"]).any()


def test_leaderboard_task_errors_are_window_means(quantile_run):
    """leaderboard_tasks.test_error for a task (ticker x perturbation) = the mean over the
    task's windows of the window's MASE, SMAPE (from raw.forecasts and raw.prices) and WQL
    (from raw.forecast_quantiles); n_windows counts them; a system without quantiles has no
    WQL task error (null, 0 windows)."""
    warehouse, run_id, study = quantile_run
    windows = independent_window_errors(warehouse, run_id)
    windows = windows.merge(
        _outcomes(warehouse, run_id, study)[
            ["system_id", "ticker", "perturbation_id", "window_end_date", "wql"]
        ],
        on=["system_id", "ticker", "perturbation_id", "window_end_date"],
        how="left",
    )
    keys = ["system_id", "ticker", "perturbation_id"]
    tasks = read(warehouse, "select * from marts.leaderboard_tasks").set_index([*keys, "metric"])
    checked = 0
    for metric in ["mase", "smape", "wql"]:
        expected = windows.groupby(keys)[metric].agg(["mean", "count"])
        for key, row in expected.iterrows():
            got = tasks.loc[(*key, metric)]
            if row["count"] == 0:
                assert pd.isna(got["test_error"]) and got["n_windows"] == 0, key
                continue
            assert got["test_error"] == pytest.approx(row["mean"], rel=1e-9), (key, metric)
            assert got["n_windows"] == row["count"], (key, metric)
            checked += 1
    assert checked == 3 * len(WITH_QUANTILES) * 3 * 2 + 2 * 3 * 2  # biased: mase, smape
