"""Refusals that leave nothing behind, in process (the real command in a child process:
tests/integration/test_s34_suite_refusals.py):

* the understanding and reasoning flows, called directly with no system to ask, refuse
  before the warehouse writer lock: no lock file, no warehouse, no folder;
* the commands refuse it from their arguments, before the flow is even started (before
  orchestration: a bad ``TSRATE_PREFECT``, which only starting the flow reads, is not
  what they report);
* the in-flow checks stay as a backstop (``open_systems``, ``build_answerers``);
* a missing (or folder) import file for the reasoning flow is one line with the command
  line's hint for a missing path and what the file must be.
"""

from __future__ import annotations

import errno

import pytest

from flows.reasoning import reasoning_flow
from flows.understanding import understanding_flow
from tsrate import TsrateError, cli
from tsrate.commands.usage import PATH_HINTS
from tsrate.platform.locking import lock_path
from tsrate.suites.reasoning.dataset import DatasetError, import_items
from tsrate.suites.reasoning.suite import RunConfig, build_answerers
from tsrate.suites.understanding.suite import open_systems

UNDERSTANDING = "no system to ask: give --llm BACKEND:ID or keep the reference systems"
REASONING = (
    "nothing to run: no references and no --llm; give --llm SPEC or keep the reference systems"
)
IMPORT_FILE = (
    "the import, --import PATH or the flow's import_path, is a JSONL file in the public "
    "dataset's schema"
)


@pytest.mark.parametrize(
    ("flow", "llm", "line"),
    [(understanding_flow, "llm", UNDERSTANDING), (reasoning_flow, "llms", REASONING)],
)
@pytest.mark.parametrize("build", [True, False])
def test_a_flow_with_no_system_refuses_before_the_lock(tmp_path, flow, llm, line, build):
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    with pytest.raises(TsrateError) as refused:
        flow.fn(references=False, build=build, warehouse=str(warehouse), **{llm: []})
    assert str(refused.value) == line
    assert not lock_path(warehouse).exists() and not warehouse.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("suite", "line"), [("understanding", UNDERSTANDING), ("reasoning", REASONING)]
)
def test_the_command_refuses_before_starting_the_flow(tmp_path, monkeypatch, capsys, suite, line):
    monkeypatch.setenv("TSRATE_PREFECT", "bogus")  # read only when the flow is started
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    assert cli.main(["suite", suite, "run", "--no-references", "--no-build"]) == 2
    assert capsys.readouterr().err == f"tsrate: error: {line}\n"
    assert list(tmp_path.iterdir()) == []
    # with a system to ask, the same command gets as far as starting the flow
    assert cli.main(["suite", suite, "run", "--no-build"]) == 2
    assert "TSRATE_PREFECT='bogus'" in capsys.readouterr().err


def test_the_in_flow_checks_remain():
    with pytest.raises(TsrateError) as refused:
        open_systems([], references=False)
    assert str(refused.value) == UNDERSTANDING
    with pytest.raises(TsrateError) as refused:
        build_answerers(RunConfig(references=False))
    assert str(refused.value) == REASONING


def test_a_missing_import_file_names_what_it_must_be(tmp_path):
    missing = tmp_path / "absent.jsonl"
    with pytest.raises(DatasetError) as error:
        import_items(missing)
    hint = "check the path's spelling; the folders above it must exist"
    assert hint == PATH_HINTS[errno.ENOENT]  # the command line's own words for a missing path
    assert str(error.value) == f"{missing}: no such file (hint: {hint}; {IMPORT_FILE})"
    with pytest.raises(DatasetError) as error:
        import_items(tmp_path)
    assert str(error.value) == (
        f"{tmp_path}: a folder, not a file (hint: the path is a folder where a file is "
        f"needed: name a file; {IMPORT_FILE})"
    )
