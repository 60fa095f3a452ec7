"""The suite kit's publish contract, checked after each suite's real flow run."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tsrate.platform.publish import published_path
from tsrate.suites import SUITES
from tsrate.suites.publishing import write_suite_report


def assert_suite_published(warehouse: Path, suite: str, suite_run_id: str, tmp_path: Path) -> None:
    """The suite run's marts are in the published snapshot, row for row as in the live file;
    no other suite's never-built marts are; the report is written from the snapshot alone."""
    prefix = SUITES[suite].prefix
    snapshot = published_path(warehouse)
    live = duckdb.connect(str(warehouse), read_only=True)
    published = duckdb.connect(str(snapshot), read_only=True)
    try:
        live_marts = {
            r[0]
            for r in live.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts' "
                "and starts_with(table_name, ?)",
                [f"{prefix}_"],
            ).fetchall()
        }
        snap_marts = {
            r[0]
            for r in published.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts'"
            ).fetchall()
        }
        assert live_marts and live_marts <= snap_marts
        for mart in live_marts:
            n_live = live.execute(f"select count(*) from marts.{mart}").fetchone()[0]
            n_snap = published.execute(f"select count(*) from marts.{mart}").fetchone()[0]
            assert n_live == n_snap, mart
        ratings = published.execute(f"select distinct suite_run_id from marts.{prefix}_ratings")
        assert [r[0] for r in ratings.fetchall()] == [suite_run_id]
        others = {s.prefix for s in SUITES.values() if s.name != suite}
        assert not {m for m in snap_marts if m.split("_")[0] in others}  # never ran here
        runs = published.execute("select run_id, study from published_runs").fetchall()
        assert (suite_run_id, None) in runs
        assert published.execute("select count(*) from seeds.suite_rating_specs").fetchone()[0]
    finally:
        live.close()
        published.close()
    # the report needs nothing but the snapshot: move the live warehouse away first
    moved = warehouse.with_name(warehouse.name + ".away")
    warehouse.rename(moved)
    try:
        report = write_suite_report(suite, snapshot, tmp_path / f"{suite}-from-snapshot.html")
        assert suite_run_id in report.read_text()
    finally:
        moved.rename(warehouse)
