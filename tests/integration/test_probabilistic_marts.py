"""Quantile forecasts and the probabilistic marts on a real warehouse (the session's quantile
study, ``quantile_run`` in conftest.py), checked against utilsforecast.losses computed from
the stored quantiles and prices alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from utilsforecast import losses

from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    WITH_QUANTILES,
    quantile_steps,
    read,
)

LEVELS = list(QUANTILE_LEVELS)
COLUMNS = QUANTILE_COLUMNS


def stored_steps(warehouse, run_id, study) -> pd.DataFrame:
    """The stored quantile steps (:func:`tests.support.warehouses.quantile_steps`) in
    utilsforecast's layout: one series per window (``unique_id``), columns ``m-q10``..."""
    steps = quantile_steps(warehouse, run_id, study)
    steps["unique_id"] = (
        steps["system_id"]
        + "|"
        + steps["ticker"]
        + "|"
        + steps["perturbation_id"]
        + "|"
        + steps["window_end_date"].astype(str)
    )
    return steps.rename(columns=dict(zip(COLUMNS, [f"m-q{c[1:]}" for c in COLUMNS], strict=True)))


def test_window_metrics_equal_utilsforecast(quantile_run):
    warehouse, run_id, study = quantile_run
    steps = stored_steps(warehouse, run_id, study)
    assert set(steps["system_id"]) == set(WITH_QUANTILES)
    models = {"m": [f"m-q{c[1:]}" for c in COLUMNS]}
    wql = losses.scaled_crps(steps, models, np.array(LEVELS)).set_index("unique_id")["m"]
    crps = 2 * losses.mqloss(steps, models, np.array(LEVELS)).set_index("unique_id")["m"]
    interval = steps.rename(columns={"m-q10": "m-lo-80", "m-q90": "m-hi-80"})
    coverage = losses.coverage(interval, ["m"], level=80).set_index("unique_id")["m"]
    winkler = losses.winkler_score(interval, ["m"], level=80).set_index("unique_id")["m"]
    msis = winkler / steps.groupby("unique_id")["scale"].first()

    marts = read(warehouse, "select * from marts.window_quantile_scores where wql is not null")
    marts["unique_id"] = (
        marts["system_id"]
        + "|"
        + marts["ticker"]
        + "|"
        + marts["perturbation_id"]
        + "|"
        + marts["window_end_date"].astype(str)
    )
    marts = marts.set_index("unique_id").sort_index()
    assert len(marts) == len(wql) > 0
    np.testing.assert_allclose(marts["wql"], wql.loc[marts.index], rtol=1e-9)
    np.testing.assert_allclose(marts["crps"], crps.loc[marts.index], rtol=1e-9)
    np.testing.assert_allclose(marts["coverage_80"], coverage.loc[marts.index], rtol=1e-12)
    np.testing.assert_allclose(marts["msis"], msis.loc[marts.index], rtol=1e-9)


def test_a_system_without_quantiles_gets_nulls_and_a_reason(quantile_run):
    warehouse, _, study = quantile_run
    biased = read(
        warehouse, "select * from marts.window_quantile_scores where system_id = 'biased'"
    )
    assert len(biased) > 0 and biased["wql"].isna().all() and biased["msis"].isna().all()
    assert biased["probabilistic_reason"].str.contains("no quantile forecasts").all()
    scores = read(warehouse, "select * from marts.probabilistic_scores where system_id = 'biased'")
    assert (
        len(scores) == len(study.perturbations) * 4
        and (scores["n"] == 0).all()
        and scores["reason"].notna().all()
    )
    others = read(warehouse, "select * from marts.probabilistic_scores where system_id <> 'biased'")
    assert (others["n"] > 0).all() and others["reason"].isna().all()


def test_calibration_shares_by_hand(quantile_run):
    warehouse, run_id, study = quantile_run
    steps = stored_steps(warehouse, run_id, study)
    every = read(warehouse, "select * from marts.quantile_calibration")
    # biased gives no quantiles: its rows stay, with null shares, n_steps = 0 and the reason
    unscored = every[every["system_id"] == "biased"]
    assert len(unscored) == len(study.perturbations) * 9 and (unscored["n_steps"] == 0).all()
    assert unscored["observed_share"].isna().all() and unscored["reason"].notna().all()
    marts = every[every["system_id"] != "biased"]
    assert (
        len(marts) == len(WITH_QUANTILES) * len(study.perturbations) * 9
        and marts["reason"].isna().all()
    )
    for row in marts.itertuples():
        group = steps[
            (steps["system_id"] == row.system_id)
            & (steps["perturbation_id"] == row.perturbation_id)
        ]
        column = f"m-q{round(row.quantile_level * 100)}"
        # at or below, a tie up to 1e-12 of the larger value (relative) counting as at or
        # below (this study holds ties that rounding puts an ulp above)
        tie = 1e-12 * np.maximum(group["y"].abs(), group[column].abs())
        share = np.mean(group["y"] <= group[column] + tie)
        assert row.observed_share == pytest.approx(share)
        assert row.calibration_error == pytest.approx(share - row.quantile_level)
        assert row.n_steps == len(group)
    # the random system's quantiles are its own range's: q90 sits at 90 % of the range
    assert marts["quantile_level"].round(6).isin(LEVELS).all()


def test_run_provenance_fingerprints_the_price_rows_and_states_training_data(quantile_run):
    import hashlib

    import duckdb

    import tsrate

    warehouse, run_id, study = quantile_run
    provenance = read(warehouse, "select * from marts.run_provenance").set_index("system_id")
    assert sorted(provenance.index) == sorted(study.systems)
    prices = read(
        warehouse,
        "select ticker, price_date, close from raw.prices where list_contains(?, ticker) "
        "and price_date between ? and ? order by ticker, price_date",
        [list(study.tickers), study.start, study.end],
    )
    digest = hashlib.sha256()
    for row in prices.itertuples():
        digest.update(f"{row.ticker}|{row.price_date.date()}|{round(row.close, 10)}\n".encode())
    assert (provenance["price_rows_fingerprint"] == digest.hexdigest()).all()
    assert (provenance["price_rows"] == len(prices)).all()
    assert (provenance["tsrate_version"] == tsrate.__version__).all()
    assert (provenance["duckdb_version"] == duckdb.__version__).all()
    assert provenance["git_revision"].notna().all() or provenance["git_reason"].notna().all()
    assert provenance.loc["arima", "training_data"].startswith("none")
    assert (provenance["partitions"] == len(study.tickers) * len(study.perturbations)).all()
