"""The forecast plumbing (tsrate.robustness.forecast: store, plan, execute) against what
its docstrings and the raw schema say, worked out by hand or with plain numpy / DuckDB
loops: which windows' quantiles are stored, which key a run records, the partitions a study
plans and their order, the batches' windows, and the in-process run's bookkeeping.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_forecast.json): each test pins exact rows or numbers, so a forecast
stored under the wrong key, window or step, a skipped or doubled partition, or a wrong
count changes a checked value. Everything here runs in this process on in-memory or
temporary DuckDB warehouses (the worker-process paths are tests/integration/).
"""

from __future__ import annotations

import hashlib
import os
import time
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.support.forecast_inputs import made_by_the_run, plan_study, priced_warehouse
from tsrate import TsrateError
from tsrate.config import Study, load_companies
from tsrate.inputs.perturbations import input_series
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.stages import PAUSE_AT, PAUSE_FILE, PAUSE_SECONDS
from tsrate.robustness.forecast import execute
from tsrate.robustness.forecast.execute import (
    RunSummary,
    _llm_cache_beside,
    failed_windows,
    forecast_partition,
    run_forecasts,
    run_problems,
)
from tsrate.robustness.forecast.plan import (
    Partition,
    TickerSeries,
    input_key,
    load_series,
    make_batch,
    order_partitions,
    system_cost,
    unavailable_systems,
)
from tsrate.robustness.forecast.store import (
    FinishedPartition,
    quantile_rows,
    store_partitions,
)
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts
from tsrate.systems.failures import PartialForecasts, WindowFailure

RUN = "run-9"
LEVELS = len(QUANTILE_LEVELS)


def _warehouse() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    create_raw_tables(con)
    return con


def _dates(n: int) -> np.ndarray:
    return pd.date_range("2021-03-01", periods=n, freq="B").values


# --- store.py -------------------------------------------------------------------------------


def test_quantile_rows_keeps_the_windows_whose_every_value_is_finite_less_the_skipped() -> None:
    quantiles = np.ones((5, 2, LEVELS))
    quantiles[1, 1, 4] = np.nan  # one missing value: the window has no quantiles
    quantiles[2] = np.nan  # none at all
    quantiles[4, 0, 0] = np.inf
    # window 3 is finite but skipped (a failed window): by hand, only window 0 is kept
    assert quantile_rows(quantiles, [3]).tolist() == [0]
    assert quantile_rows(quantiles).tolist() == [0, 3]


def test_a_failed_window_stores_no_quantiles_even_when_the_system_gave_some() -> None:
    con = _warehouse()
    dates = _dates(4)
    point = PartialForecasts(
        np.array([[1.0, 2.0], [np.nan, np.nan], [3.0, 4.0], [5.0, 6.0]]),
        (WindowFailure(1, "no number", "?"),),
    )
    quantiles = np.arange(4 * 2 * LEVELS, dtype=float).reshape(4, 2, LEVELS)
    entry = FinishedPartition(
        Partition("arima", "AAPL", "P0", "in-1"),
        "in-1",
        dates,
        QuantileForecasts(point, quantiles),
        1.0,
    )
    assert store_partitions(con, RUN, [entry]) == [6]
    rows = con.execute(
        "select window_end_date, horizon_step, q10, q90 from raw.forecast_quantiles order by rowid"
    ).fetchall()
    expected = [
        (pd.Timestamp(dates[w]).date(), step + 1, quantiles[w, step, 0], quantiles[w, step, -1])
        for w in (0, 2, 3)
        for step in range(2)
    ]
    assert rows == expected


def test_the_run_records_the_partition_key_not_the_input_key() -> None:
    # a forced recompute stores a partition under "<input key>-<run>" beside the old one
    con = _warehouse()
    partition = Partition("naive", "MSFT", "P2", "abc")
    entry = FinishedPartition(partition, f"abc-{RUN}", _dates(2), np.ones((2, 3)), 0.25)
    store_partitions(con, RUN, [entry])
    assert con.execute("select * from raw.run_partitions").fetchall() == [
        (RUN, f"abc-{RUN}", False)
    ]
    assert con.execute(
        "select partition_key, input_key, run_id, system_id, ticker, perturbation_id, "
        "n_windows, n_rows, seconds from raw.forecast_partitions"
    ).fetchall() == [(f"abc-{RUN}", "abc", RUN, "naive", "MSFT", "P2", 2, 6, 0.25)]
    assert con.execute("select distinct partition_key from raw.forecasts").fetchall() == [
        (f"abc-{RUN}",)
    ]


