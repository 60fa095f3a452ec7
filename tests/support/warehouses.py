"""Small real warehouses for the tests (the studies, the prices ingested, reads) and an
independent error computation. Nothing here starts a process: forecasting with workers and
dbt builds are tests/integration/builds.py's."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import NamedTuple

import duckdb
import numpy as np
import pandas as pd

from tsrate.config import Study
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.sources import load_skfolio_sp500

SMALL_STUDY = dict(
    study_tickers=["AAPL", "MSFT", "JPM", "BAC"],
    study_start="2022-06-01",
    study_end="2022-12-28",
    context_length=40,
    horizon=10,
    perturbations=["P0", "P1", "P2", "P3"],
    systems=["naive", "arima", "random", "biased"],
)


def small_study(**overrides) -> Study:
    values = dict(SMALL_STUDY)
    values.update(overrides)
    return Study.from_mapping(values)


def ingest(warehouse: Path, tickers: list[str]) -> None:
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(tickers), "skfolio")


def warehouse_lacking_a_day(
    tmp_path: Path, tickers: list[str], day: dt.date, ticker: str = "AAPL"
) -> tuple[Path, pd.DataFrame]:
    """A warehouse of ``tickers`` whose first source lacked ``ticker``'s ``day`` (ingested,
    then that one row deleted from raw.prices); returns it and the day's row, for a later
    file to merge (:func:`merge_day`)."""
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, tickers)
    with connect(warehouse) as con:
        row = con.execute(
            "select ticker, price_date, close from raw.prices where ticker = ? and price_date = ?",
            [ticker, day],
        ).df()
        assert len(row) == 1
        con.execute("delete from raw.prices where ticker = ? and price_date = ?", [ticker, day])
    return warehouse, row


def merge_day(warehouse: Path, row: pd.DataFrame, ticker: str = "AAPL") -> None:
    """A later file holds the day :func:`warehouse_lacking_a_day` left out: merged (not
    ``--replace``), it is added and nothing stored is changed."""
    with connect(warehouse) as con:
        changes = store_prices(con, row, "a later file")
    assert changes[ticker].added == 1 and changes[ticker].changed == 0


#: The error marts and everything they need; tests of those marts skip the rating models.
ERROR_MARTS = "+window_errors +accuracy_scores +window_inputs systems perturbations"


#: The quantile study the probabilistic, uncertainty and leaderboard tests read (one
#: warehouse for the session, :func:`tests.integration.conftest.quantile_run`): three
#: companies in two industries (AAPL, MSFT Technology; JPM Financials), P0 and P3, every
#: system that gives quantile forecasts and ``biased``, whose quantiles are deleted (a system
#: without quantile forecasts, as one stored before they were kept).
QUANTILE_STUDY = dict(
    study_tickers=["AAPL", "MSFT", "JPM"],
    study_start="2022-06-01",
    study_end="2022-10-31",
    context_length=30,
    horizon=6,
    perturbations=["P0", "P3"],
    systems=["naive", "seasonal_naive", "arima", "random", "biased"],
)
#: The systems of :data:`QUANTILE_STUDY` that give quantile forecasts.
WITH_QUANTILES = ["naive", "seasonal_naive", "arima", "random"]
#: Every mart the quantile study's tests read, and what they need.
QUANTILE_MARTS = (
    "+window_quantile_scores +probabilistic_scores +quantile_calibration +run_provenance "
    "+ratings +uncertainty_effects +rating_leave_one_out +window_leakage "
    "+leaderboard +leaderboard_tasks"
)


#: The stored quantile levels and their columns in raw.forecast_quantiles.
QUANTILE_LEVELS = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
QUANTILE_COLUMNS = [f"q{round(level * 100)}" for level in QUANTILE_LEVELS]


class BuiltRun(NamedTuple):
    """A forecasted and built warehouse that tests only read."""

    warehouse: Path
    run_id: str
    study: Study


def read(warehouse: Path, sql: str, params=None) -> pd.DataFrame:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, params or []).df()
    finally:
        con.close()


def rows(warehouse: Path, sql: str, params=None) -> list[tuple]:
    """:func:`read`'s rows as tuples."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def hand_windows(warehouse: Path, run_id: str):
    """Each stored forecast window of ``run_id`` read from raw.prices and raw.forecasts only:
    ((system_id, ticker, window_end_date, perturbation_id), horizon steps, clean actuals,
    forecasts, clean context of ``context_length`` values ending at the origin)."""
    run = read(warehouse, "select * from raw.runs where run_id = ?", [run_id]).iloc[0]
    n = int(run["context_length"])
    forecasts = read(
        warehouse,
        "select f.* from raw.forecasts f join raw.run_partitions p using (partition_key) "
        "where p.run_id = ?",
        [run_id],
    )
    prices = read(
        warehouse, "select ticker, price_date, close from raw.prices order by ticker, price_date"
    )
    for ticker, group in prices.groupby("ticker"):
        closes = group["close"].to_numpy()
        position = {d: i for i, d in enumerate(pd.to_datetime(group["price_date"]))}
        for key, window in forecasts[forecasts["ticker"] == ticker].groupby(
            ["system_id", "window_end_date", "perturbation_id"]
        ):
            window = window.sort_values("horizon_step")
            end = position[pd.Timestamp(key[1])]
            steps = window["horizon_step"].to_numpy()
            actual = closes[end + steps]
            context = closes[end - n + 1 : end + 1]
            key = (key[0], ticker, pd.Timestamp(key[1]), key[2])
            yield key, steps, actual, window["forecast"].to_numpy(), context


