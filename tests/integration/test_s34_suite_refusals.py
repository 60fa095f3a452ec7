"""A suite run with no system to ask, through the real ``tsrate`` command in a child process
started in an empty folder: ``tsrate suite understanding run --no-references`` and ``tsrate
suite reasoning run --no-references`` without ``--llm`` exit 2 with one line naming the
problem and its hint, and leave nothing behind: no warehouse, no ``<warehouse>.lock``, not
even the warehouse's folder (the flow used to take the writer lock before it looked, so an
empty lock file stayed behind a run that wrote nothing).

The same refusal of the flows called directly, and the order of the checks, are pinned in
process: tests/unit/test_s34_suite_refusals.py.
"""

from __future__ import annotations

import pytest

from tests.integration.cli_child import run_tsrate
from tsrate.platform.locking import lock_path

UNDERSTANDING = "no system to ask: give --llm BACKEND:ID or keep the reference systems"
REASONING = (
    "nothing to run: no references and no --llm; give --llm SPEC or keep the reference systems"
)


@pytest.mark.parametrize(
    ("suite", "extra", "line"),
    [
        ("understanding", [], UNDERSTANDING),
        ("understanding", ["--no-build", "--prompting", "both"], UNDERSTANDING),
        ("reasoning", [], REASONING),
        ("reasoning", ["--no-build", "--fracast", "0"], REASONING),
    ],
)
def test_a_run_with_no_system_is_refused_and_leaves_nothing_behind(tmp_path, suite, extra, line):
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    done = run_tsrate(
        "suite", suite, "run", "--no-references", *extra, warehouse=warehouse, cwd=tmp_path
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert not lock_path(warehouse).exists()
    assert not warehouse.exists()
    assert list(tmp_path.iterdir()) == []  # not even the warehouse's folder
    assert done.stderr == f"tsrate: error: {line}\n"  # one line: no "suite started/failed" log
    assert done.stdout == ""


def test_a_lock_file_already_there_is_left_as_it_was(tmp_path):
    """A refused run neither takes nor removes a lock file another writer made."""
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    lock_path(warehouse).write_text("")
    for suite, line in (("understanding", UNDERSTANDING), ("reasoning", REASONING)):
        done = run_tsrate(
            "suite", suite, "run", "--no-reference", warehouse=warehouse, cwd=tmp_path
        )
        assert (done.returncode, done.stderr) == (2, f"tsrate: error: {line}\n")
    assert lock_path(warehouse).read_text() == "" and not warehouse.exists()
