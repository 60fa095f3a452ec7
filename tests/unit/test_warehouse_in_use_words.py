"""The one line for a warehouse another process holds (tsrate.platform.warehouse
.in_use_message), from DuckDB's own lock messages: the holder's PID kept when DuckDB names
it, the reader case and the published snapshot beside the warehouse (or TSRATE_PUBLISHED)
named; when DuckDB's words name no file, the file the command opened, else "the warehouse
file". A real second process holding the file: tests/integration/test_warehouse_in_use.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tsrate.platform import dbt_runner
from tsrate.platform.dbt_child import SUMMARY
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


#: DuckDB's message where it names no file
UNNAMED = "IO Error: Could not set lock on file: Conflicting lock is held (PID 77)"


@pytest.mark.parametrize("path", ["", Path("")])
def test_with_no_file_named_the_line_says_the_warehouse_file(monkeypatch, path):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    line = in_use_message(path, UNNAMED)
    assert "\n" not in line and "  " not in line
    assert line.startswith("the warehouse file is in use by another process (PID 77): ")
    assert line.endswith(
        "(hint: readers should open the published snapshot (published/ beside the warehouse) "
        "read-only, or use `tsrate query`)"
    )
    monkeypatch.setenv("TSRATE_PUBLISHED", "/srv/snap/tsrate.duckdb")
    line = in_use_message(path, UNNAMED)
    assert "the published snapshot /srv/snap/tsrate.duckdb read-only, or" in line


class _Exited:
    """What :func:`dbt_runner._follow` reads of a finished dbt child: its lines, its exit
    code (a stand-in for subprocess.Popen, which a unit test does not start)."""

    def __init__(self, lines: list[str], code: int) -> None:
        self.stdout = io.StringIO("".join(f"{line}\n" for line in lines))
        self.code = code

    def wait(self) -> int:
        return self.code

    def kill(self) -> None:  # pragma: no cover - only on Ctrl-C
        pass


@pytest.mark.parametrize(
    ("duckdb_words", "named"),
    [
        (UNNAMED, "/data/wh/tsrate.duckdb"),  # no file in DuckDB's words: the one dbt opened
        ('IO Error: Could not set lock on file "tsrate.duckdb": held (PID 77)', None),
        (
            'IO Error: Could not set lock on file "/other/x.duckdb": held (PID 77)',
            "/other/x.duckdb",
        ),
    ],
)
def test_a_build_refused_by_the_lock_names_the_file_it_opened(monkeypatch, duckdb_words, named):
    """A relative name in DuckDB's words is the child's: it runs in the warehouse's folder."""
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = Path("/data/wh/tsrate.duckdb")
    child = _Exited([f"{SUMMARY} {duckdb_words}"], 1)
    with pytest.raises(dbt_runner.WarehouseInUse) as caught:
        dbt_runner._follow(child, ["build"], None, None, False, 0.0, warehouse=warehouse)
    expected = named or str(warehouse)
    assert str(caught.value).startswith(f"the warehouse {expected} is in use by another process")
    unknown = _Exited([f"{SUMMARY} {UNNAMED}"], 1)
    with pytest.raises(dbt_runner.WarehouseInUse) as caught:
        dbt_runner._follow(unknown, ["build"], None, None, False, 0.0)
    assert str(caught.value).startswith("the warehouse file is in use by another process")