def test_a_partition_whose_every_window_failed_stores_its_failures_and_no_forecast() -> None:
    con = _warehouse()
    dates = _dates(2)
    values = np.full((2, 3), np.nan)
    failures = (WindowFailure(0, "empty reply", ""), WindowFailure(1, "too short", "1 2"))
    entry = FinishedPartition(
        Partition("llm", "JPM", "P0", "k"), "k", dates, PartialForecasts(values, failures), 2.0
    )
    assert store_partitions(con, RUN, [entry]) == [0]
    assert con.execute("select count(*) from raw.forecasts").fetchone() == (0,)
    assert con.execute(
        "select window_end_date, reason, raw_text from raw.forecast_failures order by rowid"
    ).fetchall() == [
        (pd.Timestamp(dates[0]).date(), "empty reply", ""),
        (pd.Timestamp(dates[1]).date(), "too short", "1 2"),
    ]
    assert con.execute("select n_windows, n_rows from raw.forecast_partitions").fetchall() == [
        (2, 0)
    ]


# --- plan.py --------------------------------------------------------------------------------


def test_load_series_holds_each_tickers_own_study_period_closes_and_window_ends() -> None:
    con, frames = priced_warehouse()
    study = plan_study()
    series = load_series(con, study)
    assert list(series) == ["AAPL", "MSFT"]
    for ticker, frame in frames.items():
        inside = frame[
            (frame["price_date"] >= "2021-01-04") & (frame["price_date"] <= "2021-03-31")
        ]
        got = series[ticker]
        assert got.ticker == ticker
        np.testing.assert_array_equal(got.clean, inside["close"].to_numpy())
        np.testing.assert_array_equal(
            got.dates, inside["price_date"].to_numpy().astype("datetime64[D]")
        )
        # first window ends at the 6th day; the last leaves 3 days after it; every 2nd day
        n = len(inside)
        assert got.end_positions.tolist() == list(range(5, n - 3, 2))
        np.testing.assert_array_equal(got.window_end_dates, got.dates[got.end_positions])


def test_unavailable_systems_lists_only_implemented_systems_that_cannot_run(
    monkeypatch,
) -> None:
    for name in ("GEMINI_API_KEY", "TSRATE_GEMINI_NUMERIC_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TSRATE_GEMINI_NUMERIC_BASE_URL", raising=False)
    # an unknown system is not listed (resolve_systems rejects it); naive runs anywhere
    study = plan_study(systems=["naive", "gemini_numeric", "no_such_system"])
    unavailable = unavailable_systems(study, load_companies())
    assert list(unavailable) == ["gemini_numeric"]
    assert "API key" in unavailable["gemini_numeric"]


def _series(dates: list[str], clean: list[float]) -> TickerSeries:
    return TickerSeries(
        "AAPL", np.array(dates, dtype="datetime64[D]"), np.array(clean), np.array([1])
    )


def test_input_key_is_the_documented_digest() -> None:
    """sha256 of the parts joined by '|' (each followed by one), then the clean prices
    rounded to 10 decimals as float64 bytes; its first 32 hex digits. Warehouses written
    earlier reuse their partitions only while this stays the same."""
    study = plan_study(perturbation_phase=1)
    series = _series(["2021-01-04", "2021-01-05", "2021-01-06"], [1.5, 2.25, 3.125])
    text = "naive|order=1|AAPL|P2|6|3|2|1|2021-01-04|2021-01-06|"
    expected = hashlib.sha256(text.encode() + np.array([1.5, 2.25, 3.125]).tobytes())
    assert input_key("naive", "order=1", study, series, "P2") == expected.hexdigest()[:32]


