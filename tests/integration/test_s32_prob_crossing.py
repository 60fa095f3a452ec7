"""Quantile crossing on a real warehouse: a small study whose system ``random`` has q20 and q80
swapped on every third stored step (crossed) before dbt builds the marts. The marts count the
crossed steps (per window and per system × perturbation) as numpy counts them from the stored
quantiles alone, and score the quantiles as stored (never re-sorted), as utilsforecast scores
them."""

from __future__ import annotations

import numpy as np
import pytest
from utilsforecast import losses

from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    ingest,
    quantile_steps,
    read,
    small_study,
)
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow

KEYS = ["system_id", "ticker", "perturbation_id", "window_end_date"]


#: A cheap study (no ARIMA: the forecasts take seconds); random never crosses by itself
STUDY = dict(
    study_tickers=["AAPL", "MSFT"],
    study_start="2022-06-01",
    study_end="2022-09-30",
    context_length=30,
    horizon=6,
    perturbations=["P0", "P3"],
    systems=["naive", "seasonal_naive", "random", "biased"],
)
CROSSED = "random"


@pytest.fixture(scope="module")
def crossed(tmp_path_factory, dbt_target):
    warehouse = tmp_path_factory.mktemp("crossed") / "tsrate.duckdb"
    study = small_study(**STUDY)
    ingest(warehouse, list(study.tickers))
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        # every third step of random crosses (q20 above q80; the right-hand sides read the
        # old values); biased stores no quantiles
        con.execute(
            "update raw.forecast_quantiles set q20 = q80, q80 = q20 "
            f"where system_id = '{CROSSED}' and horizon_step % 3 = 0"
        )
        con.execute("delete from raw.forecast_quantiles where system_id = 'biased'")
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select="+window_quantile_scores +probabilistic_scores",
    )
    return warehouse, summary.run_id, study


def _stored_crossings(warehouse, run_id, study):
    steps = quantile_steps(warehouse, run_id, study)
    values = steps[QUANTILE_COLUMNS].to_numpy()
    steps["crossed"] = (np.diff(values, axis=1) < 0).any(axis=1)
    steps["window_end_date"] = steps["window_end_date"].astype(str)
    return steps


def test_window_crossed_steps_equal_numpy_on_the_stored_quantiles(crossed):
    warehouse, run_id, study = crossed
    steps = _stored_crossings(warehouse, run_id, study)
    expected = steps.groupby(KEYS)["crossed"].sum()
    assert expected.loc[CROSSED].sum() > 0
    assert expected.drop(index=CROSSED, level="system_id").sum() == 0
    marts = read(warehouse, "select * from marts.window_quantile_scores")
    marts["window_end_date"] = marts["window_end_date"].astype(str)
    got = marts.set_index(KEYS)["n_crossed_steps"]
    # every window with quantiles, and 0 for the rest (biased has none)
    assert (got.reindex(expected.index) == expected).all()
    assert (got.drop(index=expected.index) == 0).all()
    assert len(got.drop(index=expected.index)) > 0


def test_system_crossed_steps_equal_numpy_and_scores_use_the_stored_order(crossed):
    warehouse, run_id, study = crossed
    steps = _stored_crossings(warehouse, run_id, study)
    per_system = steps.groupby(["system_id", "perturbation_id"]).agg(
        crossed=("crossed", "sum"), n=("crossed", "size")
    )
    scores = read(warehouse, "select * from marts.probabilistic_scores")
    for row in scores.itertuples():
        if (row.system_id, row.perturbation_id) in per_system.index:
            want = per_system.loc[(row.system_id, row.perturbation_id)]
            assert (row.n_crossed_steps, row.n_quantile_steps) == (want.crossed, want.n)
        else:
            assert (row.n_crossed_steps, row.n_quantile_steps) == (0, 0)
    # the crossed system's WQL: utilsforecast on the quantiles as stored, mean over windows
    crossed_steps = steps[steps["system_id"] == CROSSED].copy()
    crossed_steps["unique_id"] = (
        crossed_steps["perturbation_id"]
        + "|"
        + crossed_steps["ticker"]
        + "|"
        + crossed_steps["window_end_date"].astype(str)
    )
    crossed_steps = crossed_steps.rename(columns={c: f"m-q{c[1:]}" for c in QUANTILE_COLUMNS})
    models = {"m": [f"m-q{c[1:]}" for c in QUANTILE_COLUMNS]}
    wql = losses.scaled_crps(crossed_steps, models, np.array(QUANTILE_LEVELS)).set_index(
        "unique_id"
    )
    by_perturbation = wql["m"].groupby(wql.index.str.split("|").str[0]).mean()
    got = scores[(scores["system_id"] == CROSSED) & (scores["metric"] == "wql")]
    for row in got.itertuples():
        assert row.mean == pytest.approx(by_perturbation[row.perturbation_id], rel=1e-9)
    # sorting each step's quantiles would lower the WQL (the rearrangement inequality): the
    # marts did not sort them
    resorted = crossed_steps.copy()
    resorted[models["m"]] = np.sort(crossed_steps[models["m"]].to_numpy(), axis=1)
    wql_sorted = losses.scaled_crps(resorted, models, np.array(QUANTILE_LEVELS))
    wql_sorted = wql_sorted.set_index("unique_id")["m"]
    sorted_mean = wql_sorted.groupby(wql_sorted.index.str.split("|").str[0]).mean()
    for row in got.itertuples():
        assert row.mean > sorted_mean[row.perturbation_id] * (1 + 1e-6)