def independent_window_errors(warehouse: Path, run_id: str) -> pd.DataFrame:
    """Recompute window errors in pandas from raw.prices and raw.forecasts only."""
    rows = []
    for key, _, actual, forecast, context in hand_windows(warehouse, run_id):
        residual = forecast - actual
        smape = np.mean(np.abs(actual - forecast) / ((np.abs(actual) + np.abs(forecast)) / 2))
        mase = np.mean(np.abs(residual)) / np.mean(np.abs(np.diff(context)))
        previous_forecast = np.concatenate([[context[-1]], forecast[:-1]])
        previous_actual = np.concatenate([[context[-1]], actual[:-1]])
        sign = (
            np.mean(np.sign(forecast - previous_forecast) == np.sign(actual - previous_actual))
            * 100
        )
        rows.append(
            dict(
                zip(
                    ["system_id", "ticker", "window_end_date", "perturbation_id"], key, strict=True
                ),
                max_abs_residual=np.abs(residual).max(),
                smape=smape,
                mase=mase,
                sign_accuracy=sign,
            )
        )
    return pd.DataFrame(rows)


def quantile_steps(warehouse: Path, run_id: str, study: Study) -> pd.DataFrame:
    """Every stored quantile forecast step of ``run_id`` with its clean actual ``y`` and its
    window's MASE ``scale``, from raw.forecast_quantiles and raw.prices only."""
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
    return pd.concat(frames, ignore_index=True)


def horizon_clusters(warehouse: Path, windows: pd.DataFrame, horizon: int) -> pd.Series:
    """The uncertainty marts' clusters, recomputed: a window's cluster is its ticker and the
    stretch of ``horizon`` trading days (raw.prices' dates) its origin falls in, counted from
    the ticker's first window's origin (``ticker:k``)."""
    prices = read(warehouse, "select ticker, price_date from raw.prices order by 1, 2")
    day = {
        (t, pd.Timestamp(d)): i
        for t, g in prices.groupby("ticker")
        for i, d in enumerate(g["price_date"])
    }
    days = pd.Series(
        [day[k] for k in zip(windows["ticker"], windows["window_end_date"], strict=True)],
        index=windows.index,
    )
    first = days.groupby(windows["ticker"]).transform("min")
    return windows["ticker"] + ":" + ((days - first) // horizon).astype(str)


#: raw.runs as the previous release created it (no study_id)
OLD_RUNS_DDL = """
create schema if not exists raw;
create table raw.runs (
    run_id varchar primary key, started_at timestamp not null, finished_at timestamp,
    status varchar not null, study_hash varchar not null, study json not null,
    tickers varchar[] not null, systems varchar[] not null, perturbations varchar[] not null,
    study_start date not null, study_end date not null, context_length integer not null,
    horizon integer not null, stride integer not null, perturbation_phase integer not null,
    message varchar
);
"""