def test_input_key_changes_with_the_first_and_last_dates_and_prices_past_1e_10() -> None:
    study = plan_study()
    base = _series(["2021-01-04", "2021-01-05", "2021-01-06"], [1.0, 2.0, 3.0])
    key = input_key("naive", "", study, base, "P0")
    assert len(key) == 32 and int(key, 16) >= 0
    moved_first = _series(["2021-01-01", "2021-01-05", "2021-01-06"], [1.0, 2.0, 3.0])
    moved_last = _series(["2021-01-04", "2021-01-05", "2021-01-07"], [1.0, 2.0, 3.0])
    moved_middle = _series(["2021-01-04", "2021-01-04", "2021-01-06"], [1.0, 2.0, 3.0])
    assert input_key("naive", "", study, moved_first, "P0") != key
    assert input_key("naive", "", study, moved_last, "P0") != key
    assert input_key("naive", "", study, moved_middle, "P0") == key  # only the ends count
    # prices are compared to 10 decimals: 3e-11 apart is the same series, 3e-10 is not
    assert (
        input_key("naive", "", study, _series(base.dates, [1.0, 2.0, 3.00000000003]), "P0") == key
    )
    assert input_key("naive", "", study, _series(base.dates, [1.0, 2.0, 3.0000000003]), "P0") != key


def test_make_batch_holds_the_perturbed_contexts_clean_futures_and_the_clean_range() -> None:
    study = plan_study(context_length=4, horizon=2, perturbation_phase=1)
    clean = np.array([10.0, 12.0, 9.0, 15.0, 11.0, 14.0, 8.0, 13.0])
    dates = np.arange("2021-01-04", "2021-01-12", dtype="datetime64[D]")
    series = TickerSeries("AAPL", dates, clean, np.array([3, 5]))
    batch = make_batch(study, series, "P1")
    inputs, _ = input_series(clean, "P1", 4, 1)
    assert batch.ticker == "AAPL" and batch.perturbation_id == "P1" and batch.horizon == 2
    np.testing.assert_array_equal(batch.contexts, [inputs[0:4], inputs[2:6]])
    np.testing.assert_array_equal(batch.clean_futures, [[11.0, 14.0], [8.0, 13.0]])
    np.testing.assert_array_equal(batch.window_end_dates, dates[[3, 5]])
    assert batch.study_range == (8.0, 15.0)  # of the clean series, not the inputs


def test_system_costs_are_the_measured_milliseconds_per_window() -> None:
    """SYSTEM_COST's comment: ARIMA 12.5-17.3 ms a window, fracast's prefix encoder
    5.7-8.1, the naive baselines 0.33-0.43; unlisted systems count 0."""
    assert 12.5 <= system_cost("arima", None) <= 17.3
    assert 5.7 <= system_cost("fracast", None) <= 8.1
    for baseline in ("naive", "seasonal_naive"):
        assert 0.33 <= system_cost(baseline, None) <= 0.43
    assert system_cost("random", None) == 0.0
    assert system_cost("biased", object()) == 0.0
    assert system_cost("random", SimpleNamespace(ms_per_window=None)) == 0.0
    assert system_cost("arima", SimpleNamespace(ms_per_window=40)) == 40.0  # its own first


def test_order_partitions_prices_each_system_by_itself_not_its_perturbations() -> None:
    # a system stating its own cost (40 ms) goes before ARIMA's 15; then by ticker, perturbation
    systems = {
        "arima": (SimpleNamespace(), ("P0", "P1")),
        "dear": (SimpleNamespace(ms_per_window=40.0), ("P0", "P1")),
        "random": (SimpleNamespace(), ("P0", "P1")),
    }
    todo = [
        Partition(s, t, p, f"{s}{t}{p}")
        for s in ("random", "arima", "dear")
        for t in ("MSFT", "AAPL")
        for p in ("P1", "P0")
    ]
    ordered = order_partitions(todo, systems)
    assert [(p.system_id, p.ticker, p.perturbation_id) for p in ordered] == [
        (s, t, p)
        for s in ("dear", "arima", "random")
        for t in ("AAPL", "MSFT")
        for p in ("P0", "P1")
    ]


