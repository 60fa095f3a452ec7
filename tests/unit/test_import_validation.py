"""Importing predictions made elsewhere: validation, storage and reuse on a real small warehouse.

Every rejection test checks that the file's problem is named (file, line, what is wrong)
and that the warehouse's raw tables are exactly as before.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests.support.import_study import (
    EXTERNAL_ROW,
    STUDY,
    rejected,
    seed_with,
    snapshot,
    write_csv,
)
from tsrate import TsrateError
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import ImportValidationError, import_forecasts


@pytest.fixture(scope="module")
def seed():
    return seed_with(EXTERNAL_ROW)


def do_import(warehouse, path, seed, system_id="external_demo", study=STUDY, **kwargs):
    with connect(warehouse) as con:
        return import_forecasts(con, path, system_id, study, systems_seed=seed, workers=1, **kwargs)


def assert_rejected(warehouse, path, seed, *fragments, error=ImportValidationError, **kwargs):
    attempt = lambda: do_import(warehouse, path, seed, **kwargs)  # noqa: E731
    return rejected(warehouse, attempt, *fragments, error=error)


# -- a good file ------------------------------------------------------------------------------


def test_import_stores_a_run_with_the_baselines(warehouse, seed, good, tmp_path):
    path = write_csv(tmp_path, good)
    summary = do_import(warehouse, path, seed)
    assert (summary.partitions, summary.computed, summary.reused) == (8, 8, 0)
    assert summary.forecast_rows == len(good)
    assert summary.baselines is not None and summary.baselines.partitions == 8
    with connect(warehouse) as con:
        run = con.execute("select * from raw.runs where run_id = ?", [summary.run_id]).df()
        stored = con.execute(
            "select f.system_id, f.ticker, strftime(f.window_end_date, '%Y-%m-%d') as window_end_date, "
            "f.perturbation_id, f.horizon_step, f.forecast from raw.forecasts f "
            "join raw.run_partitions p using (partition_key) where p.run_id = ? "
            "order by all",
            [summary.run_id],
        ).df()
    assert run["status"][0] == "forecasted"
    assert list(run["systems"][0]) == ["naive", "external_demo"]
    assert "predictions.csv" in run["message"][0]
    assert set(stored["system_id"]) == {"naive", "external_demo"}
    imported = stored[stored["system_id"] == "external_demo"].drop(columns="system_id")
    expected = good.sort_values(list(good.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        imported.reset_index(drop=True), expected, check_dtype=False, check_exact=True
    )


def test_reimport_reuses_partitions(warehouse, seed, good, tmp_path):
    path = write_csv(tmp_path, good)
    do_import(warehouse, path, seed)
    rows_before = snapshot(warehouse)["forecasts"]
    # the same forecasts as Parquet, shuffled, with real dates: the same partitions
    parquet = tmp_path / "predictions.parquet"
    shuffled = good.sample(frac=1.0, random_state=1)
    shuffled["window_end_date"] = pd.to_datetime(shuffled["window_end_date"]).dt.date
    shuffled.to_parquet(parquet)
    again = do_import(warehouse, parquet, seed)
    assert (again.reused, again.computed, again.forecast_rows) == (8, 0, 0)
    assert again.baselines.reused == 8
    assert len(snapshot(warehouse)["forecasts"]) == len(rows_before)
    with connect(warehouse) as con:
        attached = con.execute(
            "select count(*), bool_and(reused) from raw.run_partitions where run_id = ?",
            [again.run_id],
        ).fetchone()
    assert attached == (16, True)


def test_subset_without_baselines(warehouse, seed, good, tmp_path):
    subset = good[good["perturbation_id"] == "P0"].copy()  # one perturbation, both tickers
    subset["forecast"] += 0.5  # new content: new partitions
    summary = do_import(warehouse, write_csv(tmp_path, subset), seed, baselines=False)
    assert (summary.partitions, summary.computed) == (2, 2)
    assert summary.baselines is None
    with connect(warehouse) as con:
        systems = con.execute(
            "select distinct system_id from raw.forecast_partitions "
            "join raw.run_partitions using (partition_key) where run_partitions.run_id = ?",
            [summary.run_id],
        ).fetchall()
        listed = con.execute(
            "select systems from raw.runs where run_id = ?", [summary.run_id]
        ).fetchone()[0]
    assert systems == [("external_demo",)] and listed == ["external_demo"]


# -- the system --------------------------------------------------------------------------------


def test_unknown_system(warehouse, seed, good, tmp_path):
    assert_rejected(
        warehouse,
        write_csv(tmp_path, good),
        seed,
        "unknown system 'mystery'",
        "seeds/systems.csv",
        "empty implementation",
        error=TsrateError,
        system_id="mystery",
    )


def test_system_that_the_study_runs_itself(warehouse, seed, good, tmp_path):
    assert_rejected(
        warehouse,
        write_csv(tmp_path, good),
        seed,
        "one of the study's own systems",
        error=TsrateError,
        system_id="naive",
    )


def test_perturbation_the_system_does_not_accept(warehouse, seed, good, tmp_path):
    narrow = seed.copy()
    narrow.loc[narrow["system_id"] == "external_demo", "accepted_perturbations"] = "P0 P1 P2"
    assert_rejected(
        warehouse, write_csv(tmp_path, good), narrow, "['P3'] are not accepted by system"
    )


def test_existing_run_id(warehouse, seed, good, tmp_path):
    path = write_csv(tmp_path, good)
    first = do_import(warehouse, path, seed)
    assert_rejected(warehouse, path, seed, "already exists", error=TsrateError, run_id=first.run_id)


# -- the file ----------------------------------------------------------------------------------


def test_missing_column(warehouse, seed, good, tmp_path):
    path = write_csv(tmp_path, good.drop(columns="horizon_step"))
    assert_rejected(warehouse, path, seed, str(path), "missing column(s) ['horizon_step']")


def test_empty_and_header_only_and_unknown_type(warehouse, seed, good, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert_rejected(warehouse, empty, seed, "file is empty")
    assert_rejected(warehouse, write_csv(tmp_path, good.head(0)), seed, "no forecast rows")
    other = tmp_path / "predictions.xlsx"
    other.write_text("x")
    assert_rejected(warehouse, other, seed, "unknown file type '.xlsx'")


def test_unparseable_date(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[3, "window_end_date"] = "14/10/2022x"
    path = write_csv(tmp_path, bad)
    assert_rejected(
        warehouse, path, seed, str(path), "line 5: window_end_date is not a date", "14/10/2022x"
    )


def test_unparseable_numbers(warehouse, seed, good, tmp_path):
    bad = good.astype({"forecast": object, "horizon_step": object})
    bad.loc[0, "forecast"] = "12,5"
    bad.loc[1, "horizon_step"] = "two"
    message = assert_rejected(warehouse, write_csv(tmp_path, bad), seed)
    assert "line 2: forecast is not a number (first: '12,5')" in message
    assert "line 3: horizon_step is not a whole number (first: 'two')" in message


def test_non_finite_forecasts(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[[10, 11], "forecast"] = [np.inf, np.nan]
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed, "lines 12, 13: forecast is missing or not finite"
    )


def test_duplicate_keys(warehouse, seed, good, tmp_path):
    bad = pd.concat([good, good.iloc[[7]]], ignore_index=True)
    bad.loc[len(bad) - 1, "forecast"] = 1.0
    assert_rejected(
        warehouse,
        write_csv(tmp_path, bad),
        seed,
        f"line {len(bad) + 1}: duplicate (ticker, window_end_date, perturbation_id, horizon_step)",
        "on lines 9, " + str(len(bad) + 1),
        # what the file must hold, as the other problems say it
        "the file must hold one row per ticker, window_end_date, perturbation_id and horizon_step",
    )


def test_a_file_of_another_studys_tickers_only_is_one_problem_with_a_hint(
    warehouse, seed, good, tmp_path
):
    """No ticker of the file in the study (a file made for another study): one problem
    naming both ticker sets, shortened, and the hint to import it with its own manifest."""
    bad = good.copy()
    others = ["KO", "PEP", "XOM", "CVX", "BAC", "WFC"]
    bad["ticker"] = [others[i % len(others)] for i in range(len(bad))]
    caught = []

    def attempt():
        try:
            do_import(warehouse, write_csv(tmp_path, bad), seed)
        except ImportValidationError as exc:
            caught.append(exc)
            raise

    message = rejected(
        warehouse,
        attempt,
        "the file was made for another study: none of its tickers (BAC, CVX, KO, PEP and 2 "
        "more (6)) is in this study (its tickers: AAPL, JPM)",
    )
    assert "KeyError" not in message
    assert len(caught[0].problems) == 1 and "--manifest" in caught[0].hint


def test_a_file_whose_perturbations_are_all_outside_the_study_names_them(
    warehouse, seed, good, tmp_path
):
    bad = good[good["perturbation_id"] == "P0"].assign(perturbation_id="P9")
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed, "perturbation(s) ['P9'] are not in the study"
    )


def test_unknown_ticker(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[bad["ticker"] == "JPM", "ticker"] = "MSFT"
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed, "ticker(s) ['MSFT'] are not in the study"
    )


def test_perturbation_not_in_study(warehouse, seed, good, tmp_path):
    study = dataclasses.replace(STUDY, perturbations=("P0", "P1"))
    assert_rejected(
        warehouse,
        write_csv(tmp_path, good),
        seed,
        "perturbation(s) ['P2', 'P3'] are not in the study",
        study=study,
    )


def test_window_end_dates_that_are_not_windows(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[0, "window_end_date"] = "2022-10-15"  # a Saturday
    bad.loc[1, "window_end_date"] = "2022-09-02"  # a trading day inside the first context
    assert_rejected(
        warehouse,
        write_csv(tmp_path, bad),
        seed,
        "lines 2, 3: window_end_date is not a window of the study",
        "AAPL 2022-10-15",
    )


def test_horizon_steps_outside_range(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[0, "horizon_step"] = 0
    bad.loc[1, "horizon_step"] = 6
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed, "lines 2, 3: horizon_step outside 1..5"
    )


def test_a_perturbation_without_every_ticker_is_refused(warehouse, seed, good, tmp_path):
    """The marts rate a system on every window of the study under each of its perturbations
    (the causal estimates fail on a missing window): a file with AAPL's P1 and P2 but only
    JPM's P2 is refused, naming the perturbation and the ticker, and stores nothing; the
    same file with JPM's P1 imports."""
    aapl_only_p1 = (good["perturbation_id"] == "P1") & (good["ticker"] == "JPM")
    file = good[good["perturbation_id"].isin(["P1", "P2"]) & ~aapl_only_p1].copy()
    file["forecast"] += 0.25  # content of this test's own
    message = assert_rejected(
        warehouse,
        write_csv(tmp_path, file),
        seed,
        "perturbation P1 lacks ticker(s) ['JPM']: each perturbation in the file needs every "
        "ticker of the study (['AAPL', 'JPM'])",
        baselines=False,
    )
    assert "P2" not in message.split("rejected, nothing was stored:")[1]
    jpm = (good["ticker"] == "JPM") & good["perturbation_id"].isin(["P1", "P2"])
    file = good[good["perturbation_id"].isin(["P1", "P2"]) & ~jpm].copy()
    file["forecast"] += 0.25
    assert_rejected(  # one problem per perturbation, the advice once, at the end
        warehouse,
        write_csv(tmp_path, file),
        seed,
        "rejected, nothing was stored: perturbation P1 lacks ticker(s) ['JPM']; perturbation "
        "P2 lacks ticker(s) ['JPM']: each perturbation in the file needs every ticker",
        baselines=False,
    )
    whole = good[good["perturbation_id"].isin(["P1", "P2"])].copy()
    whole["forecast"] += 0.25
    summary = do_import(warehouse, write_csv(tmp_path, whole), seed, baselines=False)
    assert summary.partitions == 4


