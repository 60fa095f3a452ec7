"""A newcomer's second round at the command line: each error names what to give instead.

Found by a fresh-clone trial: a missing DuckDB file said only "no DuckDB database at PATH";
``tsrate suite`` said "required: suite_name" (argparse's dest), ``tsrate query`` "required:
sql"; ``tsrate systems --show-prompt naive`` did not say which systems have a prompt; and
two usage lines of ``--help`` ran past 80 columns."""

from __future__ import annotations

import argparse

import duckdb
import pytest

from tsrate import TsrateError, cli
from tsrate.commands.usage import LISTED_CHOICES, OneLineParser
from tsrate.platform.query import MISSING_HINT, open_sealed
from tsrate.suites import SUITES
from tsrate.systems.registry import load_systems_seed


def usage_error(argv: list[str], capsys) -> str:
    """``tsrate ARGV``'s usage error: its one stderr line (exit 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    return err.rstrip("\n")


def all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the CLI with its command line: the top, each command, each suite and
    each suite's actions (a suite's are added when its help is first formatted)."""
    found, todo = [], [("tsrate", cli.build_parser())]
    while todo:
        name, parser = todo.pop()
        parser.format_help()  # a suite parser adds its actions here
        found.append((name, parser))
        for action in parser._actions:  # noqa: SLF001 - argparse keeps them only here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
    return found


# -- 1. a path with no DuckDB file ---------------------------------------------------------


def test_a_missing_database_names_what_writes_one(tmp_path):
    path = tmp_path / "nowhere" / "tsrate.duckdb"
    with pytest.raises(TsrateError) as caught:
        open_sealed(path)
    assert str(caught.value) == f"no DuckDB database at {path}"
    assert caught.value.hint == MISSING_HINT
    assert "`tsrate run`" in MISSING_HINT and "TSRATE_WAREHOUSE" in MISSING_HINT
    line, status = cli._error_line(caught.value)  # noqa: SLF001 - the line main prints
    assert (line, status) == (f"no DuckDB database at {path} (hint: {MISSING_HINT})", 2)


def test_a_folder_where_the_database_should_be_names_the_file_to_give(tmp_path):
    with pytest.raises(TsrateError) as caught:
        open_sealed(tmp_path)
    assert str(caught.value) == f"{tmp_path} is a folder, not a DuckDB database file"
    assert caught.value.hint == f"name the database file, e.g. {tmp_path / 'tsrate.duckdb'}"


def test_query_on_a_folder_as_the_snapshot_is_one_line_with_the_hint(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    duckdb.connect(str(warehouse)).close()
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    snapshot.mkdir(parents=True)  # a folder by the published file's name
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert cli.main(["query", "select 1"]) == 2
    assert capsys.readouterr().err == (
        f"tsrate: error: {snapshot} is a folder, not a DuckDB database file (hint: name the "
        f"database file, e.g. {snapshot / 'tsrate.duckdb'})\n"
    )


def test_an_existing_database_still_opens(tmp_path):
    path = tmp_path / "real.duckdb"
    duckdb.connect(str(path)).close()
    con = open_sealed(path)
    try:
        assert con.execute("select 42").fetchall() == [(42,)]
    finally:
        con.close()


# -- 2. required positionals and sub-commands ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        ([], "the following arguments are required: COMMAND; see 'tsrate --help'"),
        (["suite"], "tsrate suite: the following arguments are required: NAME (one of "
         f"{', '.join(SUITES)}); see 'tsrate suite --help'"),
        (["suite", "reasoning"], "tsrate suite reasoning: the following arguments are "
         "required: ACTION (one of run, build, report); see 'tsrate suite reasoning --help'"),
        (["query"], "tsrate query: the following arguments are required: SQL; "
         "see 'tsrate query --help'"),
        (["import"], "tsrate import: the following arguments are required: FILE, --system; "
         "see 'tsrate import --help'"),
        (["import-predictions"], "tsrate import-predictions: the following arguments are "
         "required: FILE, --system, --manifest; see 'tsrate import-predictions --help'"),
        (["export"], "tsrate export: the following arguments are required: DIR; "
         "see 'tsrate export --help'"),
        (["export-inputs"], "tsrate export-inputs: the following arguments are required: "
         "DIR; see 'tsrate export-inputs --help'"),
    ],
)  # fmt: skip
def test_a_missing_positional_is_named_as_help_names_it(argv, line, capsys):
    assert usage_error(argv, capsys) == f"tsrate: error: {line}"


