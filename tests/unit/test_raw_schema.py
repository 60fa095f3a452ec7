"""The raw schema: one function creates every raw table that any DDL in src/tsrate defines, at
the writing edges, and opening the warehouse creates none."""

from __future__ import annotations

import re
from pathlib import Path

from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.sources import load_skfolio_sp500

SRC = Path(__file__).resolve().parents[2] / "src" / "tsrate"


def _raw_tables_in_the_source() -> set[str]:
    """Every ``create table if not exists raw.<name>`` written anywhere in src/tsrate (read as
    text, not through the module under test)."""
    pattern = re.compile(r"create table if not exists raw\.(\w+)", re.IGNORECASE)
    return {m for path in SRC.rglob("*.py") for m in pattern.findall(path.read_text())}


def _raw_tables(con) -> set[str]:
    rows = con.execute("select table_name from duckdb_tables() where schema_name = 'raw'")
    return {name for (name,) in rows.fetchall()}


def test_create_raw_tables_creates_every_raw_table_the_source_defines(tmp_path):
    expected = _raw_tables_in_the_source()
    assert {"prices", "runs", "forecasts", "imported_systems", "suite_runs"} <= expected
    with connect(tmp_path / "w.duckdb") as con:
        assert _raw_tables(con) == set()  # connect only opens the file
        create_raw_tables(con)
        assert _raw_tables(con) == expected
        create_raw_tables(con)  # idempotent
        assert _raw_tables(con) == expected


def test_ingest_is_a_writing_edge(tmp_path):
    """The first write to a new warehouse (an ingest) leaves every raw table in place, so the
    staging views of the core and of never-run suites read their sources plainly."""
    with connect(tmp_path / "w.duckdb") as con:
        store_prices(con, load_skfolio_sp500(["AAPL"]), "skfolio")
        assert _raw_tables(con) == _raw_tables_in_the_source()
        assert con.execute("select count(distinct ticker) from raw.prices").fetchone()[0] == 1


def test_a_build_drops_the_marts_an_older_release_left_and_keeps_the_others(tmp_path):
    """Issue 26 moved wrs, perturbation_effect_scores and system_perturbation_sets out of
    marts; dbt never drops a table whose model is gone, so the build's first step does, or
    publish would keep copying them with an old run's rows."""
    from tsrate.config import project_dir
    from tsrate.platform.dbt_runner import RETIRED_MARTS, ensure_raw_schema

    models = {p.stem for p in project_dir().glob("*models/**/*") if p.suffix in {".sql", ".py"}}
    assert not models & set(RETIRED_MARTS)  # never a live model's table
    warehouse = tmp_path / "old.duckdb"
    with connect(warehouse) as con:
        con.execute("create schema marts")
        for name in (*RETIRED_MARTS, "ratings"):
            con.execute(f"create table marts.{name} as select 1 as x")
    ensure_raw_schema(warehouse)
    with connect(warehouse, read_only=True) as con:
        left = {
            r[0]
            for r in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts'"
            ).fetchall()
        }
    assert left == {"ratings"}
