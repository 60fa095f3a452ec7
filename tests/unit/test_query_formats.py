"""`tsrate query --format table|csv|json`: NULL empty or null. (Quiet on a closed pipe:
tests/integration/test_cli_entry_point.py.)"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pytest

from tests.support.query_snapshot import published_marts, run_query
from tsrate import cli
from tsrate.platform.publish import published_path


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    live = tmp_path / "warehouse" / "tsrate.duckdb"
    published_marts(
        live,
        "create table marts.t as select * from (values (1, 'a', 1.5, date '2022-01-03'), "
        "(2, null, null, null)) v(id, name, score, day)",
        "create table marts.big as select range as i from range(200000)",
    )
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(live))
    return live


def test_table_shows_null_as_empty(warehouse, capsys):
    code, out, _ = run_query(capsys, "from marts.t order by id")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "name", "score", "day"]
    assert lines[2].split() == ["2"]  # every NULL blank: no NaN, <NA>, None or NaT
    for token in ("NaN", "<NA>", "None", "NaT"):
        assert token not in out


def test_csv_reads_back_with_null_empty(warehouse, capsys):
    code, out, err = run_query(capsys, "from marts.t order by id", "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows == [
        {"id": "1", "name": "a", "score": "1.5", "day": "2022-01-03"},
        {"id": "2", "name": "", "score": "", "day": ""},
    ]


def test_json_is_an_array_with_null(warehouse, capsys):
    code, out, _ = run_query(capsys, "from marts.t order by id", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert rows[1] == {"id": 2, "name": None, "score": None, "day": None}
    assert rows[0]["day"].startswith("2022-01-03")


def test_csv_keeps_the_row_limit_note_off_stdout(warehouse, capsys):
    code, out, err = run_query(capsys, "from marts.big", "--format", "csv", "--limit", "5")
    assert code == 0
    assert out.splitlines() == ["i", "0", "1", "2", "3", "4"]
    assert "first 5 rows shown" in err


def test_every_writing_command_takes_a_lock_timeout():
    parser = cli.build_parser()
    for command in (
        ["ingest"],
        ["import", "x.csv", "--system", "s"],
        ["import-predictions", "x.csv", "--manifest", "m.json", "--system", "s"],
        ["build"],
    ):
        args = parser.parse_args([*command, "--lock-timeout", "7"])
        assert args.lock_timeout == 7.0, command


@pytest.fixture
def nested_dates(warehouse) -> Path:
    con = duckdb.connect(str(published_path(warehouse)))
    con.execute(
        "create table marts.nested as select 1 as id, "
        "[date '2022-01-03', null, date '2022-01-04'] as days, "
        "{'first': date '2022-01-05', 'n': 2} as span, "
        "[[date '2022-01-06']] as weeks, "
        "['a', 'b'] as names"
    )
    con.close()
    return warehouse


def test_dates_inside_lists_and_structs_print_as_dates_in_every_format(nested_dates, capsys):
    # a DATE[] column reached the csv as midnight timestamps (2022-01-03T00:00:00)
    code, out, err = run_query(capsys, "from marts.nested", "--format", "csv")
    assert code == 0 and err == ""
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert json.loads(row["days"]) == ["2022-01-03", None, "2022-01-04"]
    assert json.loads(row["span"]) == {"first": "2022-01-05", "n": 2}
    assert json.loads(row["weeks"]) == [["2022-01-06"]]
    assert json.loads(row["names"]) == ["a", "b"]

    code, out, _ = run_query(capsys, "from marts.nested", "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["days"] == ["2022-01-03", None, "2022-01-04"]
    assert row["span"] == {"first": "2022-01-05", "n": 2}
    assert row["weeks"] == [["2022-01-06"]]

    code, out, _ = run_query(capsys, "from marts.nested")
    assert code == 0
    assert '["2022-01-03", null, "2022-01-04"]' in out
    assert '{"first": "2022-01-05", "n": 2}' in out
    assert "T00:00" not in out


def test_a_map_with_date_keys_prints_in_every_format(warehouse, capsys):
    # table and csv failed on it: "keys must be str, int, float, bool or None, not date"
    con = duckdb.connect(str(published_path(warehouse)))
    con.execute("create table marts.by_day as select map {date '2022-01-03': 2} as counts")
    con.close()
    for fmt in ("table", "csv", "json"):
        code, out, err = run_query(capsys, "from marts.by_day", "--format", fmt)
        assert code == 0 and err == "", (fmt, err)
        assert '"2022-01-03"' in out and "T00:00" not in out, fmt
    assert json.loads(out) == [{"counts": {"2022-01-03": 2}}]