# --- execute.py: the in-process paths ---------------------------------------------------------


def _run_study(**overrides) -> Study:
    return plan_study(**{"systems": ["naive", "biased"], **overrides})


def _windows_of(frame: pd.DataFrame, study: Study) -> pd.DataFrame:
    """By hand: the study-period closes of one ticker and its window end positions."""
    inside = frame[
        (frame["price_date"] >= str(study.start)) & (frame["price_date"] <= str(study.end))
    ]
    return inside.reset_index(drop=True)


def _n_windows(frame: pd.DataFrame, study: Study) -> int:
    n = len(_windows_of(frame, study))
    return len(range(study.context_length - 1, n - study.horizon, study.stride))


def test_a_serial_run_stores_each_partition_once_with_the_forecasts_of_its_windows() -> None:
    con, frames = priced_warehouse()
    study = _run_study()
    said: list[str] = []
    began = time.perf_counter()
    summary = run_forecasts(con, study, load_companies(), workers=1, progress=said.append)
    assert 0 < summary.seconds <= time.perf_counter() - began
    windows = {t: _n_windows(f, study) for t, f in frames.items()}
    assert summary.partitions == summary.computed == 8 and summary.reused == 0
    # every (system, ticker, perturbation) once: windows x horizon rows each
    assert summary.forecast_rows == 2 * 2 * study.horizon * sum(windows.values())
    assert summary.failed_windows == {} and summary.skipped_systems == {}
    stored = con.execute(
        "select system_id, ticker, perturbation_id, n_windows, n_rows, seconds, "
        "partition_key = input_key from raw.forecast_partitions order by all"
    ).fetchall()
    assert [row[:5] for row in stored] == [
        (s, t, p, windows[t], windows[t] * study.horizon)
        for s in ("biased", "naive")
        for t in ("AAPL", "MSFT")
        for p in ("P0", "P2")
    ]
    assert all(row[6] for row in stored)  # first computation: stored under its input key
    for system in ("naive", "biased"):
        spent = sum(row[5] for row in stored if row[0] == system)
        assert summary.per_system_seconds[system] == pytest.approx(spent, rel=1e-12)
        assert summary.per_system_cpu_seconds[system] >= 0
        assert summary.per_system_setup_seconds[system] > 0  # built once, in this process
    assert con.execute(
        "select count(*), count(*) filter (reused) from raw.run_partitions where run_id = ?",
        [summary.run_id],
    ).fetchone() == (8, 0)
    # the values: naive repeats the last clean close (P0); biased is the clean future plus
    # the company's offset (companies seed), step by step
    offset = load_companies().set_index("ticker").loc["MSFT", "biased_offset"]
    closes = _windows_of(frames["MSFT"], study)
    ends = range(study.context_length - 1, len(closes) - study.horizon, study.stride)
    expected_naive, expected_biased = [], []
    for end in ends:
        date = closes["price_date"][end].date()
        for step in range(1, study.horizon + 1):
            expected_naive.append((date, step, closes["close"][end]))
            expected_biased.append((date, step, closes["close"][end + step] + offset))
    for system, expected in (("naive", expected_naive), ("biased", expected_biased)):
        got = con.execute(
            "select window_end_date, horizon_step, forecast from raw.forecasts "
            "where system_id = ? and ticker = 'MSFT' and perturbation_id = 'P0' order by 1, 2",
            [system],
        ).fetchall()
        assert [g[:2] for g in got] == [e[:2] for e in expected]
        np.testing.assert_allclose([g[2] for g in got], [e[2] for e in expected], rtol=1e-12)
    # every partition's quantiles too (both systems give them): one row per forecast row
    assert con.execute("select count(*) from raw.forecast_quantiles").fetchone() == (
        summary.forecast_rows,
    )
    # the run's windows, by hand: context from end - n + 1, horizon to end + d
    got = con.execute(
        "select window_index, window_end_date, context_start_date, horizon_end_date "
        "from raw.windows where ticker = 'MSFT' order by window_index"
    ).fetchall()
    days = [d.date() for d in closes["price_date"]]
    assert got == [(i, days[end], days[end - 5], days[end + 3]) for i, end in enumerate(ends)]
    # what the user saw: the plan, then one line per partition with its window count
    assert said[0] == (
        f"run {summary.run_id}: 8 partitions (2 tickers × systems ['naive', 'biased'] × "
        "['P0', 'P2']); 0 reused, 8 to compute"
    )
    lines = [line for line in said if line.startswith("[")]
    assert [line.split()[0] for line in lines] == [f"[{k}/8]" for k in range(1, 9)]
    # costliest first: naive (0.35 ms a window) before biased (0), tickers then perturbations
    assert [" ".join(line.split()[2:6]) for line in lines] == [
        f"{s} {t} {p}: {windows[t]}"
        for s in ("naive", "biased")
        for t in ("AAPL", "MSFT")
        for p in ("P0", "P2")
    ]


