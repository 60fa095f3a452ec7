"""`tsrate report --snapshot FILE` on a file that is not a snapshot names the file and what to
give instead (DuckDB alone said "Cannot launch in-memory database in read-only mode!" for a
CSV); a missing snapshot names the commands that publish one."""

from __future__ import annotations

import pytest

from tsrate import cli


@pytest.mark.parametrize(
    ("name", "content"),
    [("prices.csv", "ticker,date,close\nAAPL,2022-01-03,10\n"), ("notes.txt", "x" * 5000)],
)
def test_a_file_that_is_not_a_snapshot_is_named_with_a_hint(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_text(content)
    assert cli.main(["report", "--snapshot", str(path), "--output", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith(f"tsrate: error: {path} cannot be opened as a DuckDB snapshot")
    assert "give --snapshot a published tsrate.duckdb" in err
    assert not (tmp_path / "r.html").exists()


def test_a_missing_snapshot_names_the_commands_that_publish(tmp_path, capsys):
    path = tmp_path / "published" / "tsrate.duckdb"
    assert cli.main(["report", "--snapshot", str(path)]) == 2
    err = capsys.readouterr().err
    assert "`tsrate run`" in err and "`tsrate import`" in err
    assert "`tsrate build`" not in err  # a build does not publish
