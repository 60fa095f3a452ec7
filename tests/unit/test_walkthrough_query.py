"""`tsrate query` as a SQL analyst meets it: a DATE column reads as a day in every format,
and a mistyped table or column keeps DuckDB's own suggestion and says where to look."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pytest

from tests.support.query_snapshot import published_marts, run_query


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    live = tmp_path / "warehouse" / "tsrate.duckdb"
    live.parent.mkdir()
    con = duckdb.connect(str(live))
    con.execute("create schema raw")
    con.execute("create table raw.prices as select 'AAPL' as ticker, 1.5 as close")
    con.close()
    published_marts(
        live,
        "create table marts.ratings as select * from (values "
        "('naive', date '2022-01-03', timestamp '2022-01-03 10:30:00', 2), "
        "('random', null, null, 3)) v(system_id, window_end_date, published_at, rating)",
    )
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(live))
    return live


SQL = "select system_id, window_end_date, published_at from marts.ratings order by system_id"


def test_a_date_is_a_day_in_the_table(warehouse, capsys):
    code, out, _ = run_query(capsys, SQL)
    assert code == 0
    assert out.splitlines()[1].split() == ["naive", "2022-01-03", "2022-01-03", "10:30:00"]
    assert "2022-01-03 00:00:00" not in out


def test_a_date_is_a_day_in_json_and_csv(warehouse, capsys):
    code, out, _ = run_query(capsys, SQL, "--format", "json")
    assert code == 0
    assert json.loads(out) == [
        {
            "system_id": "naive",
            "window_end_date": "2022-01-03",
            "published_at": "2022-01-03T10:30:00.000",
        },
        {"system_id": "random", "window_end_date": None, "published_at": None},
    ]
    code, out, _ = run_query(capsys, SQL, "--format", "csv")
    assert code == 0
    assert next(csv.DictReader(io.StringIO(out)))["window_end_date"] == "2022-01-03"


def test_a_table_without_its_schema_keeps_duckdbs_suggestion(warehouse, capsys):
    code, _, err = run_query(capsys, "from ratings")
    assert code == 2
    assert len(err.splitlines()) == 1
    assert 'Did you mean "marts.ratings"?' in err
    assert "select schema_name, table_name from duckdb_tables()" in err  # how to list them


def test_a_mistyped_column_keeps_the_candidates(warehouse, capsys):
    code, _, err = run_query(capsys, "select ratingg from marts.ratings")
    assert code == 2
    assert len(err.splitlines()) == 1
    assert 'Candidate bindings: "rating"' in err


def test_a_live_only_schema_on_the_snapshot_says_add_live(warehouse, capsys):
    code, _, err = run_query(capsys, "select * from raw.prices")
    assert code == 2
    assert "add --live" in err
    code, out, _ = run_query(capsys, "select * from raw.prices", "--live")
    assert code == 0 and "AAPL" in out


def test_a_snapshot_only_table_asked_with_live_says_drop_live(warehouse, capsys):
    """published_runs lives in the snapshot only: --live gets DuckDB's error and the reverse
    of the live-only hint, on one line; the same query without --live answers."""
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    con = duckdb.connect(str(snapshot))
    con.execute("create table published_runs as select 'run-a' as run_id, 'default' as study")
    con.close()
    for sql in ("select * from published_runs", 'from main."Published_Runs"'):
        code, _, err = run_query(capsys, sql, "--live")
        assert code == 2 and len(err.splitlines()) == 1, err
        assert "(hint: published_runs is in the published snapshot only" in err
        assert err.rstrip().endswith("drop --live)")
    code, out, _ = run_query(capsys, "select * from published_runs")
    assert code == 0 and "run-a" in out
    # another missing table of the live file keeps the listing hint, not this one
    code, _, err = run_query(capsys, "from published_run", "--live")
    assert code == 2 and "drop --live" not in err and "duckdb_tables()" in err


def test_an_unknown_table_in_the_live_file_lists_with_live(warehouse, capsys):
    code, _, err = run_query(capsys, "from raw.pricez", "--live")
    assert code == 2
    assert 'Did you mean "prices"?' in err or 'Did you mean "raw.prices"?' in err
    assert err.rstrip().endswith('order by all" --live)')


SUMS = (
    "select sum(rating) as total, sum(case when rating > 9 then rating end) as none_above, "
    "sum(rating * 0.5) as halves, (2::hugeint ** 100)::hugeint as beyond_64_bits from marts.ratings"
)


def test_a_sum_of_integers_is_a_whole_number_in_every_format(warehouse, capsys):
    """DuckDB sums integers as HUGEINT, which pandas receives as float64 (5.0): shown as 5 in
    the table, csv and json; a NULL sum stays empty/null, a decimal sum stays a decimal, and a
    value beyond 64 bits is left as DuckDB gave it."""
    code, out, _ = run_query(capsys, SUMS, "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["total"] == 5 and isinstance(row["total"], int)
    assert row["none_above"] is None
    assert row["halves"] == 2.5
    assert row["beyond_64_bits"] == pytest.approx(2.0**100)
    code, out, _ = run_query(capsys, SUMS, "--format", "csv")
    assert list(csv.reader(io.StringIO(out)))[1][:3] == ["5", "", "2.5"]
    code, out, _ = run_query(capsys, SUMS)
    assert out.splitlines()[1].split()[0] == "5"


def test_whole_numbers_up_to_64_bits_only(warehouse, capsys):
    """2^62 fits 64 bits: a whole number; 2^63 does not (Int64 tops out at 2^63 - 1), so a
    column holding it, even beside 2^62, is left as DuckDB gave it (a float), not cut."""
    fits = "select (2::hugeint ** 62)::hugeint as n"
    code, out, _ = run_query(capsys, fits, "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 2**62}]
    both = "select (2::hugeint ** e)::hugeint as n from (values (62), (63)) v(e) order by e"
    code, out, err = run_query(capsys, both, "--format", "json")
    assert code == 0, err
    assert [row["n"] for row in json.loads(out)] == pytest.approx([2.0**62, 2.0**63], rel=1e-14)
    assert all(isinstance(row["n"], float) for row in json.loads(out))


def test_json_keeps_fifteen_significant_digits(warehouse, capsys):
    """pandas writes JSON numbers to 10 significant digits unless told: a MASE of
    0.123456789012345 came out as 0.123456789."""
    code, out, _ = run_query(capsys, "select 0.123456789012345::double as mase", "--format", "json")
    assert code == 0
    assert json.loads(out)[0]["mase"] == pytest.approx(0.123456789012345, rel=1e-14)


def test_sql_that_does_not_parse_says_what_tsrate_query_takes(warehouse, capsys):
    code, _, err = run_query(capsys, "selec system_id from marts.ratings")
    assert code == 2 and len(err.splitlines()) == 1
    assert "does not parse" in err and 'syntax error at or near "selec"' in err
    assert "(hint: " in err and "one read-only statement" in err


def test_reading_a_file_is_refused_with_the_way_to_read_files(warehouse, capsys, tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_text("ticker,close\nAAPL,1.5\n")
    code, _, err = run_query(capsys, f"select * from read_csv('{prices}')")
    assert code == 2 and len(err.splitlines()) == 1
    assert "file system operations are disabled" in err
    assert "(hint: " in err and "tsrate export DIR" in err


def test_a_negative_timeout_says_that_0_means_no_limit(warehouse, capsys):
    code, _, err = run_query(capsys, "select 1", "--timeout", "-1")
    assert code == 2 and len(err.splitlines()) == 1
    assert "0: no limit" in err
    code, out, _ = run_query(capsys, "select 1 as one", "--timeout", "0")
    assert code == 0 and "1" in out


def test_a_list_or_struct_column_is_json_in_csv(warehouse, capsys):
    """A list column (raw.runs' tickers, or any `list(...)` an analyst aggregates) came out
    of --format csv as numpy's repr, ['AAPL' 'MSFT'], with no commas: nothing reads it back."""
    sql = (
        "select ['AAPL', 'MSFT'] as tickers, {'a': 1, 'b': [1, 2]} as s, "
        "[1.5, null] as halves, []::varchar[] as none, null::int[] as missing"
    )
    code, out, err = run_query(capsys, sql, "--format", "csv")
    assert code == 0, err
    row = next(csv.DictReader(io.StringIO(out)))
    assert json.loads(row["tickers"]) == ["AAPL", "MSFT"]
    assert json.loads(row["s"]) == {"a": 1, "b": [1, 2]}
    assert json.loads(row["halves"]) == [1.5, None]
    assert json.loads(row["none"]) == [] and row["missing"] == ""