def test_a_second_run_reuses_the_partitions_and_a_forced_one_appends_new_ones() -> None:
    con, _ = priced_warehouse()
    study = _run_study()
    first = run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
    first_keys = sorted(
        k for (k,) in con.execute("select partition_key from raw.forecast_partitions").fetchall()
    )
    said: list[str] = []
    second = run_forecasts(con, study, load_companies(), workers=1, progress=said.append)
    assert (second.partitions, second.reused, second.computed, second.forecast_rows) == (
        8,
        8,
        0,
        0,
    )
    assert second.per_system_seconds == {} and second.per_system_setup_seconds == {}
    assert said[-1].endswith("8 reused, 0 to compute")
    assert con.execute(
        "select partition_key, reused from raw.run_partitions where run_id = ? order by 1",
        [second.run_id],
    ).fetchall() == [(k, True) for k in first_keys]
    forced = run_forecasts(
        con, study, load_companies(), workers=1, force=True, progress=lambda _: None
    )
    assert (forced.reused, forced.computed) == (0, 8)
    assert forced.forecast_rows == first.forecast_rows
    forced_keys = con.execute(
        "select partition_key, reused from raw.run_partitions where run_id = ? order by 1",
        [forced.run_id],
    ).fetchall()
    assert forced_keys == [(f"{k}-{forced.run_id}", False) for k in first_keys]
    # the next run reuses the newest computation of each input key: the forced one's
    fourth = run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
    assert con.execute(
        "select partition_key from raw.run_partitions where run_id = ? order by 1",
        [fourth.run_id],
    ).fetchall() == [(k,) for k, _ in forced_keys]


def _timed_executor(results: list):
    """An executor computing in this process (forecast_partition), in reverse order, that
    reports made-up timings: (forecasts, 0.5 s) alone, or with cpu 0.25 s and a setup of
    2 s on each system's first partition; what it yielded is kept in ``results``."""

    def run(study_json, companies, todo, batches):
        seen = set()
        for partition in reversed(todo):
            forecasts, *_ = forecast_partition(
                study_json, companies, partition.system_id, batches[partition]
            )
            setup = 0.0 if partition.system_id in seen else 2.0
            seen.add(partition.system_id)
            result = (forecasts, 0.5) if not results else (forecasts, 0.5, 0.25, setup)
            results.append(partition)
            yield partition, result

    return run


def test_an_executors_timings_are_summed_per_system() -> None:
    con, _ = priced_warehouse()
    study = _run_study(perturbations=["P0"])
    yielded: list = []
    summary = run_forecasts(
        con, study, load_companies(), executor=_timed_executor(yielded), progress=lambda _: None
    )
    assert summary.computed == 4 and len(yielded) == 4
    # biased's two partitions came first (reversed): the first alone gave (forecasts, 0.5),
    # so its cpu is its wall time and it had no setup; the second cpu 0.25, setup 0 (seen)
    assert summary.per_system_seconds == {"biased": 1.0, "naive": 1.0}
    assert summary.per_system_cpu_seconds == {"biased": 0.75, "naive": 0.5}
    assert summary.per_system_setup_seconds == {"naive": 2.0}
    assert con.execute("select sum(seconds) from raw.forecast_partitions").fetchone() == (2.0,)


