"""The leakage flags, the uncertainty clusters and the windows themselves stay on the run's
own trading calendar, whatever the price history gained or lost since (a real warehouse, a
real forecast, real dbt builds).

``tsrate ingest`` merges a file's new dates into the stored history: a day the earlier
source lacked lands inside it and every later day of raw.prices moves one index on; with
``--replace`` a day can also leave it. A run made before keeps the series it forecast
(raw.perturbed_inputs): its windows' target days, their clusters and the windows themselves
must not move or vanish with raw.prices.
"""

from __future__ import annotations

import datetime as dt
import math

import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import (
    ingest,
    merge_day,
    read,
    small_study,
    warehouse_lacking_a_day,
)
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect, store_prices

pytestmark = pytest.mark.slow

#: a Tuesday inside AAPL's study below, missing from the first source
MISSING_DAY = dt.date(2022, 11, 15)
#: the origin the trading day before it, and the one before that (a Friday)
ORIGIN = dt.date(2022, 11, 14)
EARLIER_ORIGIN = dt.date(2022, 11, 11)
HORIZON = 5
MARTS = "+window_errors +window_leakage +uncertainty_effects systems perturbations"


def _study():
    return small_study(
        study_tickers=["AAPL"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=20,
        horizon=HORIZON,
        perturbations=["P0", "P1"],
        systems=["naive"],
    )


def _rebuild(warehouse, run_id, dbt_target) -> None:
    dbt.build(
        run_id=run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select=MARTS,
    )


def test_a_merged_day_does_not_become_a_target_day_of_the_leakage_flags(tmp_path, dbt_target):
    # A checkpoint trained on AAPL up to MISSING_DAY. In the run's series the origin
    # ORIGIN's first target day is 2022-11-16 (the run never forecast 11-15): after
    # train_end, no leak. EARLIER_ORIGIN's first target day is ORIGIN: a leak. After the
    # day is merged, the first target of ORIGIN must still be 11-16 (counted in raw.prices
    # it became 11-15, on train_end: a leak the run's forecasts never had).
    warehouse, day = warehouse_lacking_a_day(tmp_path, ["AAPL"], MISSING_DAY)
    with connect(warehouse) as con:
        con.execute(
            "insert into raw.model_checkpoints (system_id, checkpoint_key, checkpoint_path, "
            "train_start, train_end, tickers, git_revision, settings_json, trained_at, "
            "registered_at) values ('naive', 'ck', 'ck.pt', date '2022-01-03', ?, 'AAPL', "
            "'rev', '{}', timestamp '2022-12-01 00:00:00', timestamp '2022-12-01 00:00:00')",
            [MISSING_DAY],
        )
    run_id = forecast_and_build(warehouse, _study(), dbt_target, select=MARTS)
    flags_sql = (
        "select window_end_date, in_training_data, leakage_basis from marts.window_leakage "
        "where ticker = 'AAPL' and window_end_date in (?, ?) order by window_end_date"
    )
    expected = [(EARLIER_ORIGIN, True), (ORIGIN, False)]
    before = read(warehouse, flags_sql, [EARLIER_ORIGIN, ORIGIN])
    assert (
        list(zip(before["window_end_date"].dt.date, before["in_training_data"], strict=True))
        == expected
    )
    assert (before["leakage_basis"] == "checkpoint").all()
    merge_day(warehouse, day)
    _rebuild(warehouse, run_id, dbt_target)
    after = read(warehouse, flags_sql, [EARLIER_ORIGIN, ORIGIN])
    assert (
        list(zip(after["window_end_date"].dt.date, after["in_training_data"], strict=True))
        == expected
    )


def test_a_merged_day_leaves_the_uncertainty_clusters_in_place(tmp_path, dbt_target):
    # The run's AAPL windows are consecutive origins of its series (stride 1): positions
    # 0 .. n - 1 in ceil(n / horizon) clusters of `horizon` origins. A day merged into
    # raw.prices after the run must change neither the clusters nor the interval.
    warehouse, day = warehouse_lacking_a_day(tmp_path, ["AAPL"], MISSING_DAY)
    run_id = forecast_and_build(warehouse, _study(), dbt_target, select=MARTS)
    n_windows = read(warehouse, "select count(*) as n from raw.windows where run_id = ?", [run_id])[
        "n"
    ][0]
    assert n_windows > HORIZON
    effects_sql = (
        "select outcome, n_windows, n_clusters, mean_change, change_se "
        "from marts.uncertainty_effects where perturbation_id = 'P1' order by outcome"
    )
    before = read(warehouse, effects_sql)
    assert len(before) == 2
    assert (before["n_windows"] == n_windows).all()
    assert (before["n_clusters"] == math.ceil(n_windows / HORIZON)).all()
    merge_day(warehouse, day)
    _rebuild(warehouse, run_id, dbt_target)
    after = read(warehouse, effects_sql)
    assert (after["n_clusters"] == math.ceil(n_windows / HORIZON)).all()
    assert after[["outcome", "n_windows"]].equals(before[["outcome", "n_windows"]])
    assert after["mean_change"].tolist() == pytest.approx(before["mean_change"].tolist())
    assert after["change_se"].tolist() == pytest.approx(before["change_se"].tolist())


def test_an_origin_removed_from_the_history_keeps_its_window(tmp_path, dbt_target):
    # `tsrate ingest --replace` with a file lacking ORIGIN removes that day from raw.prices.
    # The run forecast it: its window stays in window_errors and window_leakage (before, it
    # silently dropped out of every mart).
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])
    run_id = forecast_and_build(warehouse, _study(), dbt_target, select=MARTS)
    windows_sql = (
        "select count(*) as n, count(*) filter (where window_end_date = ?) as at_origin "
        "from (select distinct ticker, window_end_date from marts.{})"
    )
    n_windows = read(warehouse, "select count(*) as n from raw.windows where run_id = ?", [run_id])[
        "n"
    ][0]
    for mart in ("window_errors", "window_leakage"):
        counts = read(warehouse, windows_sql.format(mart), [ORIGIN])
        assert (counts["n"][0], counts["at_origin"][0]) == (n_windows, 1)
    with connect(warehouse) as con:
        history = con.execute(
            "select ticker, price_date, close from raw.prices "
            "where ticker = 'AAPL' and price_date <> ?",
            [ORIGIN],
        ).df()
        changes = store_prices(con, history, "a file without the day", replace=True)
    assert changes["AAPL"].removed == 1
    _rebuild(warehouse, run_id, dbt_target)
    for mart in ("window_errors", "window_leakage"):
        counts = read(warehouse, windows_sql.format(mart), [ORIGIN])
        assert (counts["n"][0], counts["at_origin"][0]) == (n_windows, 1), mart
