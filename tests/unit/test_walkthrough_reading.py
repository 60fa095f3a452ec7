"""The reading commands while another process writes the warehouse (as during `tsrate run`).

`tsrate systems` lists the systems from the seed and this machine, then the imported systems
from the live file: while a writer holds it, the list still stands (exit 0) with a note
instead of the imported systems. `tsrate runs` is refused, with advice that fits it (it has
no --live flag to drop)."""

from __future__ import annotations

import duckdb
import pytest

from tests.support.locks import another_writer
from tsrate import cli


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    duckdb.connect(str(path)).close()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def test_systems_lists_every_system_while_a_writer_runs(warehouse, capsys):
    with another_writer(warehouse):
        code = cli.main(["systems"])
    out, err = capsys.readouterr()
    assert code == 0, err
    listed = [line.split()[0] for line in out.splitlines() if line and not line[0].isspace()]
    assert {"naive", "seasonal_naive", "random", "biased"} <= set(listed)
    assert "imported systems and registered language models: not listed while another" in out
    assert err == ""


def test_systems_lists_the_imported_systems_when_no_writer_runs(warehouse, capsys):
    assert cli.main(["systems"]) == 0
    assert "not listed while" not in capsys.readouterr().out


def test_systems_reads_the_live_file_read_only_beside_another_reader(warehouse, capsys):
    """A BI tool (here: this process) holding the live file read-only: `tsrate systems`
    opens it read-only too (DuckDB refuses a read-write open of a file open read-only)."""
    from tsrate.platform.warehouse import duckdb_settings

    reader = duckdb.connect(str(warehouse), read_only=True, config=duckdb_settings())
    try:
        code = cli.main(["systems"])
    finally:
        reader.close()
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == "" and "not listed while" not in out


def test_runs_lists_the_live_runs_and_exits_0(warehouse, capsys):
    """`tsrate runs` reads raw.runs in the live file (the snapshot has no raw schema)."""
    from tsrate.platform.raw_schema import create_raw_tables

    with duckdb.connect(str(warehouse)) as con:
        create_raw_tables(con)
    code = cli.main(["runs"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("(no rows; columns: run_id, status, started_at, finished_at, ")


def test_runs_while_a_writer_runs_gives_advice_for_runs(warehouse, capsys):
    with another_writer(warehouse):
        code = cli.main(["runs"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the live warehouse {warehouse} is being written by")
    assert "`tsrate runs`" in err
    assert "published_runs" in err
    assert "--live" not in err  # `tsrate runs` has no such flag to drop


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["export-inputs", "EXPORT"], "export-inputs"),
        (
            ["show-input", "--system", "vit_num_spec_covid", "--ticker", "MRK",
             "--date", "2022-06-01", "--perturbation", "P0", "--output", "PNG"],
            "show-input",
        ),
    ],
)  # fmt: skip
def test_the_commands_that_read_the_live_file_are_refused_while_a_writer_runs(
    warehouse, tmp_path, capsys, argv, command
):
    """They read the live warehouse: refused at once, naming themselves, and nothing
    written, rather than failing on DuckDB's lock (or making a starting writer fail)."""
    paths = {"EXPORT": str(tmp_path / "export"), "PNG": str(tmp_path / "x.png")}
    with another_writer(warehouse):
        code = cli.main([paths.get(arg, arg) for arg in argv])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the live warehouse {warehouse} is being written by")
    assert f"`tsrate {command}`" in err
    assert not (tmp_path / "export").exists() and not (tmp_path / "x.png").exists()