def test_incomplete_grid(warehouse, seed, good, tmp_path):
    aapl_p2 = (good["ticker"] == "AAPL") & (good["perturbation_id"] == "P2")
    first_window = good.loc[aapl_p2, "window_end_date"].min()
    drop = aapl_p2 & (
        (good["window_end_date"] == first_window)  # one whole window
        | ((good["window_end_date"] == "2022-11-01") & (good["horizon_step"] == 3))
    )
    message = assert_rejected(
        warehouse,
        write_csv(tmp_path, good[~drop]),
        seed,
        "AAPL P2: incomplete grid, 6 of",
        f"{first_window} (every step)",
        "2022-11-01 (step 3)",
    )
    assert "AAPL P0" not in message and "JPM" not in message


# -- strict validation: types, names, bounds, time zones -------------------------------------


def test_implausibly_large_forecasts_are_refused_naming_the_row(warehouse, seed, good, tmp_path):
    bad = good.copy()
    bad.loc[[4, 6], "forecast"] = [1e308, -2e9]
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed,
        "lines 6, 8: forecast outside -1e+09 to 1e+09 (first: 1e+308)",
    )  # fmt: skip
    fine = good.copy()
    fine.loc[4, "forecast"] = -9.9e8  # a terrible forecast, but a number the scores can hold
    assert do_import(warehouse, write_csv(tmp_path, fine, "fine.csv"), seed, baselines=False)