def test_forecast_partition_builds_a_system_once_and_checks_its_quantiles() -> None:
    study = _run_study()
    con, _ = priced_warehouse()
    series = load_series(con, study)
    batch = make_batch(study, series["AAPL"], "P0")
    study_json = study.to_json()
    before = time.perf_counter(), time.process_time()
    out, seconds, cpu, setup = forecast_partition(study_json, load_companies(), "naive", batch)
    spent = time.perf_counter() - before[0], time.process_time() - before[1]
    assert 0 < setup <= spent[0] and 0 <= seconds <= spent[0] - setup and 0 <= cpu <= spent[1]
    assert isinstance(out, QuantileForecasts) and out.quantiles.shape == (
        batch.n_windows,
        study.horizon,
        LEVELS,
    )
    np.testing.assert_array_equal(out.point, np.repeat(batch.contexts[:, -1:], study.horizon, 1))
    again = forecast_partition(study_json, load_companies(), "naive", batch)
    assert again[3] == 0.0  # built already: no setup
    np.testing.assert_array_equal(again[0].point, out.point)


def test_a_run_pauses_for_the_tests_after_its_first_stored_partition(
    tmp_path, monkeypatch, capsys
) -> None:
    marker = tmp_path / "paused"
    monkeypatch.setenv(PAUSE_AT, "inference")
    monkeypatch.setenv(PAUSE_FILE, str(marker))
    monkeypatch.setenv(PAUSE_SECONDS, "0")
    con, _ = priced_warehouse()
    seen: list[tuple[str, bool]] = []
    run_forecasts(
        con,
        _run_study(perturbations=["P0"]),
        load_companies(),
        workers=1,
        progress=lambda line: seen.append((line.split()[0], marker.exists())),
    )
    assert seen[0] == ("run", False)
    assert seen[1] == ("[1/4]", True)
    assert capsys.readouterr().err.count("TSRATE_TEST_PAUSED inference") == 1


