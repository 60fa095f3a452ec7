"""A tiny hand-made study and its prediction grid for the prediction file's checks
(tsrate.robustness.blackbox.validation), without a warehouse: two tickers on twelve
business days (AAPL: 8 windows, JPM: 2), horizon 3, every forecast a known value, and
``validate`` writing a frame to a file and checking it. No test here."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from tests.support.import_study import STUDY
from tsrate.robustness.blackbox.validation import read_prediction_file, validate_predictions
from tsrate.robustness.forecast.plan import TickerSeries

H = 3
SMALL = dataclasses.replace(STUDY, horizon=H)
DAYS = pd.bdate_range("2022-10-03", periods=12)  # Mon 2022-10-03 ... Tue 2022-10-18
AAPL_ENDS = ["2022-10-05", "2022-10-06", "2022-10-07", "2022-10-10"]
AAPL_ENDS += ["2022-10-11", "2022-10-12", "2022-10-13", "2022-10-14"]
JPM_ENDS = ["2022-10-05", "2022-10-07"]
FILE_COLUMNS = ["q0.1", "q0.2", "q0.3", "q0.4", "q0.5", "q0.6", "q0.7", "q0.8", "q0.9"]
OFFSETS = np.array([-2.0, -1.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.5, 3.0])


def _series(ticker: str, positions: list[int]) -> TickerSeries:
    dates = DAYS.values.astype("datetime64[D]")
    return TickerSeries(
        ticker, dates, np.arange(len(dates), dtype=float) + 100.0, np.array(positions)
    )


SERIES = {"AAPL": _series("AAPL", list(range(2, 10))), "JPM": _series("JPM", [2, 4])}


def value(ticker: str, window: int, perturbation: str, step: int) -> float:
    return (
        100.0 + 10 * window + step + (0.5 if ticker == "JPM" else 0.0) + 0.25 * int(perturbation[1])
    )


def grid_rows(tickers=("AAPL", "JPM"), perturbations=("P0",), quantiles=False) -> pd.DataFrame:
    """Every window x step of each (ticker, perturbation), forecast = value(...)."""
    rows = []
    for ticker in tickers:
        ends = AAPL_ENDS if ticker == "AAPL" else JPM_ENDS
        for perturbation in perturbations:
            for window, end in enumerate(ends):
                for step in range(1, H + 1):
                    forecast = value(ticker, window, perturbation, step)
                    row = dict(
                        ticker=ticker,
                        window_end_date=end,
                        perturbation_id=perturbation,
                        horizon_step=step,
                        forecast=forecast,
                    )
                    if quantiles:
                        row.update(zip(FILE_COLUMNS, forecast + OFFSETS, strict=True))
                    rows.append(row)
    return pd.DataFrame(rows)


def validate(tmp_path, frame: pd.DataFrame, name="p.csv", accepted=(), study=SMALL):
    path = tmp_path / name
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    read, _ = read_prediction_file(path)
    return validate_predictions(read, str(path), study, SERIES, "ext", accepted)