def test_the_suite_names_are_the_registry_s_and_few_enough_to_list():
    assert set(SUITES) == {"understanding", "interpretability", "reasoning"}
    assert len(SUITES) <= LISTED_CHOICES


def test_every_positional_has_a_name_for_users_not_its_dest():
    """A dest (suite_name, path, sql) in an error meant nothing to a user: every positional
    and sub-command has an upper-case metavar, as the commands' help writes them."""
    for name, parser in all_parsers():
        for action in parser._actions:  # noqa: SLF001
            if action.option_strings or action.help == argparse.SUPPRESS:
                continue
            assert action.metavar and action.metavar.isupper(), (name, action.dest)


def test_a_missing_choice_with_many_choices_is_named_without_the_list(capsys):
    command = next(
        a
        for a in cli.build_parser()._actions
        if a.dest == "command"  # noqa: SLF001
    )
    assert len(command.choices) > LISTED_CHOICES
    assert "(one of" not in usage_error([], capsys)


@pytest.mark.parametrize("count", [LISTED_CHOICES, LISTED_CHOICES + 1])
def test_a_missing_sub_command_lists_up_to_the_listed_number_of_choices(count, capsys):
    """The same bound as an invalid choice's list: LISTED_CHOICES are listed, one more not."""
    parser = OneLineParser(prog="tsrate demo")
    names = [f"c{i}" for i in range(count)]
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name in names:
        actions.add_parser(name)
    with pytest.raises(SystemExit):
        parser.parse_args([])
    listed = f" (one of {', '.join(names)})" if count <= LISTED_CHOICES else ""
    assert capsys.readouterr().err == (
        f"tsrate: error: tsrate demo: the following arguments are required: ACTION{listed}; "
        "see 'tsrate demo --help'\n"
    )


def test_an_option_error_is_left_as_argparse_words_it(capsys):
    line = usage_error(["show-input", "--ticker", "A", "--date", "2022-01-03",
                        "--perturbation", "P0"], capsys)  # fmt: skip
    assert line == (
        "tsrate: error: tsrate show-input: the following arguments are required: --system; "
        "see 'tsrate show-input --help'"
    )


# -- 3. --show-prompt of a system without a prompt -------------------------------------------


def _language_models() -> list[str]:
    """An independent list: the seed's general-purpose (language) models, in seed order."""
    seed = load_systems_seed()
    return seed.loc[seed["purpose"] == "general-purpose", "system_id"].tolist()


def test_a_system_without_a_prompt_lists_the_systems_with_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    assert cli.main(["systems", "--show-prompt", "naive"]) == 2
    listed = ", ".join(_language_models())
    assert capsys.readouterr().err == (
        "tsrate: error: system 'naive' is not a language model: it has no prompt (hint: "
        f"the systems with a prompt are {listed})\n"
    )
    assert "gemini_numeric" in listed and "gemma3_270m" in listed


def test_an_unknown_system_suggests_a_close_one_and_lists_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    listed = ", ".join(_language_models())
    assert cli.main(["systems", "--show-prompt", "gemma"]) == 2
    assert capsys.readouterr().err == (
        "tsrate: error: unknown system 'gemma' (did you mean gemma3_270m?) (hint: "
        f"`tsrate systems` lists every system; the systems with a prompt are {listed})\n"
    )
    assert cli.main(["systems", "--show-prompt", "zzzz"]) == 2
    assert capsys.readouterr().err.startswith("tsrate: error: unknown system 'zzzz' (hint: ")


def test_a_language_model_still_shows_its_prompt(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    for system_id in _language_models():
        assert cli.main(["systems", "--show-prompt", system_id]) == 0
        assert capsys.readouterr().out.startswith(f"# {system_id}: prompt for a sample")


# -- 4. --help fits a terminal ----------------------------------------------------------------


def test_every_help_line_fits_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    seen = set()
    for name, parser in all_parsers():
        seen.add(name)
        for line in parser.format_help().splitlines():
            assert len(line) < 80, (name, line)
    assert {
        "tsrate",
        "tsrate import-predictions",
        "tsrate suite understanding run",
        "tsrate suite reasoning run",
    } <= seen
    assert len(seen) > 25  # every command and every suite action was walked