def test_parquet_columns_of_the_wrong_type_are_refused(warehouse, seed, good, tmp_path):
    cases = {
        "forecast": (good["forecast"] > 100, "column 'forecast' is boolean"),
        "horizon_step": (good["horizon_step"] > 0, "column 'horizon_step' is boolean"),
        "window_end_date": (
            pd.to_datetime(good["window_end_date"]).astype("int64"),
            "column 'window_end_date' holds int64 values; it must hold dates",
        ),
        "ticker": (pd.Series(7, index=good.index), "column 'ticker' holds int64 values"),
    }
    for column, (values, expected) in cases.items():
        path = tmp_path / f"{column}.parquet"
        good.assign(**{column: values}).to_parquet(path, index=False)
        assert_rejected(warehouse, path, seed, str(path), expected)


def test_duplicated_column_names_are_refused(warehouse, seed, good, tmp_path):
    csv = tmp_path / "twice.csv"
    good.assign(extra=good["forecast"] * 2).rename(columns={"extra": "forecast"}).to_csv(
        csv, index=False
    )
    assert_rejected(warehouse, csv, seed, "duplicated column name(s) ['forecast']")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(good, preserve_index=False)
    table = table.append_column("Forecast", pa.array(good["forecast"] * 2))
    parquet = tmp_path / "twice.parquet"
    pq.write_table(table, parquet)
    assert_rejected(warehouse, parquet, seed, "duplicated column name(s) ['forecast']")


def test_malformed_tickers_and_mixed_time_zones_are_refused(warehouse, seed, good, tmp_path):
    for ticker in ("../../EVIL", "AA\x00PL", "A" * 300, "AAPL/X"):
        bad = good.copy()
        bad.loc[2, "ticker"] = ticker
        message = assert_rejected(
            warehouse, write_csv(tmp_path, bad), seed, "line 4: malformed ticker"
        )
        assert "\x00" not in message and len(message) < 2000
    bad = good.copy()
    bad["window_end_date"] = bad["window_end_date"] + "T00:00:00+00:00"
    bad.loc[5, "window_end_date"] = bad.loc[5, "window_end_date"].replace("+00:00", "-05:00")
    assert_rejected(
        warehouse, write_csv(tmp_path, bad), seed,
        "window_end_date: the dates mix time zones (+00:00 on line 2, -05:00 on line 7)",
    )  # fmt: skip
