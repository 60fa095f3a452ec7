"""The Parquet export carries every description: key-value metadata in each file and a
data dictionary (type, description per column) in manifest.json."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq

from tsrate.platform.publish import export_parquet, publish


def test_parquet_files_and_manifest_carry_the_column_descriptions(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    con = duckdb.connect(str(warehouse))
    con.execute("create schema raw; create schema marts; create schema seeds")
    con.execute("create table raw.runs (run_id varchar, study json)")
    con.execute("insert into raw.runs values ('r1', '{}')")
    con.execute("create table marts.scores as select 'r1' as run_id, 1.5 as score")
    con.execute("comment on table marts.scores is 'One row per run; it''s tiny.'")
    con.execute("comment on column marts.scores.score is 'The score, 0-2 scale.'")
    con.execute("create table seeds.systems as select 'naive' as system_id")
    con.execute("comment on column seeds.systems.system_id is 'Primary key.'")
    con.close()
    snapshot = publish(warehouse, "r1").path
    destination = tmp_path / "bi"
    export_parquet(snapshot, destination)
    # read back by pyarrow, independently of DuckDB
    metadata = pq.read_metadata(destination / "marts" / "scores.parquet").metadata
    assert metadata[b"description"].decode() == "One row per run; it's tiny."
    assert json.loads(metadata[b"column_descriptions"]) == {"score": "The score, 0-2 scale."}
    seed = pq.read_metadata(destination / "seeds" / "systems.parquet").metadata
    assert json.loads(seed[b"column_descriptions"]) == {"system_id": "Primary key."}
    manifest = json.loads((destination / "manifest.json").read_text())
    columns = manifest["marts/scores.parquet"]["columns"]
    assert columns["score"] == {"type": "DECIMAL(2,1)", "description": "The score, 0-2 scale."}
    assert columns["run_id"]["description"] is None
