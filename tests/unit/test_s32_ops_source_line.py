"""``tsrate run`` ends with a warning line naming the systems it rated from forecasts that an
earlier run made on other prices (``marts.run_provenance.source_days_changed > 0``), each
with its changed ticker-days, and the hint of the mart's ``source_inputs_reason``: before,
only the report and the mart said so, while fallback and copied windows had their lines.

A real DuckDB warehouse with the raw tables; ``marts.run_provenance`` is written here with
the mart's columns (the real build's rows: tests/integration/test_s32_ops_source_line.py).
"""

from __future__ import annotations

import duckdb
import pytest

from tsrate.commands.pipeline import _print_run_problems
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.forecast.summary import source_change_line

HINT = (
    "their scores compare forecasts of one series with another. Forecast them again on this "
    "run's inputs: tsrate run --systems {ids} (an imported model: tsrate export-inputs, then "
    "import-predictions); see marts.run_provenance.source_inputs_reason"
)


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    with duckdb.connect(str(path)) as con:
        create_raw_tables(con)
    return path


def _provenance(warehouse, rows) -> None:
    """``marts.run_provenance`` rows: (run_id, system_id, source_run_id, days changed)."""
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema if not exists marts")
        con.execute(
            "create table marts.run_provenance (run_id varchar, system_id varchar, "
            "source_run_id varchar, source_days_changed integer, source_inputs_reason varchar)"
        )
        con.executemany("insert into marts.run_provenance values (?, ?, ?, ?, 'the reason')", rows)


def test_the_run_names_each_system_rated_from_other_prices(warehouse, capsys):
    _provenance(
        warehouse,
        [
            ("r2", "random", "r1", 4),
            ("r2", "arima", "r0", 1),
            ("r2", "naive", "r2", 0),  # forecast in this run
            ("r2", "chronos", "r1", None),  # an old run without stored inputs: unknown
            ("r1", "fracast", "r0", 7),  # another run's
        ],
    )
    _print_run_problems("r2")
    assert capsys.readouterr().out.splitlines() == [
        "warning: rated from forecasts made on other prices: arima (1 ticker-day(s) changed "
        "since run r0 forecast it), random (4 ticker-day(s) changed since run r1 forecast "
        "it); " + HINT.format(ids="arima,random")
    ]


def test_nothing_is_said_when_every_system_saw_the_same_prices(warehouse, capsys):
    _provenance(warehouse, [("r2", "random", "r1", 0), ("r2", "naive", "r2", 0)])
    _print_run_problems("r2")
    assert capsys.readouterr().out == ""


def test_a_run_not_built_has_no_mart_to_read(warehouse, capsys):
    with duckdb.connect(str(warehouse)) as con:
        assert source_change_line(con, "r2") is None
    _print_run_problems("r2")
    assert capsys.readouterr().out == ""


def test_it_follows_the_runs_other_warnings(warehouse, capsys):
    _provenance(warehouse, [("r2", "random", "r1", 2)])
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "insert into raw.run_skipped_systems (run_id, system_id, reason, recorded_at) "
            "values ('r2', 'chronos', 'no weights here', now()::timestamp)"
        )
    _print_run_problems("r2")
    assert capsys.readouterr().out.splitlines() == [
        "warning: skipped chronos: no weights here",
        "details: staging.stg_run_skipped_systems, marts.forecast_failures_summary",
        "warning: rated from forecasts made on other prices: random (2 ticker-day(s) changed "
        "since run r1 forecast it); " + HINT.format(ids="random"),
    ]
