"""Tiny warehouses for the publishing and operations tests: raw.runs, one described mart and
one seed in the shape publish reads, or raw.runs alone with run states. No test here."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb


def tiny_warehouse(path: Path, run_id: str, rows: int = 3) -> None:
    """raw.runs, one mart with a comment and a described column, one seed."""
    con = duckdb.connect(str(path))
    try:
        for schema in ("raw", "marts", "seeds"):
            con.execute(f"create schema if not exists {schema}")
        con.execute("create table if not exists raw.runs (run_id varchar, study json)")
        con.execute("insert into raw.runs values (?, ?)", [run_id, json.dumps({"n": rows})])
        con.execute(
            "create or replace table marts.scores as "
            f"select '{run_id}' as run_id, range as item from range({rows})"
        )
        con.execute("comment on table marts.scores is 'One row per item.'")
        con.execute("comment on column marts.scores.item is 'The item number.'")
        con.execute("create or replace table seeds.systems as select 'naive' as system_id")
    finally:
        con.close()


def scored_warehouse(path: Path, run_id: str, rows: int) -> None:
    """A live warehouse with the shape publish reads: raw.runs, a mart and a seed."""
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema if not exists raw")
        con.execute("create schema if not exists marts")
        con.execute("create schema if not exists seeds")
        con.execute("create table if not exists raw.runs (run_id varchar, study json)")
        con.execute("insert into raw.runs values (?, ?)", [run_id, json.dumps({"n": rows})])
        con.execute(
            "create or replace table marts.scores as "
            f"select '{run_id}' as run_id, range as item, range * 0.5 as score from range({rows})"
        )
        con.execute("comment on table marts.scores is 'One row per item.'")
        con.execute(
            "create or replace table seeds.systems as select 'naive' as system_id, 'Naive' as name"
        )
    finally:
        con.close()


def runs_table(path: Path, rows: list[tuple[str, str, str]]) -> None:
    con = duckdb.connect(str(path))
    con.execute("create schema raw")
    con.execute(
        "create table raw.runs (run_id varchar, started_at timestamp, finished_at timestamp, "
        "status varchar, message varchar)"
    )
    for run_id, started, status in rows:
        con.execute(
            "insert into raw.runs values (?, ?::timestamp, null, ?, ?)",
            [run_id, started, status, f"{status} because of {run_id}"],
        )
    con.close()
