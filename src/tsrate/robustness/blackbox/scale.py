"""The unit of a prediction file's forecasts: prices in the study's unit, or refused.

A file of forecasts in another unit (cents: 100x), or of returns (about 0.01) or log prices
(about 5) instead of prices, passes every other check of the import and would be rated as a
terrible model. :func:`scale_problems` compares each point forecast with the last value the
model saw, the window's last clean context value (the close on ``window_end_date``, the
forecast origin), and refuses a ticker whose **median ratio** lies outside
:data:`SCALE_BAND`:

- rows of the control **P0** only, where the ticker has any: a model given a perturbed input
  (a price dropped to zero, a spike) may forecast near zero or far off, and that is the
  robustness effect being rated, not a unit; a ticker without P0 rows uses all its rows;
- a window's ratio is the median over its rows (its steps, and its perturbations when no P0),
  the ticker's the median over its windows, so a few wild windows of a real but bad model
  cannot tip it;
- the ratio keeps its sign (the last price is always positive): forecasts mostly zero or
  negative have a median at or below 0, far below the band, as do returns (about 0.01 / price)
  and log prices (ln p / p < 0.2 unless p lies between about 1.3 and 13);
- rows whose ticker, window or forecast cannot be used (other checks report them) are left
  out; the quantile columns are not compared (they lie around the point forecasts).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from tsrate.robustness.forecast.plan import TickerSeries

#: The band a ticker's median ratio forecast / last clean context value must lie in (both
#: ends allowed). A factor of 5 either way: no stock moves 5x (or loses 80%) within one
#: horizon in the typical window, so a real model's median forecast, however bad, stays
#: far inside; a unit error of 100x (cents), 1000x, a return (≈0.01/price) or a log price
#: (of a stock priced outside about 1.3 to 13) lies outside.
SCALE_BAND = (0.2, 5.0)
#: The control perturbation: the clean input.
CONTROL = "P0"
#: Tickers described one by one in the message; the others are named after them.
MAX_TICKERS = 3
#: What the message asks of the file.
SCALE_HINT = (
    "another unit (cents?), returns or log prices? Import price forecasts in the study's "
    "unit, that of its inputs (the value column of `tsrate export-inputs`' inputs.parquet); "
    f"a median ratio to each window's last clean input outside {SCALE_BAND[0]:g} to "
    f"{SCALE_BAND[1]:g} is not a price forecast"
)


def ticker_scale(
    rows: pd.DataFrame, series: Mapping[str, TickerSeries]
) -> dict[str, tuple[float, int, bool]]:
    """Per ticker of ``series`` with usable rows: (its median ratio, the windows it is the
    median over, whether those are clean P0 windows). ``rows``: the file's parsed rows
    (``ticker``, ``window_end_date`` as a date, ``perturbation_id``, ``forecast`` a float)."""
    last = pd.concat(
        [
            pd.DataFrame(
                {
                    "ticker": ticker,
                    "window_end_date": pd.to_datetime(s.window_end_dates),
                    "_last": s.clean[s.end_positions],
                }
            )
            for ticker, s in series.items()
        ],
        ignore_index=True,
    )
    usable = rows.loc[
        np.isfinite(rows["forecast"].to_numpy(dtype=float)),
        ["ticker", "window_end_date", "perturbation_id", "forecast"],
    ]
    located = usable.merge(last, on=["ticker", "window_end_date"], how="inner")
    located = located[np.isfinite(located["_last"]) & (located["_last"] > 0)]
    by_ticker = dict(list(located.groupby("ticker", sort=False)))
    scales = {}
    for ticker in series:  # in the study's order
        of_ticker = by_ticker.get(ticker)
        if of_ticker is None:
            continue
        clean = of_ticker[of_ticker["perturbation_id"] == CONTROL]
        used = clean if not clean.empty else of_ticker
        ratios = used["forecast"].to_numpy(dtype=float) / used["_last"].to_numpy(dtype=float)
        per_window = pd.Series(ratios).groupby(used["window_end_date"].to_numpy()).median()
        scales[ticker] = (float(per_window.median()), len(per_window), not clean.empty)
    return scales


def scale_problems(rows: pd.DataFrame, series: Mapping[str, TickerSeries]) -> list[str]:
    """The file's scale problem, one line naming each ticker whose median ratio
    (:func:`ticker_scale`) lies outside :data:`SCALE_BAND`, with :data:`SCALE_HINT`; or []."""
    low, high = SCALE_BAND
    off = [
        (ticker, *scale)
        for ticker, scale in ticker_scale(rows, series).items()
        if not low <= scale[0] <= high
    ]
    if not off:
        return []
    said = []
    for n, (ticker, ratio, windows, clean) in enumerate(off[:MAX_TICKERS]):
        over = f"over {windows} clean window{'s' if windows > 1 else ''}"
        if not clean:
            over = f"over {windows} window{'s' if windows > 1 else ''}, no P0 rows"
        where = f"(median ratio {ratio:.3g} {over})"
        if n == 0:
            said.append(f"forecasts for {ticker} are {_about(ratio, True)} {where}")
        else:
            said.append(f"for {ticker} {_about(ratio, False)} {where}")
    rest = [ticker for ticker, *_ in off[MAX_TICKERS:]]
    if rest:
        names = ", ".join(rest[:MAX_TICKERS]) + (", ..." if len(rest) > MAX_TICKERS else "")
        said.append(f"and for {len(rest)} more ticker{'s' if len(rest) > 1 else ''} ({names})")
    return [f"{', '.join(said)}: {SCALE_HINT}"]


def _about(ratio: float, first: bool) -> str:
    """'about 100x the prices they forecast' (the first ticker), 'about 0.01x' (the others);
    'zero or negative' where prices are positive."""
    if ratio <= 0:
        return "mostly zero or negative, where the prices they forecast are positive"
    rounded = float(f"{ratio:.1g}")  # one significant digit: 99.8 -> 100, 0.0123 -> 0.01
    return f"about {rounded:g}x" + (" the prices they forecast" if first else "")
