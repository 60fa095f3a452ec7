"""The snapshot as a BI analyst reads it, on the report's real study (built with dbt and
published once per test process, tests/integration/report_study.py): no table, view or
column comment ends with whitespace (YAML block scalars end with a newline, which a query
tool printed as a literal ``\\n``), in the live warehouse or the snapshot; ``published_runs``
names the study as ``tsrate studies`` lists it; and docs/ratings.md's "at a glance" query
names no better group where only one group is rated."""

from __future__ import annotations

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


COMMENTS = """
    select 'table ' || schema_name || '.' || table_name, comment from duckdb_tables()
    where schema_name in ('marts', 'seeds') and database_name = current_database()
    union all
    select 'view ' || schema_name || '.' || view_name, comment from duckdb_views()
    where schema_name in ('marts', 'seeds') and database_name = current_database()
    union all
    select 'column ' || schema_name || '.' || table_name || '.' || column_name, comment
    from duckdb_columns()
    where schema_name in ('marts', 'seeds') and database_name = current_database()
"""


@pytest.mark.parametrize("which", ["warehouse", "snapshot"])
def test_no_comment_ends_with_whitespace(reported, which):
    with duckdb.connect(str(reported[which]), read_only=True) as con:
        comments = [(name, text) for name, text in con.execute(COMMENTS).fetchall() if text]
    tables = [name for name, _ in comments if not name.startswith("column ")]
    assert len(tables) >= 10 and len(comments) >= 100  # the descriptions are there
    assert [name for name, text in comments if text != text.rstrip()] == []


def test_published_runs_names_the_study_as_tsrate_studies_shows_it(reported, monkeypatch, capsys):
    with duckdb.connect(str(reported["snapshot"]), read_only=True) as con:
        study_id, study_name = con.execute(
            "select study_id, study_name from published_runs where run_id = ?",
            [reported["run_id"]],
        ).fetchone()
        rated = con.execute("select distinct study_id from marts.ratings").fetchall()
    assert rated == [(study_id,)]
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(reported["warehouse"]))
    capsys.readouterr()
    assert cli.main(["studies"]) == 0
    listing = capsys.readouterr().out
    # a listing line starts with the study's name and id
    assert re.search(rf"^{re.escape(study_name)}  {study_id} ", listing, flags=re.M), listing


def test_the_at_a_glance_query_names_no_better_group_among_one(reported):
    text = (project_dir() / "docs" / "ratings.md").read_text()
    block = re.search(r"-- ARQ1-ARQ3 at a glance.*?;", text, flags=re.S).group(0)
    with duckdb.connect(str(reported["snapshot"]), read_only=True) as con:
        rows = con.execute(re.sub(r"--[^\n]*", "", block)).df()
    assert (rows["n_groups"] == 1).any() and (rows["n_groups"] > 1).any()
    lone = rows[rows["n_groups"] == 1]
    assert lone["better_group"].isna().all(), lone
    assert rows.loc[rows["n_groups"] > 1, "better_group"].notna().all()
