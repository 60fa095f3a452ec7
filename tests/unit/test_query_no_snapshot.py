"""`tsrate query` before any publication: the hint suggests `--live` only when `--live`
would work. While a writer holds the warehouse (a first `tsrate run` on its way), `--live`
is refused, so the error names the writer and says to query once it has published."""

from __future__ import annotations

import duckdb

from tsrate.cli import main
from tsrate.platform.locking import writer_lock


def _error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tsrate: error: "), captured.err
    return lines[0]


def test_no_snapshot_and_no_writer_suggests_live(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    duckdb.connect(str(warehouse)).close()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert main(["query", "select 1"]) == 2
    line = _error(capsys)
    assert "no published snapshot" in line and "--live" in line
    assert main(["query", "select 42 as answer", "--live"]) == 0  # and --live does work
    assert "42" in capsys.readouterr().out


def test_no_snapshot_beside_a_writer_names_it_instead_of_live(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    duckdb.connect(str(warehouse)).close()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with writer_lock(warehouse):
        assert main(["query", "select 1"]) == 2
        line = _error(capsys)
        assert main(["query", "select 1", "--live"]) == 2  # what the old hint led to
        assert "is being written by" in _error(capsys)
    assert "no published snapshot" in line and "is being written by pid " in line
    assert "--live" not in line and "tsrate status" in line
