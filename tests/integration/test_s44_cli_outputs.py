"""The real ``tsrate`` in a child process on a warehouse a tiny ``tsrate run`` built: a refused
``export-inputs`` prints nothing before its one error line (it printed "exporting the study
of the newest run" first) and writes nothing; ``report --output FOLDER`` writes
``FOLDER/report.html`` (its error named the internal ``.FOLDER.<...>.partial`` file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli_child import run_tsrate

pytestmark = pytest.mark.slow

TINY_RUN = ["run", "--tickers", "AAPL", "--systems", "naive,random", "--perturbations", "P0,P1",
            "--stride", "40", "--workers", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The warehouse of a tiny finished run (a study, a published snapshot)."""
    root = tmp_path_factory.mktemp("s44-cli")
    warehouse = root / "wh" / "tsrate.duckdb"
    done = run_tsrate(*TINY_RUN, warehouse=warehouse, cwd=root)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return warehouse


def refused(done) -> str:  # noqa: ANN001 - a CompletedProcess
    """The one error line of a refused command that printed nothing else."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "", done.stdout
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("tsrate: error: ")
    return done.stderr.rstrip("\n")


def test_export_inputs_into_a_used_folder_is_refused_before_any_output(built, tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    line = refused(run_tsrate("export-inputs", str(used), warehouse=built, cwd=tmp_path))
    assert line == (
        f"tsrate: error: {used} exists and is not an empty folder (hint: give a new or empty "
        "folder; an export never writes into another one)"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["used"]
    assert [p.name for p in used.iterdir()] == ["notes.txt"]
    line = refused(
        run_tsrate("export-inputs", str(tmp_path / "new"), "--images", "-1", warehouse=built,
                   cwd=tmp_path)
    )  # fmt: skip
    assert "argument --images: must be 0 or more" in line
    assert [p.name for p in tmp_path.iterdir()] == ["used"]


def test_report_into_an_existing_folder_writes_report_html_there(built, tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    done = run_tsrate("report", "--output", str(folder), warehouse=built, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"written to {folder / 'report.html'} " in done.stdout
    assert (folder / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert sorted(p.name for p in folder.iterdir()) == ["report-charts", "report.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["reports"]  # no partial, no charts beside
