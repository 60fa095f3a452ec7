"""``tsrate query``'s output formats where the mutation sweep found them unchecked: JSON's
numbers (docs/bi.md and format_result: 15 significant digits, whatever the number's size;
infinity and NaN as null), JSON's nullable columns, and the table and CSV of a frame as
DuckDB's ``.df()`` hands it over (lists as numpy arrays, numpy scalars in a mixed column).

Every expected text here is written by hand from the value and the documented format.
Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep13_query.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.platform.query import QueryResult, format_result, run_query


@pytest.fixture
def database(tmp_path) -> Path:
    path = tmp_path / "tsrate.duckdb"
    duckdb.connect(str(path)).close()
    return path


def result_of(frame: pd.DataFrame) -> QueryResult:
    return QueryResult(frame, False, 10, Path("snapshot.duckdb"))


def test_json_numbers_keep_15_significant_digits_whatever_their_size(database):
    sql = (
        "select 2.5e-15::double as tiny, 1 / 3 as third, 3.2e-4 / 3 as small, "
        "123456.123456789::double as big, 0.1234567890123456::double as long, "
        "12.345::decimal(10, 3) as dec, 1e300::double as huge, 33048 as whole, "
        "[2.5e-15, 1 / 3] as list, {'p': 1e-20::double} as struct, 'inf'::double as inf, "
        "'-inf'::double as minus_inf, 'nan'::double as nan"
    )
    text = format_result(run_query(database, sql), "json")
    # 2.5e-15 is not 0.000000000000002 (15 decimal places: one digit left), 0.1234567890123456
    # rounds at its 15th digit, a DECIMAL's 12.345 has no binary tail (12.345000000000001)
    assert text == (
        '[{"tiny":2.5e-15,"third":0.333333333333333,"small":0.000106666666666667,'
        '"big":123456.123456789,"long":0.123456789012346,"dec":12.345,"huge":1e+300,'
        '"whole":33048,"list":[2.5e-15,0.333333333333333],"struct":{"p":1e-20},'
        '"inf":null,"minus_inf":null,"nan":null}]'
    )


def test_json_writes_a_nullable_column_s_missing_values_as_null():
    frame = pd.DataFrame(
        {
            "score": pd.array([0.5, None], dtype="Float64"),
            "name": pd.array(["a/b", None], dtype=pd.StringDtype(na_value=pd.NA)),
            "n": pd.array([7, None], dtype="Int64"),
            "ok": pd.array([True, None], dtype="boolean"),
        }
    )
    text = format_result(result_of(frame), "json")
    assert text == (
        '[{"score":0.5,"name":"a/b","n":7,"ok":true},{"score":null,"name":null,"n":null,"ok":null}]'
    )


def test_json_of_no_rows_is_an_empty_array(database):
    text = format_result(run_query(database, "select 1.5 as x where false"), "json")
    assert text == "[]"


UUID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


def test_a_uuid_prints_as_its_text_alone_in_a_list_and_as_a_map_key(database):
    """DuckDB hands a UUID over as Python's uuid.UUID, which JSON has no type for (and which
    cannot be a JSON key as it is); a struct's numbers follow each format's rule."""
    sql = (
        f"select '{UUID}'::uuid as id, ['{UUID}'::uuid] as ids, "
        f"map(['{UUID}'::uuid], [1]) as counts, {{'n': 5, 'share': 1 / 3}} as part"
    )
    result = run_query(database, sql)
    assert format_result(result, "json") == (
        f'[{{"id":"{UUID}","ids":["{UUID}"],"counts":{{"{UUID}":1}},'
        '"part":{"n":5,"share":0.333333333333333}}]'
    )
    assert format_result(result, "csv") == (
        f'id,ids,counts,part\n{UUID},"[""{UUID}""]","{{""{UUID}"": 1}}",'
        '"{""n"": 5, ""share"": 0.3333333333333333}"'
    )


def test_a_list_straight_from_duckdb_prints_as_json_in_table_and_csv():
    """A frame as DuckDB's .df() gives it: each list a numpy array, not yet a Python list."""
    frame = duckdb.sql("select ['a', 'b'] as names, [1, 2] as ns").df()
    assert isinstance(frame["names"][0], np.ndarray)  # what the test is about
    assert format_result(result_of(frame), "csv") == 'names,ns\n"[""a"", ""b""]","[1, 2]"'
    assert format_result(result_of(frame), "json") == '[{"names":["a","b"],"ns":[1,2]}]'
    assert format_result(result_of(frame), "table").splitlines() == [
        "     names     ns",
        '["a", "b"] [1, 2]',
    ]


def test_a_numpy_number_in_a_mixed_column_prints_as_itself():
    """A float32 0.1 is 0.1, not the double nearest it (0.10000000149011612)."""
    frame = pd.DataFrame({"value": pd.Series([np.float32(0.1), "x"], dtype=object)})
    assert format_result(result_of(frame), "csv") == "value\n0.1\nx"
    assert format_result(result_of(frame), "table").split() == ["value", "0.1", "x"]


def test_the_table_prints_a_long_cell_whole():
    """No '...' in a cell however long (pandas' repr cuts at 50 characters)."""
    frame = pd.DataFrame({"id": [1], "note": ["n" * 120], "steps": [list(range(40))]})
    lines = format_result(result_of(frame), "table").splitlines()
    assert lines[1].split() == ["1", "n" * 120, *json.dumps(list(range(40))).split()]
