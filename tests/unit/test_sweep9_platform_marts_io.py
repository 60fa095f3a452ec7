"""Reading marts into numpy (tsrate.platform.marts_io) on small frames and real in-memory
DuckDB relations, against tables written out by hand: the unit numbering (sorted by ticker
and date), the dense day table with -1 for days without a window, the strata codes in value
order, unit lookups at the first ticker and the first and last day and just outside them,
and read_columns' categoricals (sorted, NULL kept as missing) and dates.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json): the older tests use Units and outcome_grid only through
the causal estimates, and read_columns only inside dbt.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.platform.marts_io import Units, outcome_grid, read_columns

EPOCH = dt.date(1970, 1, 1)


def day_number(text: str) -> int:
    return (dt.date.fromisoformat(text) - EPOCH).days


def windows() -> pd.DataFrame:
    """Three tickers over 2022-01-03, -04 and -06 (no window on the 5th), listed unsorted and
    with one repeated row; industries whose sorted order differs from the tickers'."""
    rows = [
        ("MSFT", "Tech", "2022-01-04"),
        ("AAPL", "Tech", "2022-01-06"),
        ("XOM", "Energy", "2022-01-03"),
        ("AAPL", "Tech", "2022-01-03"),
        ("MSFT", "Tech", "2022-01-03"),
        ("AAPL", "Tech", "2022-01-03"),  # a repeat (another system's row)
    ]
    return pd.DataFrame(rows, columns=["ticker", "industry", "window_end_date"])


def test_units_are_numbered_by_ticker_then_date():
    units = Units(windows())
    assert units.size == 5
    assert list(units.frame.columns) == ["ticker", "industry", "window_end_date"]
    assert list(units.frame.index) == [0, 1, 2, 3, 4]
    expected = [
        ("AAPL", "Tech", "2022-01-03"),
        ("AAPL", "Tech", "2022-01-06"),
        ("MSFT", "Tech", "2022-01-03"),
        ("MSFT", "Tech", "2022-01-04"),
        ("XOM", "Energy", "2022-01-03"),
    ]
    got = [(t, i, str(d)[:10]) for t, i, d in units.frame.itertuples(index=False)]
    assert got == expected
    assert list(units.tickers) == ["AAPL", "MSFT", "XOM"]
    assert units.ticker_code == {"AAPL": 0, "MSFT": 1, "XOM": 2}
    assert [str(d) for d in units.days] == ["2022-01-03", "2022-01-04", "2022-01-06"]
    assert list(units.day_of_unit) == [0, 2, 0, 1, 0]


def test_the_day_table_spans_the_calendar_with_minus_one_for_days_without_windows():
    units = Units(windows())
    assert units.first_day == day_number("2022-01-03")
    assert list(units.day_code) == [0, 1, -1, 2]  # the 3rd, 4th, 5th (none) and 6th
    # (ticker, day) -> unit, -1 where a ticker has no window that day
    assert units.lookup.tolist() == [[0, -1, 1], [2, 3, -1], [4, -1, -1]]


def test_strata_codes_follow_the_sorted_values():
    """Energy < Tech: XOM's industry is stratum 0 although it comes last by ticker."""
    units = Units(windows())
    assert units.strata["industry"].tolist() == [1, 1, 1, 1, 0]
    assert units.strata["ticker"].tolist() == [0, 0, 1, 1, 2]


def test_unit_lookups_at_and_just_outside_the_edges():
    units = Units(windows())
    codes = np.array([0, 0, 0, 0, 2, 1, -1, 3, 0])
    offsets = np.array([0, 3, -1, 4, 0, 2, 0, 0, 1])
    # AAPL 3rd, AAPL 6th (last day), before the first day, after the last, XOM 3rd,
    # MSFT on the 5th (no window), an unknown ticker code, a code past the tickers (never
    # made by ticker_codes; here only with a day that exists), AAPL on the 4th (none)
    got = units.index(codes[:7], offsets[:7])
    assert got.tolist() == [0, 1, -1, -1, 4, -1, -1]
    assert units.index(codes[8:], offsets[8:]).tolist() == [-1]


