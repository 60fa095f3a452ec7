"""Refusals of an import file that say what is wrong and what to do, in process (the real
command in a child process: tests/integration/test_s34_import_refusals.py):

* ``tsrate suite reasoning run --import FOLDER`` passed the command's pre-flight check
  (which only asked whether the path exists) and was refused inside the flow, after the
  writer lock, leaving an empty lock file; now the pre-flight check refuses a folder, and
  anything else that is not a regular file, in the flow's own words, before the flow starts;
* the other commands' input files (``tsrate ingest FILE``) are refused the same way when
  they are folders, without the reasoning suite's words on what an import is (a pipe passes:
  ``tsrate ingest <(...)``);
* a file with no rows says what a row is.

The expected lines are written out by hand.
"""

from __future__ import annotations

import os

import pytest

from tsrate import cli
from tsrate.suites.reasoning.dataset import DatasetError, import_items

IMPORT_FILE = (
    "the import, --import PATH or the flow's import_path, is a JSONL file in the public "
    "dataset's schema"
)
FOLDER_HINT = "the path is a folder where a file is needed: name a file"
PIPE_HINT = "the path is a device, pipe or socket where a file is needed: name a file"


def _folder_line(path) -> str:  # noqa: ANN001
    return f"{path}: a folder, not a file (hint: {FOLDER_HINT}; {IMPORT_FILE})"


def test_the_flow_refuses_a_folder_and_a_pipe_in_the_same_words(tmp_path):
    with pytest.raises(DatasetError) as refused:
        import_items(tmp_path)
    assert str(refused.value) == _folder_line(tmp_path)
    pipe = tmp_path / "rows.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(DatasetError) as refused:
        import_items(pipe)  # not opened: a pipe with no writer would block the read
    assert str(refused.value) == f"{pipe}: not a regular file (hint: {PIPE_HINT}; {IMPORT_FILE})"


@pytest.mark.parametrize("kind", ["folder", "pipe"])
def test_the_command_refuses_what_is_not_a_file_before_starting_the_flow(
    tmp_path, monkeypatch, capsys, kind
):
    """The same line as the flow's, from the pre-flight check: before orchestration (a bad
    ``TSRATE_PREFECT``, read only when the flow is started, is not what is reported) and
    before the writer lock (no lock file, no warehouse, not even its folder)."""
    monkeypatch.setenv("TSRATE_PREFECT", "bogus")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    given = tmp_path / "given"
    if kind == "folder":
        given.mkdir()
    else:
        os.mkfifo(given)
    with pytest.raises(DatasetError) as refused:
        import_items(given)
    argv = ["suite", "reasoning", "run", "--import", str(given), "--no-build"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"tsrate: error: {refused.value}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["given"]
    # a regular file gets as far as starting the flow
    (tmp_path / "rows.jsonl").write_text("{}\n")
    argv[4] = str(tmp_path / "rows.jsonl")
    assert cli.main(argv) == 2
    assert "TSRATE_PREFECT='bogus'" in capsys.readouterr().err


def test_another_commands_folder_is_refused_without_the_import_words(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    assert cli.main(["ingest", str(tmp_path)]) == 2
    line = f"{tmp_path}: a folder, not a file (hint: {FOLDER_HINT})"
    assert capsys.readouterr().err == f"tsrate: error: {line}\n"
    assert list(tmp_path.iterdir()) == []  # no lock file, no warehouse folder


def test_a_file_with_no_rows_says_what_a_row_is(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(DatasetError) as refused:
        import_items(empty)
    assert str(refused.value) == (
        f"{empty}: no rows (hint: a row is one JSON object per line in the public dataset's "
        "schema: a series (uuid, description, ..., series) or a question (category, "
        "question, options, the answer, its series or a series row's uuid); blank lines "
        "are skipped)"
    )
    assert "\n" not in str(refused.value)


def test_a_pipe_passes_the_check_where_the_command_may_read_one(tmp_path):
    """``tsrate ingest <(...)`` names a pipe: only the commands whose file is read inside the
    flow (the reasoning import: ``regular_input_files``) need a regular file."""
    from argparse import Namespace

    from tsrate import TsrateError
    from tsrate.commands.usage import require_inputs

    pipe = tmp_path / "prices.csv"
    os.mkfifo(pipe)
    require_inputs(Namespace(input_files=("path",), path=str(pipe)))  # not opened, not refused
    with pytest.raises(TsrateError, match="not a regular file"):
        require_inputs(
            Namespace(input_files=("path",), path=str(pipe), regular_input_files=("path",))
        )
    with pytest.raises(TsrateError, match="a folder, not a file"):
        require_inputs(Namespace(input_files=("path",), path=str(tmp_path)))
