"""The published snapshot describes every column a BI tool shows, `published_runs`' too (it
had a table comment only): DuckDB column comments, as the marts' columns have."""

from __future__ import annotations

import duckdb

from tests.support.publish_warehouse import tiny_warehouse
from tsrate.platform.publish import publish


def test_every_column_of_published_runs_has_a_comment(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-1")
    result = publish(warehouse, "run-1", parquet=False)
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        comments = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() "
                "where table_name = 'published_runs'"
            ).fetchall()
        )
    finally:
        con.close()
    assert set(comments) == {
        "run_id", "published_at", "study", "row_counts", "parquet_path", "systems",
        "study_id", "study_name", "systems_rated", "withdrawn",
    }  # fmt: skip
    assert all(text for text in comments.values()), comments
    assert "UTC" in comments["published_at"]
