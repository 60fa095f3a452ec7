"""A tiny dbt project that uses the tsrate project's macros folder as it is, on a temporary
DuckDB file: what the project's own materializations (macros/materializations/) are tested
on with real `dbt run` children (tests/integration/test_lean_views.py, test_lean_tables.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from tsrate.config import project_dir

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
        (self.folder / "models" / f"{name}.py").unlink(missing_ok=True)

    def python_model(self, name: str, code: str) -> None:
        (self.folder / "models" / f"{name}.py").write_text(code)
        (self.folder / "models" / f"{name}.sql").unlink(missing_ok=True)

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

#: pre- and post-hooks inside and outside the transaction, logging to main.hook_log (the
#: post-hooks count the model's rows); replace MATERIALIZED
HOOKS = """\
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
