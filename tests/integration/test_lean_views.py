"""The project's `view` materialization (macros/materializations/view.sql): one
`create or replace view` in the model's transaction, instead of dbt's tmp/rename/backup dance.

Real `dbt run` children on a tiny dbt project that uses the project's macros folder as it
is, on a temporary DuckDB file: the view and its comments, a rebuild with other columns, a
table that becomes a view and back (and dbt's relation cache, read by a downstream model),
a view whose SQL fails (the old relation stays), hooks inside and outside the transaction,
and a contracted view's check. Tables keep dbt-duckdb's own materialization.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tsrate.config import project_dir

pytestmark = pytest.mark.slow

DBT = Path(sys.executable).parent / "dbt"

PROJECT = """\
name: lean
version: "0.1.0"
config-version: 2
profile: lean
model-paths: ["models"]
macro-paths: ["macros"]
models:
  lean:
    +materialized: view
    +persist_docs:
      relation: true
      columns: true
"""

PROFILES = """\
lean:
  target: local
  outputs:
    local:
      type: duckdb
      path: "{warehouse}"
      threads: 1
"""

SCHEMA = """\
version: 2
models:
  - name: prices
    description: Prices of the day.
    columns:
      - name: ticker
        description: The stock.
      - name: price
        description: The close, in dollars.
"""

#: a downstream model that records what dbt's relation cache holds for `prices` when it runs
SEEN = """\
{%- set rel = adapter.get_relation(database=this.database, schema=this.schema, identifier='prices') -%}
select '{{ rel.type if rel is not none else "missing" }}' as cached_type, count(*) as n
from {{ ref('prices') }}
"""


class Project:
    """A tiny dbt project in ``folder`` with the tsrate project's macros and a DuckDB file."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.warehouse = folder / "lean.duckdb"
        (folder / "models").mkdir(parents=True)
        shutil.copytree(project_dir() / "macros", folder / "macros")
        (folder / "dbt_project.yml").write_text(PROJECT)
        (folder / "profiles.yml").write_text(PROFILES.format(warehouse=self.warehouse))
        (folder / "models" / "prices.yml").write_text(SCHEMA)

    def model(self, name: str, sql: str) -> None:
        (self.folder / "models" / f"{name}.sql").write_text(sql)

    def run(self, *select: str) -> subprocess.CompletedProcess:
        args = ["run", "--project-dir", str(self.folder), "--profiles-dir", str(self.folder)]
        args += ["--target-path", str(self.folder / "target")]
        args += ["--log-path", str(self.folder / "logs")]
        if select:
            args += ["--select", *select]
        return subprocess.run([str(DBT), *args], capture_output=True, text=True, timeout=300)

    def ok(self, *select: str) -> None:
        result = self.run(*select)
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]

    def query(self, sql: str) -> list[tuple]:
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql).fetchall()

    def kind(self, name: str) -> str | None:
        rows = self.query(
            f"select table_type from information_schema.tables where table_name = '{name}'"
        )
        return rows[0][0] if rows else None

    def columns(self, name: str) -> list[tuple[str, str | None]]:
        return self.query(
            "select column_name, comment from duckdb_columns() "
            f"where table_name = '{name}' order by column_index"
        )

    def relations(self) -> list[str]:
        return [r[0] for r in self.query("select table_name from information_schema.tables")]


PRICES = "select 'AAPL' as ticker, 1.5 as price"


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
    # and back: dbt-duckdb's table materialization replaces the view
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
    hooks = """\
{{ config(
    materialized='MATERIALIZED',
    pre_hook=[
        {"sql": "create table if not exists main.hook_log (step varchar, n bigint)", "transaction": False},
        "insert into main.hook_log values ('pre inside', null)",
    ],
    post_hook=[
        "insert into main.hook_log select 'post inside', count(*) from {{ this }}",
        {"sql": "insert into main.hook_log select 'post outside', count(*) from {{ this }}",
         "transaction": False},
    ],
) }}
"""
    project.model("prices", hooks.replace("MATERIALIZED", "view") + PRICES)
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
    project.model("prices", "select 'AAPL' as ticker, 1 as price")
    result = project.run()
    assert result.returncode != 0
    assert "contract" in (result.stdout + result.stderr).lower()
    assert project.query("select * from prices") == [("AAPL", 1.5)]
