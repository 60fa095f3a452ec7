"""The project's `table` materialization (macros/materializations/table.sql): SQL and Python
tables built under their own name in the model's transaction (the old table dropped in the
same transaction), instead of dbt-duckdb's tmp/rename/backup dance.

Real `dbt run` children on a tiny dbt project that uses the project's macros folder as it
is, on a temporary DuckDB file: the table and its comments, a rebuild with other columns, a
view that becomes a table and back (with dbt's relation cache read downstream), failing SQL
and Python models (the old relation stays), a contracted table's typed columns, its NOT
NULL constraint and its check, hooks, leftovers of a crashed default build, and a refused
foreign key.
"""

from __future__ import annotations

import duckdb
import pytest

from tests.integration.tiny_dbt import HOOKS, PRICES, SCHEMA, SEEN, Project

pytestmark = pytest.mark.slow

TABLE = "{{ config(materialized='table') }}\n"

PYTHON = """\
import pandas as pd


def model(dbt, session):
    dbt.config(materialized="table")
    return pd.DataFrame({"ticker": ["AAPL", "MSFT"], "price": [PRICE, 2.5]})
"""

CONTRACT = (
    SCHEMA.replace(
        "    description: Prices of the day.\n",
        "    description: Prices of the day.\n    config:\n      contract:\n        enforced: true\n",
    )
    .replace(
        "      - name: ticker\n",
        "      - name: ticker\n        data_type: varchar\n        constraints:\n"
        "          - type: not_null\n",
    )
    .replace("      - name: price\n", "      - name: price\n        data_type: decimal(2,1)\n")
)


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path / "lean")


def comments(project: Project, name: str) -> tuple[str | None, dict[str, str | None]]:
    """(the table's comment, {column: comment})."""
    table = project.query(f"select comment from duckdb_tables() where table_name = '{name}'")
    return (table[0][0] if table else None), dict(project.columns(name))


def test_a_table_is_created_in_place_with_its_comments(project):
    project.model("prices", TABLE + PRICES)
    project.ok()
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    assert comments(project, "prices") == (
        "Prices of the day.",
        {"ticker": "The stock.", "price": "The close, in dollars."},
    )
    assert project.relations() == ["prices"]
    # built under its own name; the relation comment rides in the same statement
    run_sql = (project.folder / "target/run/lean/models/prices.sql").read_text()
    assert '"prices"' in run_sql and "__dbt" not in run_sql
    assert "comment on table" in run_sql


def test_a_rebuild_with_other_sql_replaces_the_table(project):
    project.model("prices", TABLE + PRICES)
    project.ok()
    project.model("prices", TABLE + "select 'AAPL' as ticker, 2.5 as price, 7 as volume")
    project.ok()
    assert [c for c, _ in project.columns("prices")] == ["ticker", "price", "volume"]
    assert project.query("select volume, price from prices") == [(7, 2.5)]
    assert comments(project, "prices")[0] == "Prices of the day."
    assert dict(project.columns("prices"))["price"] == "The close, in dollars."
    assert project.relations() == ["prices"]


def test_a_view_becomes_a_table_and_dbt_s_cache_knows_it(project):
    project.model("prices", PRICES)
    project.model("seen", SEEN)
    project.ok()
    assert project.kind("prices") == "VIEW"
    project.model("prices", TABLE + PRICES)
    project.ok()
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select cached_type, n from seen") == [("table", 1)]
    assert comments(project, "prices")[0] == "Prices of the day."
    project.model("prices", PRICES)
    project.ok()
    assert project.kind("prices") == "VIEW"
    assert project.query("select cached_type from seen") == [("view",)]


def test_a_failing_table_leaves_the_previous_relation_intact(project):
    project.model("prices", TABLE + PRICES)
    project.ok()
    project.model("prices", TABLE + "select ticker, no_such_column from (" + PRICES + ")")
    assert project.run().returncode != 0
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    assert comments(project, "prices")[1]["price"] == "The close, in dollars."
    assert project.relations() == ["prices"]
    # a view that should become a table that fails: the view stays (dropped in the
    # transaction that failed)
    project.model("prices", PRICES)
    project.ok()
    project.model("prices", TABLE + "select ticker, no_such_column from (" + PRICES + ")")
    assert project.run().returncode != 0
    assert project.kind("prices") == "VIEW"
    assert project.query("select * from prices") == [("AAPL", 1.5)]


