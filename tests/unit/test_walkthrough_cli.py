"""What a newcomer meets first: `tsrate --help` and the commands that touch the live file.

`tsrate docs` opens the live warehouse (dbt reads its catalog), so it takes the writer lock
like the other commands that open it: a build started meanwhile is refused at once instead
of failing half-way on DuckDB's own lock."""

from __future__ import annotations

from tests.support.locks import another_writer
from tsrate import cli


def _subcommands(parser) -> list[str]:
    action = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001 - argparse
    return list(action.choices)


def test_top_level_help_lists_every_command_for_a_user(capsys):
    parser = cli.build_parser()
    text = parser.format_help()
    description = text.split("positional arguments:")[0]
    for command in _subcommands(parser):
        assert f"tsrate {command}" in description, command
    for developer_text in ("build_parser", ":mod:", "``", "This module"):
        assert developer_text not in text, developer_text
    assert "--debug" in text.split("options:")[-1]  # the epilog says how to see a traceback
    for line in (cli.DESCRIPTION + "\n" + cli.EPILOG).splitlines():
        assert len(line) < 80, line  # argparse prints them as they are: fit a terminal


def test_docs_takes_the_writer_lock_and_a_lock_timeout():
    args = cli.build_parser().parse_args(["docs", "--lock-timeout", "3"])
    assert args.writes_warehouse is True
    assert args.lock_timeout == 3.0


def test_docs_is_refused_at_once_while_another_process_writes(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with another_writer(warehouse):
        code = cli.main(["docs", "--output", str(tmp_path / "site")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the warehouse {warehouse} is being written by")
    assert not (tmp_path / "site").exists()


def test_run_refuses_workers_below_one_as_a_usage_error(capsys):
    """--workers 0 silently meant every core and --workers -3 one process."""
    parser = cli.build_parser()
    for value in ("0", "-3", "two"):
        try:
            parser.parse_args(["run", "--workers", value])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"--workers {value} was accepted")
        assert "argument --workers" in capsys.readouterr().err
    assert parser.parse_args(["run", "--workers", "1"]).workers == 1  # one: in this process
    assert parser.parse_args(["run", "--workers", "2"]).workers == 2
    assert parser.parse_args(["run"]).workers is None  # the default: every core