def test_problems_name_the_skipped_systems_and_the_failed_windows_per_system(
    monkeypatch,
) -> None:
    for name in ("GEMINI_API_KEY", "TSRATE_GEMINI_NUMERIC_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    con, _ = priced_warehouse()
    study = _run_study(systems=["naive", "gemini_numeric"], perturbations=["P0"])
    said: list[str] = []
    summary = run_forecasts(con, study, load_companies(), workers=1, progress=said.append)
    reason = summary.skipped_systems["gemini_numeric"]
    assert said[0] == f"skipping system 'gemini_numeric': {reason}"
    assert summary.computed == 2
    # two failed windows of one partition in this run, one of another system's
    dates = _dates(3)
    store_partitions(
        con,
        summary.run_id,
        [
            FinishedPartition(
                Partition("llm_a", "AAPL", "P0", "fa"),
                "fa",
                dates,
                PartialForecasts(
                    np.array([[np.nan], [1.0], [np.nan]]),
                    (WindowFailure(0, "x", ""), WindowFailure(2, "y", "")),
                ),
                1.0,
            ),
            FinishedPartition(
                Partition("llm_b", "AAPL", "P0", "fb"),
                "fb",
                dates,
                PartialForecasts(np.array([[2.0], [np.nan], [1.0]]), (WindowFailure(1, "z", ""),)),
                1.0,
            ),
        ],
    )
    # and one of a partition the run does not use
    store_partitions(
        con,
        "other-run",
        [
            FinishedPartition(
                Partition("llm_a", "MSFT", "P0", "fc"),
                "fc",
                dates,
                PartialForecasts(np.array([[np.nan], [1.0], [1.0]]), (WindowFailure(0, "x", ""),)),
                1.0,
            )
        ],
    )
    assert failed_windows(con, summary.run_id) == {"llm_a": 2, "llm_b": 1}
    tail = (
        "window(s) without a forecast (see raw.forecast_failures; those windows are left out "
        "of every system's scores, see marts.forecast_failures_summary)"
    )
    assert run_problems(con, summary.run_id) == [
        f"skipped gemini_numeric: {reason}",
        f"llm_a: 2 {tail}",
        f"llm_b: 1 {tail}",
    ]
    assert RunSummary("r").describe_problems() == []


def test_llm_replies_are_cached_beside_a_warehouse_file_unless_told_otherwise(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("TSRATE_LLM_CACHE_DIR", raising=False)
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        with _llm_cache_beside(con):
            assert os.environ["TSRATE_LLM_CACHE_DIR"] == str(tmp_path.resolve() / "cache" / "llm")
        assert "TSRATE_LLM_CACHE_DIR" not in os.environ
        monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "/elsewhere")
        with _llm_cache_beside(con):
            assert os.environ["TSRATE_LLM_CACHE_DIR"] == "/elsewhere"
        assert os.environ["TSRATE_LLM_CACHE_DIR"] == "/elsewhere"
    monkeypatch.delenv("TSRATE_LLM_CACHE_DIR")
    with duckdb.connect(":memory:") as con, _llm_cache_beside(con):  # no folder to cache in
        assert "TSRATE_LLM_CACHE_DIR" not in os.environ


def test_a_run_none_of_whose_systems_can_run_names_each_with_its_reason(monkeypatch) -> None:
    for name in ("GEMINI_API_KEY", "TSRATE_GEMINI_NUMERIC_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    con, _ = priced_warehouse()
    study = _run_study(systems=["gemini_numeric"], perturbations=["P0"])
    reason = unavailable_systems(study, load_companies())["gemini_numeric"]
    with pytest.raises(TsrateError) as raised:
        run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
    assert str(raised.value) == f"none of the run's systems can run here: gemini_numeric: {reason}"
    assert con.execute("select count(*) from raw.runs").fetchone() == (0,)


def test_one_worker_or_fewer_computes_in_this_process(monkeypatch) -> None:
    """workers=1, a count below 1, or no count where the machine's is unknown: every
    partition is forecast here (the systems are built in this process), no pool."""
    con, _ = priced_warehouse()
    study = _run_study(study_tickers=["AAPL"], perturbations=["P0"])
    key = f"biased|{study.to_json()}"  # the last system computed (naive is dearer: first)
    companies = load_companies()

    def built_here(cpus, run) -> list:
        built: dict = {}
        monkeypatch.setattr(execute, "_WORKER_SYSTEMS", built)
        monkeypatch.setattr(execute.os, "cpu_count", lambda: cpus)
        assert run().computed == 2
        return list(built)

    quiet = dict(force=True, progress=lambda _: None)
    assert built_here(2, lambda: run_forecasts(con, study, companies, workers=1, **quiet)) == [key]
    assert built_here(2, lambda: run_forecasts(con, study, companies, workers=-3, **quiet)) == [key]
    # no count given and the machine's unknown: one worker
    assert built_here(None, lambda: run_forecasts(con, study, companies, **quiet)) == [key]


def _progress_parallel(monkeypatch, run) -> list:
    """Run ``run(say)`` and return the ETA's count of partitions under way at once, read
    from the run's progress when the first partition is stored."""
    seen = []
    made = made_by_the_run(monkeypatch, execute, "Progress")

    def say(line: str) -> None:
        if line.startswith("[1/"):
            seen.append(made[-1].parallel)

    run(say)
    return seen


def test_the_eta_counts_partitions_under_way_only_for_a_pool(monkeypatch) -> None:
    """A serial run or an executor's run has none under way beside the one finishing
    (``parallel`` None); a pool's, and a single partition's with two workers, are
    tests/integration/test_sweep9_forecast.py's."""
    con, _ = priced_warehouse()
    study = _run_study(perturbations=["P0"])
    companies = load_companies()
    serial = _progress_parallel(
        monkeypatch,
        lambda say: run_forecasts(con, study, companies, workers=1, force=True, progress=say),
    )
    timed = _progress_parallel(
        monkeypatch,
        lambda say: run_forecasts(
            con, study, companies, executor=_timed_executor([]), force=True, progress=say
        ),
    )
    assert (serial, timed) == ([None], [None])
