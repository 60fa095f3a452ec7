"""benchmarks/compare_snapshots.py on two tiny real DuckDB snapshot files."""

import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from compare_snapshots import compare, main  # noqa: E402


def _snapshot(path: Path, statements: list[str]) -> Path:
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.execute("create table published_runs (run_id varchar)")
    con.execute("insert into published_runs values (?)", [path.stem])
    for statement in statements:
        con.execute(statement)
    con.close()
    return path


BASE = [
    "create table marts.ratings (system_id varchar, rating integer, score double)",
    "insert into marts.ratings values ('a', 1, 0.1), ('b', 2, null), ('c', 2, 0.3)",
]


def test_same_rows_in_another_order_and_within_tolerance_are_the_same(tmp_path, capsys):
    before = _snapshot(tmp_path / "before.duckdb", BASE)
    after = _snapshot(
        tmp_path / "after.duckdb",
        [
            BASE[0]
            .replace("score double", "score double")
            .replace(
                "(system_id varchar, rating integer, score double)",
                "(score double, system_id varchar, rating integer)",
            ),
            "insert into marts.ratings values (0.3 + 1e-15, 'c', 2), (null, 'b', 2), (0.1, 'a', 1)",
        ],
    )
    assert compare(before, after) == {"marts.ratings": None}  # published_runs left out
    assert main([str(before), str(after)]) == 0
    assert "marts.ratings: same" in capsys.readouterr().out


def test_a_changed_value_a_lost_row_and_a_missing_table_are_reported(tmp_path):
    before = _snapshot(
        tmp_path / "before.duckdb",
        [*BASE, "create table marts.wrs (x integer)", "insert into marts.wrs values (1)"],
    )
    changed = _snapshot(
        tmp_path / "changed.duckdb",
        [BASE[0], "insert into marts.ratings values ('a', 1, 0.1), ('b', 2, null), ('c', 2, 0.31)"],
    )
    result = compare(before, changed)
    assert "1 of 3 rows differ" in result["marts.ratings"]
    assert "score: 0.3 vs 0.31" in result["marts.ratings"]
    assert result["marts.wrs"] == "missing after"
    assert main([str(before), str(changed)]) == 1

    fewer = _snapshot(
        tmp_path / "fewer.duckdb",
        [
            BASE[0],
            "insert into marts.ratings values ('a', 1, 0.1), ('c', 2, 0.3)",
            "create schema intermediate",
            "create table intermediate.int_wrs (x integer)",
            "insert into intermediate.int_wrs values (1)",
        ],
    )
    result = compare(before, fewer, {"marts.wrs": "intermediate.int_wrs"})
    assert result["marts.ratings"] == "3 rows before, 2 after"
    assert result["marts.wrs -> intermediate.int_wrs"] is None
    # a null never equals a value, and a renamed-away column is a difference
    nulls = _snapshot(
        tmp_path / "nulls.duckdb",
        [BASE[0], "insert into marts.ratings values ('a', 1, 0.1), ('b', 2, 0.2), ('c', 2, 0.3)"],
    )
    assert "1 of 3 rows differ" in compare(before, nulls)["marts.ratings"]
    renamed = _snapshot(
        tmp_path / "renamed.duckdb",
        [BASE[0].replace("score", "value"), "insert into marts.ratings values ('a', 1, 0.1)"],
    )
    assert compare(before, renamed)["marts.ratings"].startswith("columns differ")
    # an ignored column is left out (two runs differ in their run id)
    assert compare(before, changed, ignore=["score"])["marts.ratings"] is None
