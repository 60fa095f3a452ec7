"""Publish the marts of a successful run as a read-only snapshot for readers and BI tools.

The live warehouse has one writer at a time (DuckDB's rule), so dashboards must not read it.
After each successful build the marts and seeds are copied into a new DuckDB file, which
then replaces ``published/tsrate.duckdb`` by an atomic rename: a reader sees the previous
snapshot or the new one, never a half-built state, and never blocks a run. Table and
column descriptions (dbt persist_docs comments) travel with the tables.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from pathlib import Path

import duckdb

from tsrate import TsrateError

PUBLISHED_SCHEMAS = ("marts", "seeds")
SNAPSHOT_NAME = "tsrate.duckdb"


@dataclasses.dataclass(frozen=True)
class PublishResult:
    path: Path
    run_id: str
    row_counts: dict[str, int]


def published_path(warehouse: Path) -> Path:
    """``<warehouse folder>/published/tsrate.duckdb`` (override with TSRATE_PUBLISHED)."""
    override = os.environ.get("TSRATE_PUBLISHED")
    return Path(override) if override else Path(warehouse).parent / "published" / SNAPSHOT_NAME


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def publish(warehouse: Path, run_id: str, target: Path | None = None) -> PublishResult:
    """Copy marts and seeds of the live ``warehouse`` into a snapshot swapped in atomically."""
    warehouse = Path(warehouse)
    target = Path(target or published_path(warehouse))
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{run_id}.partial")
    staging.unlink(missing_ok=True)
    con = duckdb.connect(str(staging))
    try:
        con.execute(f"attach {_literal(warehouse)} as live (read_only)")
        relations = con.execute(
            "select schema_name, table_name, comment from duckdb_tables() "
            "where database_name = 'live' and schema_name in (select unnest($schemas)) "
            "union all "
            "select schema_name, view_name, comment from duckdb_views() "
            "where database_name = 'live' and schema_name in (select unnest($schemas)) "
            "order by 1, 2",
            {"schemas": list(PUBLISHED_SCHEMAS)},
        ).fetchall()
        if not any(schema == "marts" for schema, _, _ in relations):
            raise TsrateError(f"{warehouse} holds no marts to publish; run `tsrate build` first")
        counts: dict[str, int] = {}
        for schema, name, comment in relations:
            qualified = f"{_quote(schema)}.{_quote(name)}"
            con.execute(f"create schema if not exists {_quote(schema)}")
            con.execute(f"create table {qualified} as select * from live.{qualified}")
            if comment:
                con.execute(f"comment on table {qualified} is {_literal(comment)}")
            for column, column_comment in con.execute(
                "select column_name, comment from duckdb_columns() where database_name = 'live' "
                "and schema_name = ? and table_name = ? and comment is not null",
                [schema, name],
            ).fetchall():
                con.execute(
                    f"comment on column {qualified}.{_quote(column)} is {_literal(column_comment)}"
                )
            counts[f"{schema}.{name}"] = con.execute(
                f"select count(*) from {qualified}"
            ).fetchone()[0]
        study = con.execute("select study from live.raw.runs where run_id = ?", [run_id]).fetchone()
        con.execute("detach live")
        con.execute(
            "create table published_runs (run_id varchar, published_at timestamp, "
            "study json, row_counts json)"
        )
        if target.exists():
            con.execute(f"attach {_literal(target)} as previous (read_only)")
            con.execute("insert into published_runs select * from previous.published_runs")
            con.execute("detach previous")
        con.execute(
            "insert into published_runs values (?, ?, ?, ?)",
            [
                run_id,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                study[0] if study else None,
                json.dumps(counts),
            ],
        )
        con.execute(
            "comment on table published_runs is 'One row per publication of this snapshot: "
            "the run whose marts it holds, when, its study and row counts.'"
        )
        con.execute("checkpoint")
    except BaseException:
        con.close()
        staging.unlink(missing_ok=True)
        raise
    con.close()
    os.replace(staging, target)  # atomic on one filesystem: readers see old or new
    return PublishResult(target, run_id, counts)


def _literal(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"
