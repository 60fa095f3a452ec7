"""The scoring SQL (int_forecasts_scored, int_windows_located, int_forecast_quantiles_scored,
int_window_quantile_metrics, window_errors, accuracy_scores, probabilistic_scores,
quantile_calibration, robustness_scores) against numpy computations written out from the definitions, on a small
real warehouse of the cheap systems (no ARIMA: the build takes seconds, not minutes).

Every expected number comes from raw.prices, raw.forecasts and raw.forecast_quantiles
alone: residual = forecast − actual, R^max = max |residual|, relative R^max = R^max / |price
at the forecast origin|, SMAPE (eq. 4), MASE (mean |residual| over the mean |one-step
change| of the clean context), sign accuracy (eq. 6), WQL, CRPS, MSIS, 80 % coverage and
|coverage − 0.8|, their per-(system, perturbation) means and sample standard deviations,
and the oracle-rank correlation (scipy's Spearman rho)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    hand_windows,
    ingest,
    read,
    small_study,
)

pytestmark = pytest.mark.slow

TICKERS = ["AAPL", "MSFT", "JPM", "BAC"]
STUDY = dict(
    study_tickers=TICKERS,
    study_start="2022-06-01",
    study_end="2022-10-31",
    context_length=30,
    horizon=6,
    perturbations=["P0", "P1", "P3"],
    systems=["naive", "seasonal_naive", "random", "biased"],
)
SELECT = (
    "+window_errors +accuracy_scores +probabilistic_scores +quantile_calibration +robustness_scores"
)
KEYS = ["system_id", "ticker", "window_end_date", "perturbation_id"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, dbt_target):
    warehouse = tmp_path_factory.mktemp("planted_sql") / "tsrate.duckdb"
    study = small_study(**STUDY)
    ingest(warehouse, TICKERS)
    run_id = forecast_and_build(warehouse, study, dbt_target, select=SELECT)
    return warehouse, run_id, study


def by_hand(warehouse, run_id, study) -> pd.DataFrame:
    """One row per window, every metric recomputed in numpy from the raw tables."""
    quantiles = read(
        warehouse,
        "select q.* from raw.forecast_quantiles q join raw.run_partitions p using (partition_key) "
        "where p.run_id = ?",
        [run_id],
    )
    quantiles = quantiles.set_index(KEYS + ["horizon_step"])[QUANTILE_COLUMNS]
    levels = np.asarray(QUANTILE_LEVELS)
    rows = []
    for key, steps, y, f, context in hand_windows(warehouse, run_id):
        # y: the clean actuals; context: the clean context, context_length values
        scale = np.mean(np.abs(np.diff(context)))  # n - 1 one-step changes
        r = f - y
        row = dict(
            **dict(zip(KEYS, key, strict=True)),
            max_abs_residual=np.max(np.abs(r)),
            mean_residual=np.mean(r),
            last_context_value=context[-1],
            relative_max_abs_residual=np.max(np.abs(r)) / abs(context[-1]),
            smape=np.mean(2 * np.abs(r) / (np.abs(y) + np.abs(f))),
            mase=np.mean(np.abs(r)) / scale,
            # eq. 6: step t's direction against step t-1, step 1 against the origin
            sign_accuracy=100
            * np.mean(
                np.sign(np.diff(np.r_[context[-1], f])) == np.sign(np.diff(np.r_[context[-1], y]))
            ),
            n_steps=len(steps),
        )
        q = np.array([quantiles.loc[key + (int(s),)].to_numpy(float) for s in steps])
        if np.isfinite(q).all():
            # for quantile_calibration: per level, how many actuals lie at or below q, a tie
            # up to 1e-12 of the larger value (relative) counting as at or below
            tie = 1e-12 * np.maximum(np.abs(y)[:, None], np.abs(q))
            at_or_below = y[:, None] <= q + tie
            row.update(
                {
                    f"below_{c}": int(np.sum(at_or_below[:, i]))
                    for i, c in enumerate(QUANTILE_COLUMNS)
                }
            )
            # pinball loss at level a: a(y - q) if y >= q else (1 - a)(q - y)
            pinball = np.where(y[:, None] >= q, levels * (y[:, None] - q), 0.0) + np.where(
                y[:, None] < q, (1 - levels) * (q[:, :] - y[:, None]), 0.0
            )
            low, high = q[:, 0], q[:, -1]  # the 10 % and 90 % quantiles
            winkler = (
                (high - low) + 10 * np.clip(low - y, 0, None) + 10 * np.clip(y - high, 0, None)
            )
            covered = np.mean((low - tie[:, 0] <= y) & (y <= high + tie[:, -1]))
            row.update(
                wql=2 * pinball.sum() / (len(levels) * np.abs(y).sum()),
                crps=2 * pinball.sum() / (len(levels) * len(y)),
                msis=np.mean(winkler) / scale,
                coverage_80=covered,
                coverage_error_80=abs(covered - 0.8),
            )
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def expected(built):
    return by_hand(*built)


WINDOW_COLUMNS = [
    "max_abs_residual",
    "mean_residual",
    "last_context_value",
    "relative_max_abs_residual",
    "smape",
    "mase",
    "sign_accuracy",
    "n_steps",
    "wql",
    "coverage_error_80",
]


def test_window_errors_equal_numpy_by_hand(built, expected):
    warehouse, _, _ = built
    mart = read(warehouse, "select * from marts.window_errors")
    mart["window_end_date"] = pd.to_datetime(mart["window_end_date"])
    merged = expected.merge(mart, on=KEYS, suffixes=("_expected", ""), validate="one_to_one")
    assert len(merged) == len(mart) == len(expected) > 0
    assert set(merged["system_id"]) == set(STUDY["systems"])
    # the residual's sign is seen: some windows over-forecast, others under-forecast
    assert (merged["mean_residual"] > 0).any() and (merged["mean_residual"] < 0).any()
    for column in WINDOW_COLUMNS:
        np.testing.assert_allclose(
            merged[column].astype(float),
            merged[f"{column}_expected"].astype(float),
            rtol=1e-9,
            atol=1e-12,
            err_msg=column,
        )
    # coverage_error_80 is an absolute miscalibration: windows under and over 80 % both occur
    assert (merged["coverage_80"] < 0.8).any() and (merged["coverage_80"] > 0.8).any()


def test_accuracy_and_probabilistic_scores_are_window_means_and_sample_stds(built, expected):
    warehouse, _, _ = built
    groups = ["system_id", "perturbation_id"]
    for table, metrics in [
        ("accuracy_scores", ["smape", "mase", "sign_accuracy"]),
        ("probabilistic_scores", ["wql", "crps", "msis", "coverage_80"]),
    ]:
        mart = read(warehouse, f"select * from marts.{table}")
        for metric in metrics:
            aggregated = expected.groupby(groups)[metric].agg(
                mean="mean", std=lambda x: np.std(x, ddof=1), n="count"
            )
            rows = mart[mart["metric"] == metric].set_index(groups).loc[aggregated.index]
            assert len(rows) == len(aggregated) > 0, (table, metric)
            np.testing.assert_allclose(rows["mean"], aggregated["mean"], rtol=1e-9, err_msg=metric)
            np.testing.assert_allclose(rows["std"], aggregated["std"], rtol=1e-9, err_msg=metric)
            assert rows["n"].tolist() == aggregated["n"].tolist(), (table, metric)


def test_oracle_rank_correlation_is_spearmans_rho(built):
    """Per metric x perturbation x outcome, over the systems: scipy's Spearman rho (average
    ranks for ties) of the estimated effect and the oracle effect."""
    warehouse, _, _ = built
    scores = read(
        warehouse,
        "select * from marts.robustness_scores where oracle_score is not null "
        "and raw_score is not null",
    )
    checked = 0
    for key, block in scores.groupby(["metric", "perturbation_id", "outcome"]):
        if (
            len(block) < 3
            or block["raw_score"].nunique() < 2
            or block["oracle_score"].nunique() < 2
        ):
            continue
        rho = stats.spearmanr(block["raw_score"], block["oracle_score"]).statistic
        np.testing.assert_allclose(block["oracle_rank_correlation"], rho, rtol=1e-9, err_msg=key)
        checked += 1
    assert checked > 0


def test_calibration_shares_count_ties_as_at_or_below(built, expected):
    """The share of actuals at or below each quantile, pooled over steps. Biased on AAPL
    (offset 0) forecasts a point mass at the actual itself: every step ties, and a tie is
    at or below (share 1 at every level)."""
    warehouse, _, _ = built
    mart = read(warehouse, "select * from marts.quantile_calibration")
    steps = expected.groupby(["system_id", "perturbation_id"])["n_steps"].sum()
    checked = 0
    for row in mart.itertuples():
        column = f"below_q{round(row.quantile_level * 100)}"
        group = expected[
            (expected["system_id"] == row.system_id)
            & (expected["perturbation_id"] == row.perturbation_id)
        ]
        share = group[column].sum() / steps.loc[(row.system_id, row.perturbation_id)]
        assert row.observed_share == pytest.approx(share, rel=1e-12)
        assert row.calibration_error == pytest.approx(share - row.quantile_level, abs=1e-12)
        checked += 1
    assert checked == len(STUDY["systems"]) * len(STUDY["perturbations"]) * 9
    aapl = expected[(expected["system_id"] == "biased") & (expected["ticker"] == "AAPL")]
    assert len(aapl) > 0 and (aapl["below_q10"] == aapl["n_steps"]).all()
