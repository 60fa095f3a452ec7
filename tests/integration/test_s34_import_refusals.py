"""``tsrate suite reasoning run --import FOLDER`` through the real ``tsrate`` command in a
child process started in an empty folder: exit 2, one line (the flow's own words for a
folder, with what an import file is), and nothing left behind: no warehouse, no
``<warehouse>.lock``, not even the warehouse's folder (the folder used to pass the
command's pre-flight check, which only asked whether the path exists, and be refused
inside the flow after the writer lock, leaving an empty lock file).

The same refusal in process, and a pipe's: tests/unit/test_s34_import_refusals.py. Also the
interpretability suite's unknown dataset, refused before the lock the same way (its other
refusals in process: tests/unit/test_s34_interp_refusals.py).
"""

from __future__ import annotations

from tests.integration.cli_child import run_tsrate
from tsrate.platform.locking import lock_path

IMPORT_FILE = (
    "the import, --import PATH or the flow's import_path, is a JSONL file in the public "
    "dataset's schema"
)


def test_an_import_folder_is_refused_before_the_lock_and_leaves_nothing_behind(tmp_path):
    work = tmp_path / "work"
    folder = tmp_path / "items"
    work.mkdir()
    folder.mkdir()
    warehouse = work / "warehouse" / "tsrate.duckdb"
    done = run_tsrate(
        "suite", "reasoning", "run", "--import", str(folder), warehouse=warehouse, cwd=work
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert not lock_path(warehouse).exists()
    assert not warehouse.exists()
    assert list(work.iterdir()) == []  # not even the warehouse's folder
    hint = "the path is a folder where a file is needed: name a file"
    line = f"{folder}: a folder, not a file (hint: {hint}; {IMPORT_FILE})"
    assert done.stderr == f"tsrate: error: {line}\n"  # one line: no "suite started/failed" log
    assert done.stdout == ""


def test_an_unknown_interpretability_dataset_is_refused_before_the_lock(tmp_path):
    """The interpretability suite's unknown dataset, refused inside the flow after the lock
    before, is refused the same way now (in process, with the other refusals of its
    arguments: tests/unit/test_s34_interp_refusals.py)."""
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    argv = ["suite", "interpretability", "run", "--datasets", "2,99", "--no-build"]
    done = run_tsrate(*argv, warehouse=warehouse, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert list(tmp_path.iterdir()) == []  # no warehouse, no lock file, no folder
    line = "unknown dataset(s) [99]: the benchmark has datasets 1-10"
    assert (done.stderr, done.stdout) == (f"tsrate: error: {line}\n", "")
