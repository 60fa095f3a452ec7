"""The report end to end, its documentation: the documented arq queries run on the
snapshot, the marts' descriptions and the core models' and seeds' column comments travel
into it, the docs site documents the marts and the report exposure, and a report without a
snapshot fails clearly and writes nothing.

The study (tests/integration/report_study.py) runs the naive, random and biased systems on
four companies, relabelled in a copy of the project's systems seed so that every section has
something to show; the dbt build and the report are the real ones, built once per test
process.
"""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from tests.integration.report_study import built_report
from tsrate import cli
from tsrate.config import project_dir

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reported(tmp_path_factory, session_parse):
    return built_report(tmp_path_factory, session_parse)


def test_documented_arq_queries_run_on_the_snapshot(reported):
    readme = (project_dir() / "docs" / "ratings.md").read_text()
    blocks = [b for b in re.findall(r"```sql\n(.*?)```", readme, flags=re.S) if "ARQ" in b]
    statements = [
        s.strip()
        for block in blocks
        for s in re.sub(r"--[^\n]*", "", block).split(";")
        if s.strip()
    ]
    assert len(statements) >= 4
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        for statement in statements:
            assert len(con.execute(statement).df()) > 0, statement
    finally:
        con.close()


def test_marts_carry_their_descriptions_into_the_snapshot(reported):
    """persist_docs: BI tools read the YAML descriptions as DuckDB comments."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        table = con.execute(
            "select comment from duckdb_tables() where schema_name = 'marts' "
            "and table_name = 'group_comparisons'"
        ).fetchone()[0]
        columns = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() where schema_name = 'marts' "
                "and table_name = 'modality_pairs'"
            ).fetchall()
        )
    finally:
        con.close()
    assert table.startswith("ARQ1-ARQ3 of the paper") and "One row per run" in table
    assert columns["better_variant"].startswith("'numeric', 'numeric+image' or 'tie'")


def test_every_documented_column_of_the_core_models_carries_its_comment(reported):
    """persist_docs writes each YAML column description as a DuckDB comment on every core
    staging view, intermediate view and mart of the live warehouse (tsrate overrides
    dbt-duckdb's column-comment macro to skip a second catalog query: nothing may be lost)."""
    import yaml

    expected = {}
    for folder in ("staging", "intermediate", "marts"):
        for path in (project_dir() / "models" / folder).glob("*.yml"):
            for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
                for column in model.get("columns", []):
                    if column.get("description"):
                        expected[(folder, model["name"], column["name"])] = " ".join(
                            column["description"].split()
                        )
    assert len(expected) > 300
    con = duckdb.connect(str(reported["warehouse"]), read_only=True)
    try:
        stored = {
            (schema, table, column): " ".join((comment or "").split())
            for schema, table, column, comment in con.execute(
                "select schema_name, table_name, column_name, comment from duckdb_columns() "
                "where schema_name in ('staging', 'intermediate', 'marts')"
            ).fetchall()
        }
    finally:
        con.close()
    built = {(schema, table) for schema, table, _ in stored}
    present = {key: text for key, text in expected.items() if key[:2] in built}
    assert len({key[:2] for key in present}) >= 20, "the report's marts and their parents"
    absent = sorted(key for key in present if key not in stored)
    assert not absent, f"documented columns missing from built models: {absent[:5]}"
    missing = {key: text for key, text in present.items() if stored[key] != text}
    assert not missing, list(missing.items())[:5]


def test_docs_site_documents_the_marts_and_the_report_exposure(reported, monkeypatch):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(reported["project"]))
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(reported["warehouse"]))
    site = reported["root"] / "docs"
    assert cli.main(["docs", "--output", str(site)]) == 0
    assert (site / "static_index.html").stat().st_size > 100_000
    manifest = json.loads((site / "manifest.json").read_text())
    exposure = manifest["exposures"]["exposure.tsrate.rating_report"]
    assert {"model.tsrate.group_comparisons", "model.tsrate.modality_pairs"} <= set(
        exposure["depends_on"]["nodes"]
    )
    catalog = json.loads((site / "catalog.json").read_text())
    columns = catalog["nodes"]["model.tsrate.group_comparisons"]["columns"]
    assert columns["avg_raw_score"]["type"].upper() == "DOUBLE"


def test_report_without_a_snapshot_fails_clearly_and_writes_nothing(tmp_path, capsys):
    output = tmp_path / "report.html"
    missing = tmp_path / "published" / "tsrate.duckdb"
    code = cli.main(["report", "--snapshot", str(missing), "--output", str(output)])
    assert code == 2
    assert f"no published snapshot at {missing}" in capsys.readouterr().err
    assert not output.exists()


def test_seeds_carry_their_yaml_descriptions_as_comments(reported):
    """persist_docs on seeds: every documented seed column is commented, live and published."""
    import yaml

    expected = {}
    for path in (project_dir() / "seeds").glob("*.yml"):
        for seed in (yaml.safe_load(path.read_text()) or {}).get("seeds", []):
            for column in seed.get("columns", []):
                if column.get("description"):
                    expected[(seed["name"], column["name"])] = " ".join(
                        column["description"].split()
                    )
    assert expected
    for database in (reported["warehouse"], reported["snapshot"]):
        con = duckdb.connect(str(database), read_only=True)
        try:
            stored = {
                (table, column): " ".join((comment or "").split())
                for table, column, comment in con.execute(
                    "select table_name, column_name, comment from duckdb_columns() "
                    "where schema_name = 'seeds'"
                ).fetchall()
            }
        finally:
            con.close()
        present = {key: text for key, text in expected.items() if key in stored}
        assert {"systems", "perturbations", "companies"} <= {table for table, _ in present}
        assert {key: stored[key] for key in present} == present, database
