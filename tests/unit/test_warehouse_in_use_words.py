"""The one line for a warehouse another process holds (tsrate.platform.warehouse
.in_use_message), from DuckDB's own lock messages: the holder's PID kept when DuckDB names
it, the reader case and the published snapshot beside the warehouse (or TSRATE_PUBLISHED)
named. A real second process holding the file: tests/integration/test_warehouse_in_use.py."""

from __future__ import annotations

from pathlib import Path

from tsrate.platform.warehouse import in_use_message

#: DuckDB 1.x/2.x's message for a file another process holds (its path and PID)
HELD = (
    'IO Error: Could not set lock on file "/data/wh/tsrate.duckdb": Conflicting lock is held '
    "in /usr/bin/python3.11 (PID 4242). However, you would be able to open this database in "
    "read-only mode, e.g. by using the -readonly parameter in the CLI. See also "
    "https://duckdb.org/docs/current/connect/concurrency"
)


def test_the_holders_pid_and_the_snapshot_beside_the_warehouse_are_named(monkeypatch):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    line = in_use_message(Path("/data/wh/tsrate.duckdb"), HELD)
    assert "\n" not in line
    assert line.startswith(
        "the warehouse /data/wh/tsrate.duckdb is in use by another process (PID 4242): "
    )
    assert "a reader opened on the live file" in line
    assert "the published snapshot /data/wh/published/tsrate.duckdb read-only" in line


def test_without_a_pid_in_duckdbs_words_the_line_says_another_process(monkeypatch):
    monkeypatch.setenv("TSRATE_PUBLISHED", "/srv/snap/tsrate.duckdb")
    line = in_use_message("/data/wh/tsrate.duckdb", "IO Error: Could not set lock on file")
    assert "in use by another process: " in line and "PID" not in line
    assert "the published snapshot /srv/snap/tsrate.duckdb read-only" in line
