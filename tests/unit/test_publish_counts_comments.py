"""Publishing (tsrate.platform.publish) on real temporary DuckDB files: the row counts it
records come from the copies themselves (the snapshot's tables, published_runs' JSON and the
Parquet manifest agree with the rows really there), every table's and column's description
reaches the snapshot and the Parquet manifest for several tables at once (one catalog query
serves them all), and a publish that fails half-way through the copies leaves no snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tsrate.platform.publish import publish


def warehouse(path: Path, run_id: str) -> None:
    """raw.runs, three marts of different sizes with their own descriptions, a view, a seed."""
    con = duckdb.connect(str(path))
    try:
        for schema in ("raw", "marts", "seeds"):
            con.execute(f"create schema {schema}")
        con.execute("create table raw.runs (run_id varchar, study json)")
        con.execute("insert into raw.runs values (?, '{}')", [run_id])
        for name, rows in (("alpha", 5), ("beta", 0), ("gamma", 1234)):
            con.execute(
                f"create table marts.{name} as select range as item, range * 2 as doubled "
                f"from range({rows})"
            )
            con.execute(f"comment on table marts.{name} is 'The {name} table.'")
            con.execute(f"comment on column marts.{name}.item is 'Item of {name}.'")
        con.execute("comment on column marts.gamma.doubled is 'Twice gamma''s item.'")
        con.execute("create view marts.odd as select * from marts.gamma where item % 2 = 1")
        con.execute("comment on column marts.odd.item is 'An odd item.'")
        con.execute("create table seeds.systems as select 'naive' as system_id")
    finally:
        con.close()


def test_recorded_row_counts_are_the_rows_copied(tmp_path):
    warehouse(tmp_path / "live.duckdb", "r1")
    result = publish(tmp_path / "live.duckdb", "r1", target=tmp_path / "pub" / "tsrate.duckdb")
    expected = {
        "marts.alpha": 5,
        "marts.beta": 0,
        "marts.gamma": 1234,
        "marts.odd": 617,
        "seeds.systems": 1,
    }
    assert result.row_counts == expected
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        for qualified, rows in expected.items():
            assert con.execute(f"select count(*) from {qualified}").fetchone()[0] == rows
        recorded = con.execute("select row_counts from published_runs").fetchone()[0]
    finally:
        con.close()
    assert json.loads(recorded) == expected
    manifest = json.loads((result.parquet_path / "manifest.json").read_text())
    for qualified, rows in expected.items():
        entry = manifest[qualified.replace(".", "/") + ".parquet"]
        assert entry["rows"] == rows
        path = result.parquet_path / (qualified.replace(".", "/") + ".parquet")
        with duckdb.connect() as reader:
            assert reader.execute(f"select count(*) from '{path}'").fetchone()[0] == rows
    assert manifest["published_runs.parquet"]["rows"] == 1


def test_every_tables_descriptions_reach_the_snapshot_and_the_manifest(tmp_path):
    warehouse(tmp_path / "live.duckdb", "r1")
    result = publish(tmp_path / "live.duckdb", "r1", target=tmp_path / "pub" / "tsrate.duckdb")
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        described = con.execute(
            "select schema_name || '.' || table_name, column_name, comment from duckdb_columns() "
            "where comment is not null and table_name <> 'published_runs' order by all"
        ).fetchall()
        tables = dict(
            con.execute(
                "select table_name, comment from duckdb_tables() where schema_name = 'marts'"
            ).fetchall()
        )
    finally:
        con.close()
    assert described == [
        ("marts.alpha", "item", "Item of alpha."),
        ("marts.beta", "item", "Item of beta."),
        ("marts.gamma", "doubled", "Twice gamma's item."),
        ("marts.gamma", "item", "Item of gamma."),
        ("marts.odd", "item", "An odd item."),
    ]
    assert tables == {name: f"The {name} table." for name in ("alpha", "beta", "gamma")} | {
        "odd": None
    }
    manifest = json.loads((result.parquet_path / "manifest.json").read_text())
    assert manifest["marts/gamma.parquet"]["columns"] == {
        "item": {"type": "BIGINT", "description": "Item of gamma."},
        "doubled": {"type": "BIGINT", "description": "Twice gamma's item."},
    }
    assert manifest["marts/beta.parquet"]["columns"] == {
        "item": {"type": "BIGINT", "description": "Item of beta."},
        "doubled": {"type": "BIGINT", "description": None},
    }
    assert manifest["seeds/systems.parquet"]["columns"] == {
        "system_id": {"type": "VARCHAR", "description": None}
    }


def test_a_copy_failing_half_way_leaves_the_previous_snapshot(tmp_path):
    """A failure after some tables were copied (into the new file's one transaction) leaves
    no new file and the previous publication as it was."""
    live = tmp_path / "live.duckdb"
    target = tmp_path / "pub" / "tsrate.duckdb"
    warehouse(live, "r1")
    publish(live, "r1", target=target)
    con = duckdb.connect(str(live))
    try:  # gamma (copied after alpha and beta) now fails when read
        con.execute("drop view marts.odd")
        con.execute("drop table marts.gamma")
        con.execute("create view marts.gamma as select cast('not a number' as integer) as item")
        con.execute("insert into raw.runs values ('r2', '{}')")
    finally:
        con.close()
    with pytest.raises(duckdb.ConversionException):
        publish(live, "r2", target=target)
    assert sorted(p.name for p in target.parent.iterdir()) == [
        "parquet",
        "parquet-runs",
        "tsrate.duckdb",
    ]
    con = duckdb.connect(str(target), read_only=True)
    try:
        assert con.execute("select run_id from published_runs").fetchall() == [("r1",)]
        assert con.execute("select count(*) from marts.gamma").fetchone()[0] == 1234
    finally:
        con.close()
