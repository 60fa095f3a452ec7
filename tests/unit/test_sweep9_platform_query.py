"""``tsrate query``'s module (tsrate.platform.query) on real temporary DuckDB files, where the
older tests went through the parser gate or the CLI: the sealed connection itself (read-only,
each documented setting, SET refused), the Python API's defaults against the CLI's and
docs/bi.md's (1,000 rows, 60 s), the edges of --limit and --timeout, the refusal naming the
statement's kind exactly, and the output formats on NULLs, quoting and the row-limit note.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json).
"""

from __future__ import annotations

import csv
import inspect
import io
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.cli import build_parser
from tsrate.platform.query import (
    QueryResult,
    format_result,
    open_sealed,
    query,
    read_statement,
    run_query,
)


@pytest.fixture
def snapshot(tmp_path) -> Path:
    path = tmp_path / "published" / "tsrate.duckdb"
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema marts")
        con.execute("create table marts.big as select range as i from range(2500)")
        con.execute(
            "create table marts.t as select * from (values (1, 'a, \"b\"', 1.5), "
            "(2, null, null)) v(id, name, score)"
        )
    finally:
        con.close()
    return path


def setting(con: duckdb.DuckDBPyConnection, name: str):
    return con.execute("select current_setting(?)", [name]).fetchone()[0]


def test_the_sealed_connection_is_read_only_with_every_documented_setting(snapshot):
    con = open_sealed(snapshot)
    try:
        assert setting(con, "enable_external_access") is False
        assert setting(con, "autoinstall_known_extensions") is False
        assert setting(con, "autoload_known_extensions") is False
        assert setting(con, "allow_community_extensions") is False
        assert setting(con, "allow_persistent_secrets") is False
        assert setting(con, "lock_configuration") is True
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("create table marts.evil as select 1 as x")
        limit = setting(con, "memory_limit")
        with pytest.raises(duckdb.Error, match="lock"):  # the configuration is locked
            con.execute("set memory_limit = '1TB'")
        assert setting(con, "memory_limit") == limit
    finally:
        con.close()


def test_the_python_api_defaults_are_the_clis_and_the_docs():
    """docs/bi.md: at most 1,000 rows, interrupted after 60 s; the CLI's defaults agree."""
    args = build_parser().parse_args(["query", "select 1"])
    assert (args.limit, args.timeout) == (1000, 60.0)
    for function in (run_query, query):
        parameters = inspect.signature(function).parameters
        assert parameters["limit"].default == 1000
        assert parameters["timeout"].default == 60.0


def test_run_query_without_a_limit_returns_the_first_thousand_rows(snapshot):
    result = run_query(snapshot, "select i from marts.big order by i")
    assert len(result.frame) == 1000 and result.truncated and result.limit == 1000
    assert result.frame["i"].tolist() == list(range(1000))


def test_a_limit_of_one_and_timeouts_at_their_bounds(snapshot):
    result = run_query(snapshot, "select i from marts.big order by i", limit=1)
    assert result.frame["i"].tolist() == [0] and result.truncated
    exact = run_query(snapshot, "select i from marts.big where i < 2 order by i", limit=2)
    assert exact.frame["i"].tolist() == [0, 1] and not exact.truncated
    for limit in (0, -1):
        with pytest.raises(TsrateError, match="--limit must be 1 or more"):
            run_query(snapshot, "select 1", limit=limit)
    for timeout in (0, -1.0):
        with pytest.raises(TsrateError, match="--timeout must be more than 0 seconds"):
            run_query(snapshot, "select 1", timeout=timeout)
    assert run_query(snapshot, "select 42 as x", timeout=None).frame["x"].tolist() == [42]
    assert run_query(snapshot, "select 43 as x", timeout=0.001 + 30).frame["x"].tolist() == [43]


def test_a_refusal_names_the_statement_kind_alone():
    for sql, kind in (
        ("copy (select 1) to 'x.csv'", "COPY"),
        ("insert into t values (1)", "INSERT"),
        ("attach 'a.duckdb' as a", "ATTACH"),
    ):
        with pytest.raises(TsrateError) as error:
            read_statement(sql)
        assert str(error.value).startswith(f"{kind} statements are refused; tsrate query runs")


def result_of(frame: pd.DataFrame, truncated: bool = False, limit: int = 2) -> QueryResult:
    return QueryResult(frame, truncated, limit, Path("snapshot.duckdb"))


def test_csv_quotes_and_leaves_null_empty(snapshot):
    result = run_query(snapshot, "select * from marts.t order by id")
    text = format_result(result, "csv")
    assert text == 'id,name,score\n1,"a, ""b""",1.5\n2,,'
    assert list(csv.reader(io.StringIO(text))) == [
        ["id", "name", "score"],
        ["1", 'a, "b"', "1.5"],
        ["2", "", ""],
    ]


def test_json_has_null_and_no_note(snapshot):
    result = run_query(snapshot, "select * from marts.t order by id", limit=1)
    assert result.truncated
    text = format_result(result, "json")
    assert json.loads(text) == [{"id": 1, "name": 'a, "b"', "score": 1.5}]
    assert "rows shown" not in text


def test_the_table_format_with_nulls_the_note_and_no_rows():
    frame = pd.DataFrame({"id": [1, 2], "name": ["a", None], "score": [1.5, float("nan")]})
    text = format_result(result_of(frame, truncated=True, limit=2), "table")
    lines = text.splitlines()
    assert lines[0].split() == ["id", "name", "score"]
    assert lines[1].split() == ["1", "a", "1.5"]
    assert lines[2].split() == ["2"]
    assert lines[3].startswith("(first 2 rows shown; the result has more")
    assert len(lines) == 4
    assert format_result(result_of(frame), "table").count("\n") == 2  # no note
    empty = pd.DataFrame({"id": pd.Series([], dtype="int64"), "name": []})
    assert format_result(result_of(empty), "table") == "(no rows; columns: id, name)"
    with pytest.raises(TsrateError, match="unknown format 'xml'"):
        format_result(result_of(frame), "xml")


def test_the_table_format_shows_every_column_on_one_line():
    """A wide result is printed whole: every column, one line per row (no '...')."""
    frame = pd.DataFrame({f"column_{i:03d}": [i] for i in range(120)})
    lines = format_result(result_of(frame), "table").splitlines()
    assert len(lines) == 2 and "..." not in "".join(lines)
    assert lines[0].split() == [f"column_{i:03d}" for i in range(120)]
    assert lines[1].split() == [str(i) for i in range(120)]


def test_query_reads_the_published_snapshot_unless_asked_for_live(snapshot, monkeypatch):
    """Beside ``published/``: the live warehouse path, which does not exist here."""
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = snapshot.parent.parent / "tsrate.duckdb"
    result = query("select count(*) as n from marts.big", warehouse=warehouse)
    assert result.frame["n"].tolist() == [2500] and result.source == snapshot
    with pytest.raises(TsrateError, match="no warehouse at"):
        query("select 1", live=True, warehouse=warehouse)


def test_json_keeps_non_ascii_text_as_it_is():
    frame = pd.DataFrame({"ticker": ["NESN"], "name": ["Nestlé"]})
    text = format_result(result_of(frame), "json")
    assert text == '[{"ticker":"NESN","name":"Nestlé"}]'
