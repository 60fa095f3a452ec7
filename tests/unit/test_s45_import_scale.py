"""The import refuses forecasts in another unit than the prices they forecast (cents, returns,
log prices): the median, over a ticker's clean windows, of each window's median ratio of
forecast to the window's last clean context value must lie in [0.2, 5]
(tsrate.robustness.blackbox.scale), reported with the file's other problems in one line.

The series here are hand-made, so every median is computed by hand in the test; the whole
import on a real warehouse: tests/integration/test_s45_import_scale.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.prediction_grid import grid_rows, validate
from tsrate.robustness.blackbox.scale import SCALE_BAND, scale_problems, ticker_scale
from tsrate.robustness.blackbox.validation import ImportValidationError
from tsrate.robustness.forecast.plan import TickerSeries

DAYS = pd.bdate_range("2022-10-03", periods=8)
#: Clean prices doubling each day: the windows ending on positions 2, 3, 4 last saw 40, 80 and
#: 160 (their first values, 10 and 20, and their means are far from those).
DOUBLING = np.array([10.0, 20.0, 40.0, 80.0, 160.0, 170.0, 180.0, 190.0])
ENDS = [2, 3, 4]
LAST = DOUBLING[ENDS]  # 40, 80, 160


def series(*tickers: str) -> dict[str, TickerSeries]:
    dates = DAYS.values.astype("datetime64[D]")
    return {t: TickerSeries(t, dates, DOUBLING.copy(), np.array(ENDS)) for t in tickers}


def rows(ticker: str, forecasts, perturbation: str = "P0") -> pd.DataFrame:
    """Parsed rows of ``ticker``: ``forecasts[w][s]`` for window w (ending on ENDS[w]), step s+1."""
    return pd.DataFrame(
        [
            dict(
                ticker=ticker,
                window_end_date=DAYS[ENDS[w]],
                perturbation_id=perturbation,
                horizon_step=s + 1,
                forecast=float(value),
            )
            for w, steps in enumerate(forecasts)
            for s, value in enumerate(steps)
        ]
    )


def test_the_ratio_is_to_each_windows_last_clean_value_and_the_medians_are_hand_computed():
    # window ratios: median(200, 40, 60)/40 = 60/40 = 1.5; median(8, 80, 800)/80 = 1.0;
    # median(1600, 1600, 16)/160 = 10.0 -> the ticker's median over its 3 windows: 1.5
    frame = rows("AAPL", [[200, 40, 60], [8, 80, 800], [1600, 1600, 16]])
    assert ticker_scale(frame, series("AAPL")) == {"AAPL": (1.5, 3, True)}
    assert scale_problems(frame, series("AAPL")) == []
    # one constant forecast of 200 is 5x, 2.5x and 1.25x the windows' last prices: median 2.5
    flat = rows("AAPL", [[200] * 2] * 3)
    assert ticker_scale(flat, series("AAPL")) == {"AAPL": (2.5, 3, True)}


@pytest.mark.parametrize(
    ("factor", "refused"),
    [(0.2, False), (0.19999, True), (5.0, False), (5.00001, True), (1.0, False)],
)
def test_the_band_ends_are_allowed_and_just_beyond_them_is_refused(factor, refused):
    assert SCALE_BAND == (0.2, 5.0)
    # each window's forecasts are factor x its last price, except one wild step per window
    # (the window's median ignores it)
    frame = rows("AAPL", [[factor * last, factor * last, 1e6] for last in LAST])
    (ratio, windows, clean) = ticker_scale(frame, series("AAPL"))["AAPL"]
    assert (ratio, windows, clean) == (pytest.approx(factor, rel=1e-12), 3, True)
    problems = scale_problems(frame, series("AAPL"))
    assert bool(problems) is refused, problems


def test_a_file_in_cents_is_one_line_naming_the_ticker_ratio_and_a_hint():
    frame = rows("AAPL", [[100 * last * 1.01] * 2 for last in LAST])
    problems = scale_problems(frame, series("AAPL"))
    assert problems == [
        "forecasts for AAPL are about 100x the prices they forecast (median ratio 101 over 3 "
        "clean windows): another unit (cents?), returns or log prices? Import price forecasts "
        "in the study's unit, that of its inputs (the value column of `tsrate export-inputs`' "
        "inputs.parquet); a median ratio to each window's last clean input outside 0.2 to 5 is "
        "not a price forecast"
    ]


def test_returns_log_prices_and_negative_forecasts_are_refused():
    returns = rows("AAPL", [[0.01, -0.02], [0.005, 0.0], [-0.01, 0.02]])
    # ratios: median(0.01, -0.02)/40 = -0.005/40; 0.0025/80; 0.005/160 -> median 0.0025/80
    assert ticker_scale(returns, series("AAPL"))["AAPL"][0] == pytest.approx(0.0025 / 80)
    assert "about 3e-05x the prices" in scale_problems(returns, series("AAPL"))[0]
    logs = rows("AAPL", [[np.log(last)] * 2 for last in LAST])  # ln 80 / 80 = 0.0548
    assert "about 0.05x the prices" in scale_problems(logs, series("AAPL"))[0]
    negative = rows("AAPL", [[-last] * 2 for last in LAST])  # the ratio keeps its sign: -1
    assert ticker_scale(negative, series("AAPL"))["AAPL"][0] == -1.0
    assert scale_problems(negative, series("AAPL"))[0].startswith(
        "forecasts for AAPL are mostly zero or negative, where the prices they forecast are "
        "positive (median ratio -1 over 3 clean windows): another unit"
    )


def test_a_perturbed_near_zero_forecast_passes_when_the_clean_rows_are_prices():
    """A model fed P1's drop to zero may forecast near zero: that is the effect rated, not a
    unit. Only the P0 rows count; with every row, the windows' medians would be 0."""
    clean = rows("AAPL", [[last * 1.1] * 3 for last in LAST])
    dropped = [[0.0] * 3] * 3
    frame = pd.concat([clean, rows("AAPL", dropped, "P1"), rows("AAPL", dropped, "P2")])
    assert ticker_scale(frame, series("AAPL")) == {"AAPL": (pytest.approx(1.1), 3, True)}
    assert scale_problems(frame, series("AAPL")) == []


