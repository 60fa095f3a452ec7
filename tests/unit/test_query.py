"""``tsrate query`` is read-only: one read statement, on a sealed connection, bounded in rows
and time, never in a writer's way. Real DuckDB files, the real CLI entry point."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.cli import main
from tsrate.platform.locking import WarehouseBusy, writer_lock
from tsrate.platform.publish import publish
from tsrate.platform.query import live_reader, read_statement, run_query

ROWS = 2500

HOSTILE = [
    "copy (select 42) to 'out.csv'",
    "copy marts.scores to 'published/parquet/marts/scores.parquet' (format parquet)",
    "copy marts.scores from '/etc/passwd'",
    "export database 'dump'",
    "attach 'other.duckdb' as other",
    "attach '{warehouse}' as live",
    "select * from read_text('/etc/passwd')",
    "select * from read_csv('/etc/passwd')",
    "select * from read_blob('/etc/passwd')",
    "select * from glob('/etc/*')",
    "select * from '/etc/passwd'",
    "from read_parquet('{parquet}')",
    "select * from query('copy (select 1) to ''q.csv''')",
    "set memory_limit = '1TB'",
    "reset memory_limit",
    "pragma enable_profiling",
    "call pragma_version()",
    "install httpfs",
    "load httpfs",
    "create table marts.evil as select 1 as x",
    "create view marts.evil as select 1 as x",
    "insert into marts.scores values ('x', 1, 1.0)",
    "update marts.scores set score = 0",
    "delete from marts.scores",
    "drop table marts.scores",
    "alter table marts.scores add column y int",
    "checkpoint",
    "begin transaction",
    "use system",
    "detach live",
    "select 1; select 2",
    "select 1; copy (select 1) to 'two.csv'",
    "",
    "   ",
    "-- only a comment",
    "selec 1",
]


def _warehouse(path: Path, rows: int = ROWS) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema raw; create schema marts; create schema seeds")
        con.execute(
            "create table raw.runs (run_id varchar, status varchar, started_at timestamp, "
            "finished_at timestamp, tickers varchar[], systems varchar[], study_start date, "
            "study_end date, study json)"
        )
        con.execute(
            "insert into raw.runs values ('run-a', 'succeeded', now(), now(), ['AAPL'], "
            "['naive'], '2020-01-01', '2020-12-31', ?)",
            [json.dumps({"n": rows})],
        )
        con.execute(
            "create table marts.scores as select 'run-a' as run_id, range as item, "
            f"range * 0.5 as score from range({rows})"
        )
        con.execute("comment on table marts.scores is 'One row per item.'")
        con.execute("create table seeds.systems as select 'naive' as system_id")
    finally:
        con.close()


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (links as their target) with its content hash."""
    tree = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            tree[str(path.relative_to(root))] = "-> " + str(path.readlink())
        elif path.is_file():
            tree[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return tree


@pytest.fixture
def published(tmp_path, monkeypatch):
    warehouse = tmp_path / "tsrate.duckdb"
    _warehouse(warehouse)
    publish(warehouse, "run-a")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    monkeypatch.chdir(tmp_path)
    return warehouse


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tsrate: error: "), lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert "root:" not in captured.out  # nothing of /etc/passwd
    return lines[0]


@pytest.mark.parametrize("live", [False, True], ids=["snapshot", "live"])
def test_every_hostile_statement_is_refused_and_nothing_is_written(published, capsys, live):
    warehouse = published
    root = warehouse.parent
    parquet = root / "published" / "parquet" / "marts" / "scores.parquet"
    flag = ["--live"] if live else []
    assert main(["query", "select count(*) as n from marts.scores", *flag]) == 0  # sane first
    assert str(ROWS) in capsys.readouterr().out
    before = _tree(root)
    for template in HOSTILE:
        sql = template.format(warehouse=warehouse, parquet=parquet)
        assert main(["query", sql, *flag]) == 2, sql
        message = _one_line_error(capsys)
        assert message, sql
        assert _tree(root) == before, f"{sql!r} changed the files"
    assert main(["query", "select count(*) as n from marts.scores", *flag]) == 0
    assert str(ROWS) in capsys.readouterr().out  # the table is intact


def test_the_parser_gate_accepts_reads_and_names_what_it_refuses():
    for sql in (
        "select 1",
        "with a as (select 1 as x) select * from a",
        "from marts.scores",
        "values (1), (2)",
        "describe marts.scores",
        "summarize marts.scores",
        "(select 1) union all (select 2);",
    ):
        assert read_statement(sql)
    with pytest.raises(TsrateError, match="COPY statements are refused"):
        read_statement("copy (select 1) to 'x.csv'")
    with pytest.raises(TsrateError, match="2 statements given"):
        read_statement("select 1; select 2")
    with pytest.raises(TsrateError, match="no SQL statement given"):
        read_statement("")
    with pytest.raises(TsrateError, match="does not parse"):
        read_statement("selec 1")


def test_file_functions_fail_even_inside_a_select(published):
    snapshot = published.parent / "published" / "tsrate.duckdb"
    for sql in (
        "select * from read_text('/etc/passwd')",
        "select count(*) from glob('/etc/*')",
        "select * from read_csv('/etc/hostname')",
    ):
        with pytest.raises(TsrateError, match="disabled by configuration"):
            run_query(snapshot, sql)


def test_output_is_capped_and_says_so(published, capsys):
    assert main(["query", "select item from marts.scores order by item"]) == 0
    out = capsys.readouterr().out
    assert "first 1000 rows shown" in out
    assert " 999\n" in out and "1000\n" not in out.replace("first 1000", "")
    assert main(["query", "select item from marts.scores order by item desc", "--limit", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.strip() for line in out[1:4]] == [str(ROWS - 1), str(ROWS - 2), str(ROWS - 3)]
    assert "first 3 rows shown" in out[4]
    assert main(["query", "select item from marts.scores limit 3", "--limit", "3"]) == 0
    assert "rows shown" not in capsys.readouterr().out  # exactly the limit: not cut
    assert main(["query", "select 1", "--limit", "0"]) == 2
    assert "--limit must be 1 or more" in _one_line_error(capsys)


def test_a_slow_query_is_stopped_at_the_timeout(published, capsys):
    sql = "select sum(a.range * b.range) from range(200000000) a, range(1000) b"
    assert main(["query", sql, "--timeout", "0.5"]) == 2
    assert "stopped after 0.5 s" in _one_line_error(capsys)


def test_live_refuses_while_a_writer_holds_the_lock_and_blocks_writers_while_reading(
    published, capsys
):
    warehouse = published
    with writer_lock(warehouse):
        assert main(["query", "select count(*) from raw.runs", "--live"]) == 2
        assert "is being written by" in _one_line_error(capsys)
        assert main(["runs"]) == 0  # the published runs instead, the writer on stderr
        out, err = capsys.readouterr()
        assert "run-a" in out and "published" in out and "a writer holds" in err
        assert main(["query", "select count(*) from marts.scores"]) == 0  # the snapshot: fine
        capsys.readouterr()
    with live_reader(warehouse):  # a --live query in progress
        with pytest.raises(WarehouseBusy):
            with writer_lock(warehouse):  # a run starting now fails before it opens DuckDB
                pass
    with writer_lock(warehouse):  # released after the query
        pass
    assert main(["runs"]) == 0
    assert "run-a" in capsys.readouterr().out


def test_empty_missing_and_corrupt_files_are_one_line_errors(
    published, tmp_path, capsys, monkeypatch
):
    assert main(["query", ""]) == 2
    assert "no SQL statement given" in _one_line_error(capsys)
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"this is not a database\n" * 500)
    monkeypatch.setenv("TSRATE_PUBLISHED", str(junk))
    assert main(["query", "select 1"]) == 2
    assert "cannot be opened as a DuckDB database" in _one_line_error(capsys)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(junk))
    assert main(["query", "select 1", "--live"]) == 2
    assert "cannot be opened as a DuckDB database" in _one_line_error(capsys)
    assert main(["runs"]) == 2
    assert "cannot be opened as a DuckDB database" in _one_line_error(capsys)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "absent" / "tsrate.duckdb"))
    assert main(["runs"]) == 2
    assert "no warehouse at" in _one_line_error(capsys)