def test_one_day_and_no_days():
    one = Units(windows().iloc[[2]])
    assert one.size == 1 and one.first_day == day_number("2022-01-03")
    assert list(one.day_code) == [0]
    assert one.index(np.array([0, 0, 0, -1]), np.array([0, 1, -1, 0])).tolist() == [0, -1, -1, -1]
    none = Units(windows().iloc[[]])
    assert none.size == 0 and none.first_day == 0 and none.day_code.size == 0
    assert none.index(np.array([0, 1]), np.array([0, 0])).tolist() == [-1, -1]


def test_ticker_codes_of_a_series_with_unknown_tickers():
    units = Units(windows())
    series = pd.Series(["XOM", "AAPL", "TSLA", None, "AAPL", "MSFT"])
    assert units.ticker_codes(series).tolist() == [2, 0, -1, -1, 0, 1]


def test_outcome_grid_places_each_row_and_refuses_unknown_or_repeated_windows():
    units = Units(windows())
    labels = ["none", "P1"]
    errors = pd.DataFrame(
        {
            "ticker": ["AAPL", "XOM", "MSFT", "AAPL", "MSFT"],
            "window_end_date": [
                "2022-01-03",
                "2022-01-03",
                "2022-01-04",
                "2022-01-06",
                "2022-01-04",
            ],
            "perturbation_id": ["none", "P1", "P1", "none", "P9"],  # P9: not asked for
            "mase": [1.0, 2.0, 3.0, 4.0, 99.0],
        }
    )
    grid = outcome_grid(errors, units, labels, "mase", "naive")
    expected = np.full((5, 2), np.nan)
    expected[0, 0], expected[4, 1], expected[3, 1], expected[1, 0] = 1.0, 2.0, 3.0, 4.0
    np.testing.assert_array_equal(grid, expected)
    repeated = pd.concat([errors, errors.iloc[[1]]])
    with pytest.raises(ValueError, match="duplicate windows"):
        outcome_grid(repeated, units, labels, "mase", "naive")
    stray = errors.assign(
        window_end_date=errors["window_end_date"].replace("2022-01-06", "2022-01-05")
    )
    with pytest.raises(ValueError, match="windows of no unit"):
        outcome_grid(stray, units, labels, "mase", "naive")


def test_read_columns_makes_sorted_categoricals_keeps_nulls_and_dates():
    con = duckdb.connect()
    try:
        relation = con.sql(
            "select * from (values ('b', 'x', 1.5, date '2022-01-03', 7), "
            "('a', null, 2.5, date '2022-01-04', 8), ('c''d', 'x', 3.5, date '2022-01-05', 9)) "
            "v(ticker, note, mase, window_end_date, n)"
        )
        frame = read_columns(relation, ["ticker", "note", "mase", "window_end_date"])
    finally:
        con.close()
    assert list(frame.columns) == ["ticker", "note", "mase", "window_end_date"]
    assert isinstance(frame["ticker"].dtype, pd.CategoricalDtype)
    assert list(frame["ticker"].cat.categories) == ["a", "b", "c'd"]
    assert frame["ticker"].astype(str).tolist() == ["b", "a", "c'd"]
    assert list(frame["note"].cat.categories) == ["x"]
    assert frame["note"].isna().tolist() == [False, True, False]
    assert frame["mase"].tolist() == [1.5, 2.5, 3.5]
    assert frame["window_end_date"].dtype.kind == "M"
    assert [str(d)[:10] for d in frame["window_end_date"]] == [
        "2022-01-03",
        "2022-01-04",
        "2022-01-05",
    ]


def test_read_columns_of_a_text_column_that_is_all_null():
    con = duckdb.connect()
    try:
        relation = con.sql("select * from (values (null::varchar, 1), (null, 2)) v(note, n)")
        frame = read_columns(relation, ["note", "n"])
    finally:
        con.close()
    assert frame["note"].isna().all() and frame["n"].tolist() == [1, 2]
