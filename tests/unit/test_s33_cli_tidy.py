"""Command-line tidy-ups found in review, each through the real ``tsrate`` main() in process:

* ``--no-references`` / ``--no-reference``: the understanding suite spelt it one way, the
  reasoning suite the other, and each refused the other's spelling; now both suites take
  both (``--no-references`` documented, ``--no-reference`` a hidden alias);
* ``tsrate suite reasoning run --import MISSING`` said "no such file" without a hint (and
  took the writer lock first): now the one path line every other command gives, before
  the lock;
* ``--forecasts 0`` (the reasoning suite) skips the forecasting task: the help says so;
* a writing command refused for a missing warehouse (``tsrate build``, ``docs``, ``suite
  NAME build``) left an empty ``<warehouse>.lock`` (and its folder) behind: the CLI took
  the writer lock before the command looked; now it is refused before the lock, while a
  lock file already there (a writer creating the warehouse) still names the writer.
"""

from __future__ import annotations

import os

import pytest

from tests.support.locks import another_writer
from tsrate import cli
from tsrate.platform.locking import lock_path

SUITES_WITH_REFERENCES = ("understanding", "reasoning")


def _run_help(suite: str) -> str:
    parser = cli.build_parser()
    suite_parser = parser._subparsers._group_actions[0].choices["suite"]  # noqa: SLF001
    name_parser = suite_parser._subparsers._group_actions[0].choices[suite]  # noqa: SLF001
    name_parser.format_help()  # adds the suite's actions (they are added when first used)
    return name_parser._subparsers._group_actions[0].choices["run"].format_help()  # noqa: SLF001


@pytest.mark.parametrize("suite", SUITES_WITH_REFERENCES)
@pytest.mark.parametrize("spelling", ["--no-references", "--no-reference"])
def test_both_spellings_leave_the_references_out_in_both_suites(suite, spelling):
    args = cli.build_parser().parse_args(["suite", suite, "run", spelling])
    assert args.no_references is True
    assert cli.build_parser().parse_args(["suite", suite, "run"]).no_references is False


@pytest.mark.parametrize("suite", SUITES_WITH_REFERENCES)
def test_the_help_documents_one_spelling(suite):
    text = _run_help(suite)
    assert "--no-references" in text
    assert "--no-reference " not in text and "--no-reference\n" not in text
    assert "--no-reference]" not in text


@pytest.mark.parametrize("spelling", ["--no-references", "--no-reference"])
def test_understanding_without_references_or_llm_has_no_system_to_ask(
    spelling, tmp_path, monkeypatch, capsys
):
    """Reached through the real flow: the flag (either spelling) becomes references=False."""
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    argv = ["suite", "understanding", "run", spelling, "--datasets", "trend"]
    argv += ["--test-size", "1", "--tasks", "detection", "--no-build"]
    assert cli.main(argv) == 2
    assert "no system to ask" in capsys.readouterr().err


def test_a_missing_import_file_is_one_path_line_with_a_hint_before_the_lock(
    tmp_path, monkeypatch, capsys
):
    warehouse = tmp_path / "wh" / "w.duckdb"
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    missing = tmp_path / "nonexistent.jsonl"
    code = cli.main(["suite", "reasoning", "run", "--import", str(missing), "--no-build"])
    assert code == 2
    out, err = capsys.readouterr()
    assert err == (
        f"tsrate: error: {missing}: No such file or directory (hint: check the path's "
        "spelling; the folders above it must exist)\n"
    )
    assert not (tmp_path / "wh").exists()  # no lock file, no folder: nothing was started


def test_the_forecasts_help_says_that_0_skips_forecasting():
    text = " ".join(_run_help("reasoning").split())
    wanted = "--forecasts FORECASTS procedural forecasting items, default 12 (0 skips the "
    assert wanted + "forecasting task)" in text


#: the writing commands that refuse when there is no warehouse, and their one-line refusals
REFUSED_WITHOUT_WAREHOUSE = [
    (["build"], "nothing to build; `tsrate run` forecasts the study"),
    (["build", "--no-publish"], "nothing to build"),
    (["build", "--run-id", "r1"], "nothing to build"),
    (["docs"], "run `tsrate run` before `tsrate docs`"),
    (["suite", "reasoning", "build"], "no stored reasoning suite run to build"),
    (["suite", "understanding", "build"], "no stored understanding suite run to build"),
    (["suite", "interpretability", "build", "x"], "no stored interpretability suite run"),
]


@pytest.mark.parametrize(("argv", "says"), REFUSED_WITHOUT_WAREHOUSE)
def test_a_command_refused_for_a_missing_warehouse_leaves_no_lock_file(
    argv, says, tmp_path, monkeypatch, capsys
):
    warehouse = tmp_path / "wh" / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: no warehouse at {warehouse}") and says in err, err
    assert len(err.splitlines()) == 1
    assert not lock_path(warehouse).exists()
    assert not (tmp_path / "wh").exists()


def test_report_without_a_warehouse_writes_nothing(tmp_path, monkeypatch, capsys):
    """`tsrate report` reads the published snapshot and takes no lock: nothing is left."""
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "w.duckdb"))
    assert cli.main(["report"]) == 2
    assert "no published snapshot at" in capsys.readouterr().err
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("argv", [["build"], ["docs"], ["suite", "reasoning", "build"]])
def test_with_a_lock_file_there_a_writer_creating_the_warehouse_is_named(
    argv, tmp_path, monkeypatch, capsys
):
    """The warehouse is missing but another process holds its lock (the first run,
    creating it): the command waits for, or is refused, the lock as before (a suite's
    build takes it too, as ``tsrate build`` does)."""
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with another_writer(warehouse):
        assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the warehouse {warehouse} is being written by"), err


def test_a_lock_file_left_by_an_earlier_writer_is_kept_and_the_refusal_is_the_same(
    tmp_path, monkeypatch, capsys
):
    """An existing (free) lock file: the lock is taken, the command refuses inside it, and
    the file is left as it was found (never removed: a waiting writer may hold it open)."""
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    lock_path(warehouse).write_text("")
    assert cli.main(["build"]) == 2
    assert "nothing to build" in capsys.readouterr().err
    assert lock_path(warehouse).exists() and os.path.getsize(lock_path(warehouse)) == 0