def test_a_ticker_with_only_perturbed_rows_uses_all_of_them():
    # no P0: each window's median over P1's and P2's rows: median(1.0 x4, 300 x2) = 1.0
    perturbed = pd.concat(
        [
            rows("AAPL", [[last] * 2 for last in LAST], "P1"),
            rows("AAPL", [[last, 300 * last] for last in LAST], "P2"),
        ]
    )
    assert ticker_scale(perturbed, series("AAPL")) == {"AAPL": (1.0, 3, False)}
    assert scale_problems(perturbed, series("AAPL")) == []
    scaled = rows("AAPL", [[300 * last] * 2 for last in LAST], "P1")
    assert scale_problems(scaled, series("AAPL"))[0].startswith(
        "forecasts for AAPL are about 300x the prices they forecast (median ratio 300 over 3 "
        "windows, no P0 rows): another unit"
    )


def test_of_several_tickers_only_the_one_off_is_named():
    frame = pd.concat(
        [
            rows("AAPL", [[last * 1.02] * 2 for last in LAST]),
            rows("JPM", [[last * 100] * 2 for last in LAST]),
            rows("MSFT", [[last * 0.98] * 2 for last in LAST]),
        ]
    )
    problems = scale_problems(frame, series("AAPL", "JPM", "MSFT"))
    assert len(problems) == 1
    assert problems[0].startswith(
        "forecasts for JPM are about 100x the prices they forecast (median ratio 100 over 3 "
        "clean windows): "
    ), problems
    assert "AAPL" not in problems[0] and "MSFT" not in problems[0]


def test_many_tickers_off_are_described_three_then_named():
    tickers = ["AAPL", "AMZN", "BAC", "C", "JPM", "MSFT", "XOM"]
    frame = pd.concat([rows(t, [[last * 100] * 2 for last in LAST]) for t in tickers])
    (problem,) = scale_problems(frame, series(*tickers))
    assert problem.startswith(
        "forecasts for AAPL are about 100x the prices they forecast (median ratio 100 over 3 "
        "clean windows), for AMZN about 100x (median ratio 100 over 3 clean windows), for BAC "
        "about 100x (median ratio 100 over 3 clean windows), and for 4 more tickers (C, JPM, "
        "MSFT, ...): another unit"
    ), problem


def test_unusable_rows_are_left_out():
    """Rows other checks report (not finite, an unknown ticker, a date that is no window) do
    not move the median."""
    frame = rows("AAPL", [[last] * 2 for last in LAST])
    infinite = [  # in two of the three windows, more infinite rows than finite ones
        dict(
            ticker="AAPL",
            window_end_date=DAYS[ENDS[w]],
            perturbation_id="P0",
            horizon_step=step,
            forecast=np.inf,
        )
        for w in (0, 1)
        for step in (3, 4, 5)
    ]
    stray = pd.DataFrame(
        [
            *infinite,
            dict(ticker="ZZZ", window_end_date=DAYS[ENDS[0]], perturbation_id="P0",
                 horizon_step=1, forecast=1e6),
            dict(ticker="AAPL", window_end_date=DAYS[7], perturbation_id="P0",
                 horizon_step=1, forecast=1e6),
        ]
    )  # fmt: skip
    assert ticker_scale(pd.concat([frame, stray]), series("AAPL")) == {"AAPL": (1.0, 3, True)}


def test_the_file_check_reports_the_scale_with_the_other_problems_at_once(tmp_path):
    """Through the file's validation: a file in cents with a duplicate row is refused in one
    line naming both; the same file in prices, without the duplicate, is valid."""
    good = grid_rows()
    assert validate(tmp_path, good)  # AAPL's and JPM's forecasts are about 1x to 1.6x
    cents = good.assign(forecast=good["forecast"] * 100)
    cents.loc[cents["ticker"] == "JPM", "forecast"] /= 100  # only AAPL's are in cents
    bad = pd.concat([cents, cents.iloc[[0]]], ignore_index=True)
    with pytest.raises(ImportValidationError) as caught:
        validate(tmp_path, bad)
    message = str(caught.value)
    assert "\n" not in message
    assert len(caught.value.problems) == 2, caught.value.problems
    assert "duplicate (ticker, window_end_date, perturbation_id, horizon_step)" in message
    assert "forecasts for AAPL are about 100x the prices they forecast" in message
    assert "JPM" not in caught.value.problems[1]
