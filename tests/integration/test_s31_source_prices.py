"""A system rated from an earlier run of its study is flagged when that run forecast other
prices than the series the selected run scores against (``marts.run_provenance``'s
``source_run_id``, ``source_days_changed``, ``source_inputs_reason``; the report's reading).

Real forecasts (naive, random) in a real warehouse, the prices of three stored days changed
between the runs as ``tsrate ingest --replace`` of revised closes would, a real dbt build.
The expected count is read from the runs' stored inputs and the days changed here, not from
the model.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.integration.builds import unit_cases_pass
from tests.support.import_study import STUDY
from tests.support.source_runs import forecast
from tests.support.warehouses import ingest, read
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.sources import source_note

pytestmark = pytest.mark.slow


def provenance(warehouse) -> dict:
    frame = read(warehouse, "select system_id, source_run_id, source_days_changed, "
                            "source_inputs_reason from marts.run_provenance")  # fmt: skip
    return {row.system_id: row for row in frame.itertuples()}


def test_a_system_forecast_on_other_prices_is_flagged(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    first = forecast(warehouse, ["naive", "random"])

    # three AAPL days the first run stored (and a JPM day: random forecast JPM too) get
    # revised closes; one more AAPL day outside every stored series changes nothing
    stored = read(warehouse, "select distinct ticker, price_date from raw.perturbed_inputs "
                             "where run_id = ? order by all", [first])  # fmt: skip
    aapl = stored[stored["ticker"] == "AAPL"]["price_date"].tolist()
    jpm = stored[stored["ticker"] == "JPM"]["price_date"].tolist()
    changed = [("AAPL", aapl[10]), ("AAPL", aapl[20]), ("AAPL", aapl[30]), ("JPM", jpm[5])]
    with connect(warehouse) as con:
        for ticker, day in changed:
            con.execute("update raw.prices set close = close * 1.01 "
                        "where ticker = ? and price_date = ?", [ticker, day])  # fmt: skip
        earliest = con.execute("select min(price_date) from raw.prices").fetchone()[0]
        con.execute("update raw.prices set close = close * 1.5 "
                    "where ticker = 'AAPL' and price_date = ?", [earliest])  # fmt: skip
    later = forecast(warehouse, ["naive"])  # random stays rated from the first run

    dbt.build(warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
              select="+run_provenance")  # fmt: skip
    rows = provenance(warehouse)
    assert set(rows) == {"naive", "random"}
    assert rows["naive"].source_run_id == later
    assert rows["naive"].source_days_changed == 0
    assert pd.isna(rows["naive"].source_inputs_reason)
    assert rows["random"].source_run_id == first
    assert rows["random"].source_days_changed == len(changed)
    reason = rows["random"].source_inputs_reason
    first_day = min(day for _, day in changed)
    assert f"{len(changed)} of {2 * len(aapl)} ticker-days" in reason
    assert f"(first {first_day:%Y-%m-%d})" in reason
    assert first in reason and "tsrate run --systems random" in reason

    # the report's reading names the system and the reason (the mart as the report reads it)
    empty = pd.DataFrame()
    frames = ["ratings", "system_summary", "perturbation_summary", "confounder_comparison",
              "group_comparisons", "modality_pairs", "systems", "perturbations", "companies",
              "windows"]  # fmt: skip
    data = ReportData(run_id=later, published_at="", study={}, **dict.fromkeys(frames, empty),
                      run_provenance=read(warehouse, "select * from marts.run_provenance"))  # fmt: skip
    note = source_note(data)
    assert 'id="sources"' in note and "<b>random</b>: forecast in run " + first in note
    assert "naive" not in note


def test_the_same_prices_raise_no_flag(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    first = forecast(warehouse, ["naive", "random"])
    forecast(warehouse, ["naive"])
    dbt.build(warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
              select="+run_provenance")  # fmt: skip
    rows = provenance(warehouse)
    assert rows["random"].source_run_id == first
    assert rows["random"].source_days_changed == 0
    assert pd.isna(rows["random"].source_inputs_reason)


def test_source_run_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    """The hand-computed dbt unit cases of int_source_run_inputs (changed, missing and extra
    days; a source that stored nothing) and run_provenance (the reason's wording, own and
    uncomparable systems), forced on."""
    selection = ["--select", "+run_provenance", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
