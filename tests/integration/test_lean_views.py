"""The project's `view` materialization (macros/materializations/view.sql): one
`create or replace view` in the model's transaction, instead of dbt's tmp/rename/backup dance.

Real `dbt run` children on a tiny dbt project that uses the project's macros folder as it
is, on a temporary DuckDB file: the view and its comments, a rebuild with other columns, a
table that becomes a view and back (and dbt's relation cache, read by a downstream model),
a view whose SQL fails (the old relation stays), hooks inside and outside the transaction,
and a contracted view's check. Tables: tests/integration/test_lean_tables.py.
"""

from __future__ import annotations

import duckdb
import pytest

from tests.integration.tiny_dbt import HOOKS, PRICES, SCHEMA, SEEN, Project

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path / "lean")


def test_a_view_is_created_with_its_comments(project):
    project.model("prices", PRICES)
    project.ok()
    assert project.kind("prices") == "VIEW"
    comment = project.query("select comment from duckdb_views() where view_name = 'prices'")
    assert comment == [("Prices of the day.",)]
    assert project.columns("prices") == [
        ("ticker", "The stock."),
        ("price", "The close, in dollars."),
    ]
    # one statement builds it: no intermediate or backup relation is made or left
    assert project.relations() == ["prices"]
    run_sql = (project.folder / "target/run/lean/models/prices.sql").read_text()
    assert "create or replace view" in run_sql and "__dbt" not in run_sql


def test_leftovers_of_a_crashed_default_build_are_removed(project):
    """A `__dbt_tmp` view and a `__dbt_backup` table that a crashed build of dbt's default
    view materialization left beside the model are dropped when the model is built; other
    relations are left alone."""
    project.model("prices", PRICES)
    project.ok()
    with duckdb.connect(str(project.warehouse)) as con:
        con.execute("create view main.prices__dbt_tmp as select 1 as x")
        con.execute("create table main.prices__dbt_backup as select 2 as x")
        con.execute("create table main.prices_archive as select 3 as x")
    project.ok()
    assert sorted(project.relations()) == ["prices", "prices_archive"]
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    assert project.kind("prices") == "VIEW"


def test_a_rebuild_with_other_sql_changes_the_columns(project):
    project.model("prices", PRICES)
    project.ok()
    project.model("prices", "select 'AAPL' as ticker, 2.5 as price, 7 as volume")
    project.ok()
    assert [c for c, _ in project.columns("prices")] == ["ticker", "price", "volume"]
    assert project.query("select volume, price from prices") == [(7, 2.5)]
    # the comments are written again on the new view
    assert dict(project.columns("prices"))["price"] == "The close, in dollars."
    assert project.relations() == ["prices"]


def test_a_table_becomes_a_view_and_dbt_s_cache_knows_it(project):
    project.model("prices", "{{ config(materialized='table') }}\n" + PRICES)
    project.model("seen", SEEN)
    project.ok()
    assert project.kind("prices") == "BASE TABLE"
    project.model("prices", PRICES)
    project.ok()
    assert project.kind("prices") == "VIEW"
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    assert dict(project.columns("prices"))["ticker"] == "The stock."
    # `seen` ran after `prices` in the same invocation: the cache holds the view, not the
    # dropped table
    assert project.query("select cached_type, n from seen") == [("view", 1)]
    # and back: the project's table materialization replaces the view
    project.model("prices", "{{ config(materialized='table') }}\n" + PRICES)
    project.ok()
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select cached_type from seen") == [("table",)]


def test_a_failing_view_leaves_the_previous_relation_intact(project):
    project.model("prices", PRICES)
    project.ok()
    project.model("prices", "select ticker, no_such_column from (" + PRICES + ")")
    assert project.run().returncode != 0
    assert project.kind("prices") == "VIEW"
    assert project.query("select * from prices") == [("AAPL", 1.5)]
    assert dict(project.columns("prices"))["price"] == "The close, in dollars."
    assert project.relations() == ["prices"]
    # a table that should become a view that fails: the table stays (dropped in the
    # transaction that failed)
    project.model("prices", "{{ config(materialized='table') }}\n" + PRICES)
    project.ok()
    project.model("prices", "select ticker, no_such_column from (" + PRICES + ")")
    assert project.run().returncode != 0
    assert project.kind("prices") == "BASE TABLE"
    assert project.query("select * from prices") == [("AAPL", 1.5)]


def test_hooks_run_inside_and_outside_the_transaction(project):
    project.model("prices", HOOKS.replace("MATERIALIZED", "view") + PRICES)
    project.ok()
    assert project.query("select step, n from main.hook_log order by rowid") == [
        ("pre inside", None),
        ("post inside", 1),
        ("post outside", 1),
    ]


def test_a_contracted_view_is_checked(project):
    contract = SCHEMA.replace(
        "    description: Prices of the day.\n",
        "    description: Prices of the day.\n    config:\n      contract:\n        enforced: true\n",
    )
    contract = contract.replace(
        "      - name: ticker\n", "      - name: ticker\n        data_type: varchar\n"
    ).replace("      - name: price\n", "      - name: price\n        data_type: decimal(2,1)\n")
    (project.folder / "models" / "prices.yml").write_text(contract)
    project.model("prices", PRICES)
    project.ok()
    assert project.kind("prices") == "VIEW"
    # its column comments ride in the view's statement (the contract fixed the columns)
    assert project.columns("prices") == [
        ("ticker", "The stock."),
        ("price", "The close, in dollars."),
    ]
    run_sql = (project.folder / "target/run/lean/models/prices.sql").read_text()
    assert run_sql.count("comment on column") == 2
    project.model("prices", "select 'AAPL' as ticker, 1 as price")
    result = project.run()
    assert result.returncode != 0
    assert "contract" in (result.stdout + result.stderr).lower()
    assert project.query("select * from prices") == [("AAPL", 1.5)]
