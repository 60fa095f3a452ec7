"""The SQL the docs hand a BI user, run as written on what tsrate writes. The Parquet
metadata query of docs/operations.md printed DuckDB's BLOBs (`{\\x22item\\x22: ...`); it
decodes them, so the descriptions read as text and the column descriptions as JSON."""

from __future__ import annotations

import json
import re

import duckdb

from tests.support.publish_warehouse import tiny_warehouse
from tsrate.config import project_dir
from tsrate.platform.publish import parquet_path, publish


def _documented_metadata_query() -> str:
    text = (project_dir() / "docs" / "operations.md").read_text()
    found = re.findall(r"`(select [^`]*parquet_kv_metadata\('x\.parquet'\)[^`]*)`", text)
    assert len(found) == 1, found
    return found[0]


def test_the_documented_parquet_metadata_query_reads_as_text(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-1")
    result = publish(warehouse, "run-1")
    scores = parquet_path(result.path) / "marts" / "scores.parquet"
    sql = _documented_metadata_query().replace("x.parquet", str(scores))
    con = duckdb.connect()
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    assert rows and all(isinstance(value, str) for row in rows for value in row[:2]), rows
    metadata = {row[0]: row[1] for row in rows}
    assert metadata["description"] == "One row per item."
    assert json.loads(metadata["column_descriptions"])["item"] == "The item number."


def test_documented_sql_on_the_live_layers_says_to_read_the_live_warehouse():
    """`tsrate query` reads the published snapshot (marts, seeds): a documented statement on
    raw, staging or intermediate fails there ("schema staging does not exist"), so the text
    just before it must say --live (docs/systems.md's sentiment query did not)."""
    docs = project_dir() / "docs"
    pages = sorted(p for p in docs.glob("*.md"))
    missing = []
    for page in pages:
        text = page.read_text()
        for match in re.finditer(r"```sql\n(.*?)```", text, flags=re.S):
            if not re.search(r"\bfrom\s+(raw|staging|intermediate)\.", match.group(1)):
                continue
            before = text[max(0, match.start() - 400) : match.start()]
            if "--live" not in before:
                missing.append(f"{page.name}: {match.group(1).strip()[:60]}")
    assert not missing, missing
