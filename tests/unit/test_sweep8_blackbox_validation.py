"""The prediction file's checks (tsrate.robustness.blackbox.validation) on a tiny hand-made
study (tests/support/prediction_grid.py), without a warehouse: every rule at its exact
bound, in a file mixing good and bad rows, and every message naming exactly the rows, the
first value and the counts it should.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_blackbox.json): the import tests in test_import_*.py check each kind
of rejection once through a whole import; these pin the edges (a forecast of exactly 1e9,
quantiles crossing by exactly the tolerance, a horizon step of exactly 1 or the horizon,
exactly five quoted lines), the row and value each message quotes first, and the grid
itself, against expectations written out by hand from the module's documented rules.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.prediction_grid import (
    AAPL_ENDS,
    FILE_COLUMNS,
    JPM_ENDS,
    OFFSETS,
    SERIES,
    SMALL,
    H,
    grid_rows,
    validate,
    value,
)
from tsrate.robustness.blackbox.validation import (
    ImportValidationError,
    read_prediction_file,
    validate_predictions,
)
from tsrate.systems.base import QuantileForecasts


def message(tmp_path, frame: pd.DataFrame, name="p.csv", **kwargs) -> str:
    with pytest.raises(ImportValidationError) as caught:
        validate(tmp_path, frame, name, **kwargs)
    return str(caught.value)


# -- reading the file -----------------------------------------------------------------------


def test_missing_empty_one_byte_and_unknown_files(tmp_path):
    with pytest.raises(ImportValidationError, match="file does not exist"):
        read_prediction_file(tmp_path / "nothing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ImportValidationError, match="file is empty"):
        read_prediction_file(empty)
    one = tmp_path / "one.csv"
    one.write_text("x")  # one byte: a header without the columns, not an empty file
    with pytest.raises(ImportValidationError) as caught:
        read_prediction_file(one)
    assert "missing column(s)" in str(caught.value) and "file is empty" not in str(caught.value)
    other = tmp_path / "p.xlsx"
    other.write_text("x")
    with pytest.raises(ImportValidationError, match="unknown file type '.xlsx'"):
        read_prediction_file(other)
    good = tmp_path / "good.csv"
    grid_rows().to_csv(good, index=False)
    frame, digest = read_prediction_file(good)  # an existing good file is read
    assert len(frame) == 30 and len(digest) == 64


def test_read_keeps_the_five_columns_and_numbers_lines_and_rows(tmp_path):
    frame = grid_rows()
    frame["comment"] = "x"  # an extra column is dropped
    csv = tmp_path / "p.csv"
    frame.to_csv(csv, index=False)
    read, _ = read_prediction_file(csv)
    columns = ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]
    assert list(read.columns) == [*columns, "_line"]
    assert read["_line"].tolist() == list(range(2, 32))  # line 1 is the header
    assert read["forecast"].tolist() == frame["forecast"].astype(str).tolist()  # text
    parquet = tmp_path / "p.parquet"
    frame.to_parquet(parquet, index=False)
    read, _ = read_prediction_file(parquet)
    assert list(read.columns) == [*columns, "_line"]
    assert read["_line"].tolist() == list(range(1, 31))  # row numbers
    assert read["forecast"].tolist() == frame["forecast"].tolist()  # numbers, from Parquet


def test_first_bad_line_of_a_csv_and_first_bad_row_of_a_parquet(tmp_path):
    bad = grid_rows()
    bad.loc[0, "forecast"] = np.inf
    assert "p.csv: rejected, nothing was stored: line 2: forecast is missing or not finite" in (
        message(tmp_path, bad)
    )
    assert "row 1: forecast is missing or not finite" in message(tmp_path, bad, "p.parquet")


def test_the_text_na_is_a_ticker_and_a_spelled_missing_forecast(tmp_path):
    bad = grid_rows().astype({"forecast": object})
    bad.loc[4, "ticker"] = "NA"  # a real ticker (National Bank): not an empty cell
    bad.loc[7, "forecast"] = "NA"
    text = message(tmp_path, bad)
    assert "ticker is empty" not in text
    assert "line 9: forecast is missing or not finite (first: NA)" in text
    only_ticker = grid_rows()
    only_ticker.loc[4, "ticker"] = "NA"
    assert "line 6: ticker(s) ['NA'] are not in the study" in message(tmp_path, only_ticker)


# -- the good grid --------------------------------------------------------------------------


def test_a_good_file_is_the_windows_by_steps_grid_in_any_row_order(tmp_path):
    frame = grid_rows(perturbations=("P0", "P2")).sample(frac=1.0, random_state=3)
    grids = validate(tmp_path, frame)
    assert sorted(grids) == [("AAPL", "P0"), ("AAPL", "P2"), ("JPM", "P0"), ("JPM", "P2")]
    for (ticker, perturbation), grid in grids.items():
        n = len(AAPL_ENDS if ticker == "AAPL" else JPM_ENDS)
        expected = np.array(
            [[value(ticker, w, perturbation, s) for s in range(1, H + 1)] for w in range(n)]
        )
        assert type(grid) is np.ndarray
        np.testing.assert_array_equal(grid, expected)
    parquet = validate(tmp_path, frame, "p.parquet")
    for key, grid in grids.items():
        np.testing.assert_array_equal(parquet[key], grid)


def test_a_quantile_file_gives_points_and_levels_csv_and_parquet(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    for name in ("p.csv", "p.parquet"):
        grids = validate(tmp_path, frame, name)
        forecasts = grids[("JPM", "P0")]
        assert isinstance(forecasts, QuantileForecasts)
        points = np.array([[value("JPM", w, "P0", s) for s in (1, 2, 3)] for w in (0, 1)])
        np.testing.assert_array_equal(forecasts.point, points)
        assert forecasts.quantiles.shape == (2, H, 9)
        for w in (0, 1):
            for s in range(H):
                np.testing.assert_array_equal(forecasts.quantiles[w, s], points[w, s] + OFFSETS)


def test_timestamps_at_midnight_in_one_zone_are_dates(tmp_path):
    frame = grid_rows(tickers=("JPM",))
    for suffix in ("T00:00:00+00:00", "T00:00:00-05:00", " 00:00:00"):
        stamped = frame.assign(window_end_date=frame["window_end_date"] + suffix)
        grids = validate(tmp_path, stamped)
        np.testing.assert_array_equal(
            grids[("JPM", "P0")][:, 0], [value("JPM", 0, "P0", 1), value("JPM", 1, "P0", 1)]
        )


# -- messages: rows named, first value quoted, five examples --------------------------------


def test_exactly_five_lines_are_quoted_then_the_rest_counted(tmp_path):
    bad = grid_rows()
    bad.loc[[0, 1, 2, 3, 4], "forecast"] = np.inf
    text = message(tmp_path, bad)
    assert "lines 2, 3, 4, 5, 6: forecast is missing" in text and "more" not in text
    bad.loc[[5, 6], "forecast"] = np.nan
    assert "lines 2, 3, 4, 5, 6 and 2 more: forecast is missing" in message(tmp_path, bad)
    one = grid_rows()
    one.loc[9, "forecast"] = np.inf
    assert "line 11: forecast is missing" in message(tmp_path, one)


def test_each_parse_problem_names_its_rows_and_first_value(tmp_path):
    bad = grid_rows().astype({"forecast": object, "horizon_step": object})
    bad.loc[[3, 8], "ticker"] = ["", "A/B"]
    bad.loc[[10, 12], "ticker"] = ["../X", "A B"]
    bad.loc[14, "perturbation_id"] = " "
    bad.loc[[15, 17], "window_end_date"] = ["2022-10-05 12:00", "14/10/2022"]
    bad.loc[[18, 19], "horizon_step"] = ["1.5", "two"]
    bad.loc[[20, 21], "forecast"] = ["12,5", "x"]
    bad.loc[[22, 23], "forecast"] = ["inf", "-nan"]
    text = message(tmp_path, bad)
    assert "line 5: ticker is empty" in text
    assert "line 16: perturbation_id is empty" in text
    assert "lines 10, 12, 14: malformed ticker (first: 'A/B')" in text
    assert (
        "lines 17, 19: window_end_date is not a date like 2022-10-14 (first: '2022-10-05 12:00')"
        in text
    )
    assert "lines 20, 21: horizon_step is not a whole number (first: 1.5)" in text
    assert "lines 22, 23: forecast is not a number (first: '12,5')" in text
    assert "lines 24, 25: forecast is missing or not finite (first: inf)" in text


def test_a_forecast_of_exactly_the_bound_is_accepted(tmp_path):
    frame = grid_rows(tickers=("JPM",))
    frame.loc[0, "forecast"] = 1e9
    frame.loc[1, "forecast"] = -1e9
    grids = validate(tmp_path, frame)
    assert grids[("JPM", "P0")][0, 0] == 1e9 and grids[("JPM", "P0")][0, 1] == -1e9
    frame.loc[[3, 4], "forecast"] = [np.nextafter(1e9, np.inf), 2e9]
    text = message(tmp_path, frame)
    assert "lines 5, 6: forecast outside -1e+09 to 1e+09 (first: 1000000000.0000001)" in text


def test_date_parsing_errors_other_than_mixed_zones_are_not_reported_as_zones(
    tmp_path, monkeypatch
):
    path = tmp_path / "p.csv"
    grid_rows(tickers=("JPM",)).to_csv(path, index=False)
    read, _ = read_prediction_file(path)

    def failing(message):
        def to_datetime(*args, **kwargs):
            raise ValueError(message)

        return to_datetime

    monkeypatch.setattr(pd, "to_datetime", failing("unit overflow"))
    with pytest.raises(ValueError, match="unit overflow"):  # a reader bug is raised as such
        validate_predictions(read, str(path), SMALL, SERIES, "ext")
    monkeypatch.setattr(pd, "to_datetime", failing("Cannot mix tz-aware with tz-naive values"))
    with pytest.raises(ImportValidationError, match="window_end_date: the dates mix time zones"):
        validate_predictions(read, str(path), SMALL, SERIES, "ext")
    monkeypatch.setattr(pd, "to_datetime", failing("Mixed timezones detected"))
    with pytest.raises(ImportValidationError, match="window_end_date: the dates mix time zones"):
        validate_predictions(read, str(path), SMALL, SERIES, "ext")


# -- quantiles --------------------------------------------------------------------------------


def test_a_quantile_of_exactly_the_bound_is_accepted_and_one_above_names_its_cell(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    frame.loc[2, FILE_COLUMNS] = [-1e9, -1e9, 0, 0, 1, 1, 2, 1e9, 1e9]
    grids = validate(tmp_path, frame)
    np.testing.assert_array_equal(
        grids[("JPM", "P0")].quantiles[0, 2], [-1e9, -1e9, 0, 0, 1, 1, 2, 1e9, 1e9]
    )
    frame.loc[4, ["q0.8", "q0.9"]] = [2e9, 3e9]
    text = message(tmp_path, frame)
    assert "line 6: quantile outside -1e+09 to 1e+09 (first: q0.8 = 2000000000.0)" in text


def test_each_bad_quantile_names_its_rows_and_first_cell(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True).astype({c: object for c in FILE_COLUMNS})
    frame.loc[1, "q0.3"] = "abc"
    frame.loc[3, ["q0.2", "q0.7"]] = ["", "nan"]  # two cells of line 5: q0.2 is named
    frame.loc[5, "q0.9"] = "inf"
    text = message(tmp_path, frame)
    assert "line 3: quantile is not a number (first: q0.3 = 'abc'); every quantile" in text
    assert "lines 5, 7: quantile is missing or not finite (first: q0.2 = empty)" in text
    assert "lines 3, 5: quantile is not a number" not in text
    mixed = grid_rows(tickers=("JPM",), quantiles=True).astype({c: object for c in FILE_COLUMNS})
    mixed.loc[2, ["q0.4", "q0.6"]] = ["y", "z"]
    mixed.loc[4, "q0.1"] = "w"
    assert "lines 4, 6: quantile is not a number (first: q0.4 = 'y')" in message(tmp_path, mixed)


def _quantile_row(tmp_path, levels) -> pd.DataFrame:
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    frame.loc[3, FILE_COLUMNS] = levels
    return frame


def test_crossing_tolerance_is_1e_9_below_one_and_relative_above(tmp_path):
    # below |value| 1 the tolerance is 1e-9 absolute: a crossing of exactly 1e-9 passes ...
    exact = [-4.0, -3.0, -2.0, -1.0, 1e-9, 0.0, 1.0, 2.0, 3.0]
    grids = validate(tmp_path, _quantile_row(tmp_path, exact))
    assert grids[("JPM", "P0")].quantiles[1, 0, 4] == 1e-9  # stored as given, not re-sorted
    # ... and one of 1.5e-9 (below 2e-9) is a crossing, named with its two levels
    over = [-4.0, -3.0, -2.0, -1.0, 0.5 + 1.5e-9, 0.5, 1.0, 2.0, 3.0]
    text = message(tmp_path, _quantile_row(tmp_path, over))
    assert "line 5: quantiles cross (first: q0.5 = 0.5 > q0.6 = 0.5)" in text
    assert "(tolerance 1e-09 relative)" in text
    # at |value| 1000 it is 1e-6: a crossing of 5e-7 passes, one of 2e-6 does not
    near = [-4.0, -3.0, -2.0, -1.0, 1000.0 + 5e-7, 1000.0, 1001.0, 1002.0, 1003.0]
    validate(tmp_path, _quantile_row(tmp_path, near))
    far = [-4.0, -3.0, -2.0, -1.0, 1000.0 + 2e-6, 1000.0, 1001.0, 1002.0, 1003.0]
    assert "line 5: quantiles cross (first: q0.5 = 1000 > q0.6 = 1000)" in message(
        tmp_path, _quantile_row(tmp_path, far)
    )
    # the larger of the two values sets the scale: -1000 above -1000 - 5e-7 passes
    negative = [-1000.0 - 1e-9, -1000.0 - 5e-7, -999.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    validate(tmp_path, _quantile_row(tmp_path, negative))


def test_the_first_crossing_of_the_first_crossed_row_is_named(tmp_path):
    levels = [1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 8.0, 7.0, 9.0]  # q0.4 > q0.5 and q0.7 > q0.8
    frame = _quantile_row(tmp_path, levels)
    frame.loc[5, FILE_COLUMNS] = [2.0, 1.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    text = message(tmp_path, frame)
    assert "lines 5, 7: quantiles cross (first: q0.4 = 5 > q0.5 = 4)" in text
    for first, second in [("q0.1", "q0.2"), ("q0.8", "q0.9")]:
        levels = list(range(1, 10))
        i = FILE_COLUMNS.index(first)
        levels[i], levels[i + 1] = levels[i + 1], levels[i]
        text = message(tmp_path, _quantile_row(tmp_path, [float(v) for v in levels]))
        assert f"line 5: quantiles cross (first: {first} = {i + 2} > {second} = {i + 1})" in text


def test_quantiles_crossing_the_point_forecast_are_not_a_crossing(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    frame.loc[0, "forecast"] = 1e6  # the point forecast is not one of the levels
    validate(tmp_path, frame)


# -- against the study ------------------------------------------------------------------------


def test_each_study_problem_names_only_its_rows(tmp_path):
    bad = grid_rows(perturbations=("P0", "P1"))
    bad.loc[2, "ticker"] = "MSFT"
    bad.loc[5, "perturbation_id"] = "P9"
    bad.loc[[7, 50], "window_end_date"] = ["2022-10-08", "2022-10-06"]  # AAPL's, then JPM's
    text = message(tmp_path, bad, accepted=("P0", "P9"))
    assert "line 4: ticker(s) ['MSFT'] are not in the study (its tickers: ['AAPL', 'JPM'])" in text
    assert "line 7: perturbation(s) ['P9'] are not in the study" in text
    assert (
        "lines 26, 27, 28, 29, 30 and 25 more: perturbation(s) ['P1'] are not accepted by system "
        "'ext' (systems seed: P0 P9)"
    ) in text
    assert (
        "lines 9, 52: window_end_date is not a window of the study (first: AAPL 2022-10-08; "
        "AAPL's windows end on the trading days 2022-10-05 to 2022-10-14, context 30, horizon 3, "
        "stride 1)"
    ) in text


def test_horizon_steps_one_to_the_horizon_are_the_only_ones(tmp_path):
    validate(tmp_path, grid_rows())  # steps 1 .. 3 all present: accepted
    for step, line in ((0, 3), (-1, 3), (H + 1, 4)):
        bad = grid_rows()
        bad.loc[line - 2, "horizon_step"] = step
        assert f"line {line}: horizon_step outside 1..3 (first: {step})" in message(tmp_path, bad)
    bad = grid_rows()
    bad.loc[[4, 6], "horizon_step"] = [4, 0]
    assert "lines 6, 8: horizon_step outside 1..3 (first: 4)" in message(tmp_path, bad)


def test_duplicates_name_the_first_repeated_key_and_all_its_lines(tmp_path):
    frame = grid_rows()
    extra = frame.iloc[[28, 4, 4]].copy()  # JPM 10-07 P0 step 2 once more; AAPL 10-06 step 2 twice
    extra["forecast"] = [1.0, 2.0, 3.0]
    bad = pd.concat([frame, extra], ignore_index=True)
    text = message(tmp_path, bad)
    assert (
        "lines 32, 33, 34: duplicate (ticker, window_end_date, perturbation_id, horizon_step); "
        "first: JPM 2022-10-07 P0 step 2 on lines 30, 32"
    ) in text


def test_an_incomplete_grid_names_windows_steps_and_counts(tmp_path):
    frame = grid_rows()
    aapl = frame["ticker"] == "AAPL"
    drop = aapl & (frame["window_end_date"] == "2022-10-06")  # a whole window
    drop |= aapl & (frame["window_end_date"] == "2022-10-12") & (frame["horizon_step"] == 2)
    drop |= aapl & (frame["window_end_date"] == "2022-10-14") & (frame["horizon_step"] != 2)
    text = message(tmp_path, frame[~drop])
    assert text.endswith(
        "AAPL P0: incomplete grid, 6 of 24 forecasts (windows × steps 1..3) missing, in 3 of 8 "
        "windows: 2022-10-06 (every step); 2022-10-12 (step 2); 2022-10-14 (steps 1, 3)"
    )
    assert "JPM" not in text


def test_an_incomplete_grid_quotes_five_windows_then_counts(tmp_path):
    frame = grid_rows(tickers=("AAPL",))
    five = (frame["window_end_date"] <= "2022-10-11") & (frame["horizon_step"] == 1)
    text = message(tmp_path, frame[~five])
    assert text.endswith(
        "AAPL P0: incomplete grid, 5 of 24 forecasts (windows × steps 1..3) missing, in 5 of 8 "
        "windows: step 1 of 2022-10-05, 2022-10-06, 2022-10-07, 2022-10-10, 2022-10-11"
    )
    seven = (frame["window_end_date"] <= "2022-10-13") & (frame["horizon_step"] == 3)
    text = message(tmp_path, frame[~seven])
    assert text.endswith(
        "7 of 24 forecasts (windows × steps 1..3) missing, in 7 of 8 windows: step 3 of "
        "2022-10-05, 2022-10-06, 2022-10-07, 2022-10-10, 2022-10-11 and 2 more"
    )
    seven |= frame["window_end_date"].eq("2022-10-14") & frame["horizon_step"].eq(1)
    text = message(tmp_path, frame[~seven])  # two gaps: five windows quoted, with their steps
    assert text.endswith(
        "8 of 24 forecasts (windows × steps 1..3) missing, in 8 of 8 windows: 2022-10-05 (step "
        "3); 2022-10-06 (step 3); 2022-10-07 (step 3); 2022-10-10 (step 3); 2022-10-11 (step 3), "
        "and 3 more"
    )


def test_an_incomplete_quantile_grid_is_rejected_too(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    text = message(tmp_path, frame.drop(index=[5]))
    assert text.endswith(
        "JPM P0: incomplete grid, 1 of 6 forecasts (windows × steps 1..3) missing, in 1 of 2 "
        "windows: step 3 of 2022-10-07"
    )


def test_quantile_columns_all_nine_or_none_at_the_expected_levels(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    text = message(tmp_path, frame.drop(columns=["q0.9"]))
    assert (
        "partial set of quantile columns: ['q0.1', 'q0.2', 'q0.3', 'q0.4', 'q0.5', 'q0.6', "
        "'q0.7', 'q0.8'] without ['q0.9']; give all nine"
    ) in text
    text = message(tmp_path, frame.drop(columns=["q0.1", "q0.5"]).assign(**{"q0.05": 1.0}))
    assert "quantile column(s) ['q0.05'] are not at the expected levels" in text
    assert "without ['q0.1', 'q0.5']" in text