def test_a_python_model_is_built_in_place_and_a_failing_one_leaves_the_old_table(project):
    project.python_model("prices", PYTHON.replace("PRICE", "1.5"))
    project.model("seen", SEEN)
    project.ok()
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select * from prices order by ticker") == [
        ("AAPL", 1.5),
        ("MSFT", 2.5),
    ]
    assert comments(project, "prices") == (
        "Prices of the day.",
        {"ticker": "The stock.", "price": "The close, in dollars."},
    )
    assert project.query("select cached_type, n from seen") == [("table", 2)]
    project.python_model("prices", PYTHON.replace("PRICE", "3.5"))
    project.ok()
    assert project.query("select price from prices where ticker = 'AAPL'") == [(3.5,)]
    project.python_model("prices", PYTHON.replace("PRICE", "1 / 0"))
    assert project.run().returncode != 0
    assert project.query("select price from prices where ticker = 'AAPL'") == [(3.5,)]
    assert comments(project, "prices")[0] == "Prices of the day."
    assert sorted(project.relations()) == ["prices", "seen"]


def test_a_contracted_table_has_its_types_and_constraints_and_is_checked(project):
    (project.folder / "models" / "prices.yml").write_text(CONTRACT)
    project.model("prices", TABLE + PRICES)
    project.ok()
    types = project.query(
        "select column_name, data_type from duckdb_columns() where table_name = 'prices' "
        "order by column_index"
    )
    assert types == [("ticker", "VARCHAR"), ("price", "DECIMAL(2,1)")]
    assert project.query(
        "select constraint_type, constraint_column_names from duckdb_constraints() "
        "where table_name = 'prices'"
    ) == [("NOT NULL", ["ticker"])]
    assert comments(project, "prices") == (
        "Prices of the day.",
        {"ticker": "The stock.", "price": "The close, in dollars."},
    )
    # a contract makes the columns the documented ones: their comments ride in the main
    # statement (no listing of the relation's columns afterwards)
    run_sql = (project.folder / "target/run/lean/models/prices.sql").read_text()
    assert run_sql.count("comment on column") == 2
    # a row that breaks the constraint: the build fails, the old rows stay
    project.model("prices", TABLE + "select cast(null as varchar) as ticker, 2.5 as price")
    result = project.run()
    assert result.returncode != 0
    assert "not null" in (result.stdout + result.stderr).lower()
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    # a column of another type: the contract check refuses it
    project.model("prices", TABLE + "select 'AAPL' as ticker, 'high' as price")
    result = project.run()
    assert result.returncode != 0
    assert "contract" in (result.stdout + result.stderr).lower()
    assert project.query("select * from prices") == [("AAPL", 1.5)]


def test_hooks_run_inside_and_outside_the_transaction(project):
    project.model("prices", HOOKS.replace("MATERIALIZED", "table") + PRICES)
    project.ok()
    assert project.query("select step, n from main.hook_log order by rowid") == [
        ("pre inside", None),
        ("post inside", 1),
        ("post outside", 1),
    ]


def test_leftovers_of_a_crashed_default_build_are_removed(project):
    project.model("prices", TABLE + PRICES)
    project.ok()
    with duckdb.connect(str(project.warehouse)) as con:
        con.execute("create table main.prices__dbt_tmp as select 1 as x")
        con.execute("create table main.prices__dbt_backup as select 2 as x")
        con.execute("create table main.prices_archive as select 3 as x")
    project.ok()
    assert sorted(project.relations()) == ["prices", "prices_archive"]
    assert project.query("select * from prices") == [("AAPL", 1.5)]


def test_a_foreign_key_is_refused_with_the_reason(project):
    keyed = CONTRACT.replace(
        "          - type: not_null\n",
        "          - type: not_null\n          - type: foreign_key\n"
        "            to: ref('companies')\n            to_columns: [ticker]\n",
    )
    (project.folder / "models" / "prices.yml").write_text(keyed)
    project.model("companies", TABLE + "select 'AAPL' as ticker")
    project.model("prices", TABLE + PRICES)
    result = project.run()
    assert result.returncode != 0
    assert "does not handle foreign keys" in result.stdout + result.stderr
