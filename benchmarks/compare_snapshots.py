"""Compare every table of two published snapshots (DuckDB files), row for row.

    python benchmarks/compare_snapshots.py BEFORE.duckdb AFTER.duckdb [--rename old=new ...]

Same tables (schema.table; ``published_runs`` is left out: it records when and which run
was published), same columns, and the same rows as multisets: order-insensitive, floats
equal within ``--rtol`` / ``--atol`` (default 1e-9 / 1e-12), nulls equal to nulls (NaN
counts as null). ``--rename marts.wrs=intermediate.int_wrs`` maps a table of BEFORE to its
name in AFTER; ``--ignore run_id`` leaves a column out of the comparison (two runs of one
study differ in their run id). Prints one line per table (``same`` or what differs) and exits 1 on any
difference, 0 when every table is the same.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb

#: Bookkeeping of the publication itself, not data: differs between any two publishes.
SKIPPED = {"main.published_runs"}


def _quoted(name: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split(".", 1))


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    """The columns of ``relation`` (already qualified and quoted)."""
    return [row[0] for row in con.execute(f"select * from {relation} limit 0").description]


def _key(value: object) -> tuple:
    """Sort key that orders mixed values and puts nulls first (NaN is null); floats rounded
    to 8 significant digits, so that values within the tolerance sort alike."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (0, "")
    if isinstance(value, float):
        return (1, float(f"{value:.8g}"))
    if isinstance(value, bool | int):
        return (1, float(value))
    return (2, str(value))


def _same(a: object, b: object, rtol: float, atol: float) -> bool:
    null_a = a is None or (isinstance(a, float) and math.isnan(a))
    null_b = b is None or (isinstance(b, float) and math.isnan(b))
    if null_a or null_b:
        return null_a and null_b
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, int | float) and isinstance(b, int | float):
            return math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=atol)
        return False
    return a == b


def compare_table(
    con: duckdb.DuckDBPyConnection,
    table_before: str,
    table_after: str,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    ignore: Sequence[str] = (),
) -> str | None:
    """None when the two tables hold the same rows (as multisets, floats within the
    tolerance); else one line saying what differs. ``con`` has both snapshots attached as
    ``before`` and ``after``; the names are ``schema.table`` in each.

    DuckDB finds the rows that are not exactly equal (``except all`` both ways), so only
    those come into Python for the tolerance check: two equal snapshots of millions of rows
    are compared without loading them (the Python-only version ran out of 24 GB)."""
    qualified_b, qualified_a = f"before.{_quoted(table_before)}", f"after.{_quoted(table_after)}"
    cols_b, cols_a = _columns(con, qualified_b), _columns(con, qualified_a)
    if sorted(cols_b) != sorted(cols_a):
        only_b = sorted(set(cols_b) - set(cols_a))
        only_a = sorted(set(cols_a) - set(cols_b))
        return f"columns differ: only before {only_b}, only after {only_a}"
    compared = sorted(c for c in cols_b if c not in set(ignore))
    select = ", ".join('"' + c.replace('"', '""') + '"' for c in compared)
    n_b = con.execute(f"select count(*) from {qualified_b}").fetchone()[0]
    n_a = con.execute(f"select count(*) from {qualified_a}").fetchone()[0]
    if n_b != n_a:
        return f"{n_b} rows before, {n_a} after"
    # NaN and null are both "missing": compare them alike in SQL as in Python
    rows_b = con.execute(
        f"select {select} from {qualified_b} except all select {select} from {qualified_a}"
    ).fetchall()
    rows_a = con.execute(
        f"select {select} from {qualified_a} except all select {select} from {qualified_b}"
    ).fetchall()
    if len(rows_b) != len(rows_a):
        return f"{max(len(rows_b), len(rows_a))} of {n_b} rows differ (as multisets)"

    def order(rows: list[tuple]) -> list[tuple]:
        return sorted(rows, key=lambda row: tuple(_key(v) for v in row))

    differing = 0
    example = None
    for row_b, row_a in zip(order(rows_b), order(rows_a), strict=True):
        if not all(_same(x, y, rtol, atol) for x, y in zip(row_b, row_a, strict=True)):
            differing += 1
            if example is None:
                example = next(
                    f"{c}: {x!r} vs {y!r}"
                    for c, x, y in zip(compared, row_b, row_a, strict=True)
                    if not _same(x, y, rtol, atol)
                )
    if differing:
        return f"{differing} of {n_b} rows differ (first, in sorted order: {example})"
    return None


def _attached_tables(con: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    rows = con.execute(
        "select schema_name, table_name from duckdb_tables() where database_name = ? order by 1, 2",
        [database],
    ).fetchall()
    return [f"{s}.{t}" for s, t in rows if f"{s}.{t}" not in SKIPPED]


def compare(
    before: Path,
    after: Path,
    renames: dict[str, str] | None = None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    ignore: Sequence[str] = (),
) -> dict[str, str | None]:
    """Per table of either snapshot: None (same) or what differs."""
    renames = renames or {}
    con = duckdb.connect()
    try:
        con.execute(f"attach '{Path(before).resolve()}' as before (read_only)")
        con.execute(f"attach '{Path(after).resolve()}' as after (read_only)")
        tables_b, tables_a = _attached_tables(con, "before"), set(_attached_tables(con, "after"))
        results: dict[str, str | None] = {}
        for table in tables_b:
            target = renames.get(table, table)
            label = table if target == table else f"{table} -> {target}"
            if target not in tables_a:
                results[label] = "missing after"
                continue
            tables_a.discard(target)
            results[label] = compare_table(con, table, target, rtol, atol, ignore)
        for table in sorted(tables_a):
            results[table] = "missing before"
        return results
    finally:
        con.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rename", action="append", default=[], metavar="OLD=NEW")
    parser.add_argument("--ignore", action="append", default=[], metavar="COLUMN")
    parser.add_argument("--rtol", type=float, default=1e-9)
    parser.add_argument("--atol", type=float, default=1e-12)
    args = parser.parse_args(argv)
    for path in (args.before, args.after):
        if not path.exists():
            print(f"error: no snapshot at {path}", file=sys.stderr)
            return 2
    renames = dict(item.split("=", 1) for item in args.rename)
    results = compare(args.before, args.after, renames, args.rtol, args.atol, args.ignore)
    for table, problem in results.items():
        print(f"{table}: {problem or 'same'}")
    differing = [t for t, p in results.items() if p]
    print(f"{len(results) - len(differing)} of {len(results)} tables the same")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
