"""Quantile forecasts and the probabilistic marts on a real warehouse, checked against
utilsforecast.losses computed from the stored quantiles and prices alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from utilsforecast import losses

from tests.integration.helpers import ingest, read, small_study
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

LEVELS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
COLUMNS = [f"q{round(level * 100)}" for level in LEVELS]
SELECT = "+window_quantile_scores +probabilistic_scores +quantile_calibration +run_provenance"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("probabilistic")
    warehouse = root / "w.duckdb"
    study = small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-06-01",
        study_end="2022-09-30",
        context_length=30,
        horizon=6,
        perturbations=["P0", "P3"],
        systems=["naive", "seasonal_naive", "arima", "random", "biased"],
    )
    ingest(warehouse, list(study.tickers))
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        # a system whose partitions hold no quantiles (as if stored before they were kept)
        con.execute("delete from raw.forecast_quantiles where system_id = 'biased'")
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=root / "target",
        on_line=lambda line: None,
        select=SELECT,
    )
    return warehouse, summary.run_id, study


def stored_steps(warehouse, run_id, study) -> pd.DataFrame:
    """Every quantile forecast step with its clean actual and the window's MASE scale,
    from raw.forecast_quantiles and raw.prices only."""
    quantiles = read(
        warehouse,
        "select q.* from raw.forecast_quantiles q join raw.run_partitions p using (partition_key) "
        "where p.run_id = ?",
        [run_id],
    )
    prices = read(warehouse, "select ticker, price_date, close from raw.prices order by 1, 2")
    frames = []
    for ticker, group in quantiles.groupby("ticker"):
        closes = prices.loc[prices["ticker"] == ticker, "close"].to_numpy()
        dates = pd.to_datetime(prices.loc[prices["ticker"] == ticker, "price_date"])
        position = {d: i for i, d in enumerate(dates)}
        end = np.array([position[pd.Timestamp(d)] for d in group["window_end_date"]])
        group = group.assign(y=closes[end + group["horizon_step"].to_numpy()])
        n = study.context_length
        scale = {e: np.mean(np.abs(np.diff(closes[e - n + 1 : e + 1]))) for e in set(end)}
        frames.append(group.assign(scale=[scale[e] for e in end]))
    steps = pd.concat(frames, ignore_index=True)
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


def test_window_metrics_equal_utilsforecast(built):
    warehouse, run_id, study = built
    steps = stored_steps(warehouse, run_id, study)
    assert set(steps["system_id"]) == {"naive", "seasonal_naive", "arima", "random"}
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


def test_a_system_without_quantiles_gets_nulls_and_a_reason(built):
    warehouse, _, _ = built
    biased = read(
        warehouse, "select * from marts.window_quantile_scores where system_id = 'biased'"
    )
    assert len(biased) > 0 and biased["wql"].isna().all() and biased["msis"].isna().all()
    assert biased["probabilistic_reason"].str.contains("no quantile forecasts").all()
    scores = read(warehouse, "select * from marts.probabilistic_scores where system_id = 'biased'")
    assert len(scores) == 2 * 4 and (scores["n"] == 0).all() and scores["reason"].notna().all()
    others = read(warehouse, "select * from marts.probabilistic_scores where system_id <> 'biased'")
    assert (others["n"] > 0).all() and others["reason"].isna().all()


def test_calibration_shares_by_hand(built):
    warehouse, run_id, study = built
    steps = stored_steps(warehouse, run_id, study)
    every = read(warehouse, "select * from marts.quantile_calibration")
    # biased gives no quantiles: its rows stay, with null shares, n_steps = 0 and the reason
    unscored = every[every["system_id"] == "biased"]
    assert len(unscored) == 2 * 9 and (unscored["n_steps"] == 0).all()
    assert unscored["observed_share"].isna().all() and unscored["reason"].notna().all()
    marts = every[every["system_id"] != "biased"]
    assert len(marts) == 4 * 2 * 9 and marts["reason"].isna().all()
    for row in marts.itertuples():
        group = steps[
            (steps["system_id"] == row.system_id)
            & (steps["perturbation_id"] == row.perturbation_id)
        ]
        column = f"m-q{round(row.quantile_level * 100)}"
        share = np.mean(group["y"] <= group[column])
        assert row.observed_share == pytest.approx(share)
        assert row.calibration_error == pytest.approx(share - row.quantile_level)
        assert row.n_steps == len(group)
    # the random system's quantiles are its own range's: q90 sits at 90 % of the range
    assert marts["quantile_level"].round(6).isin(LEVELS).all()


def test_run_provenance_fingerprints_the_price_rows_and_states_training_data(built):
    import hashlib

    import duckdb

    import tsrate

    warehouse, run_id, study = built
    provenance = read(warehouse, "select * from marts.run_provenance").set_index("system_id")
    assert sorted(provenance.index) == sorted(study.systems)
    prices = read(
        warehouse,
        "select ticker, price_date, close from raw.prices where ticker in ('AAPL', 'JPM') "
        "and price_date between ? and ? order by ticker, price_date",
        [study.start, study.end],
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
    assert (provenance["partitions"] == 2 * 2).all()
