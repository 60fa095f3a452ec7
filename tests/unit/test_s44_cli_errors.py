"""What a CLI probe found at the edges of ``export-inputs``, ``report --output`` and the export
manifest, run through the real CLI (``tsrate.cli.main``) on real files:

- ``export-inputs DIR --images -1`` printed "exporting ..." before its error: the parser
  refuses it now, one line, before any output, and writes nothing;
- ``report --output FOLDER``'s error named the internal ``.NAME.<...>.partial`` file: a
  folder now gets ``report.html`` inside it, and a rename from a temporary file names only
  its destination;
- an edited manifest's windows were refused without the file, the field or a hint;
- a manifest's top-level ``horizon`` (and the other copies of study settings) was ignored in
  favour of ``study.horizon``: a copy that disagrees is refused, naming both values;
- the full-disk error numbers are one module-level name in ``tsrate.cli``.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.support.import_study import STUDY
from tsrate import cli
from tsrate.commands.reading import report_output
from tsrate.commands.usage import is_staging_name, path_error_line
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.export import EXPORT_AGAIN, export_inputs

HINT = f"(hint: {EXPORT_AGAIN})"
#: What an import stores: a refused manifest leaves all three empty.
STORED = ("runs", "forecasts", "forecast_partitions")


def error_line(argv: list[str], capsys) -> str:
    """``tsrate ARGV``'s one stderr line, exit 2, nothing on stdout."""
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 2, err
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("tsrate: error: "), err
    return err.rstrip("\n")


# -- export-inputs --images -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("-1", "must be 0 or more (0 writes none), got -1"),
        ("x", "expected a whole number, got 'x'"),
    ],
)
def test_images_below_zero_is_refused_before_any_output(
    tmp_path, monkeypatch, capsys, value, reason
):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    folder = tmp_path / "out"
    with pytest.raises(SystemExit) as stopped:
        cli.main(["export-inputs", str(folder), "--images", value])
    out, err = capsys.readouterr()
    assert stopped.value.code == 2 and out == ""
    assert err == (
        f"tsrate: error: tsrate export-inputs: argument --images: {reason}; "
        "see 'tsrate export-inputs --help'\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no folder, no warehouse


# -- report --output --------------------------------------------------------------------------


def test_a_folder_as_the_report_output_gets_report_html_inside(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_REPORT", raising=False)
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    (tmp_path / "out").mkdir()
    assert report_output(str(tmp_path / "out"), snapshot) == tmp_path / "out" / "report.html"
    new = f"{tmp_path / 'new'}{os.sep}"  # a path ending in a separator: a folder to make
    assert report_output(new, snapshot) == tmp_path / "new" / "report.html"
    assert report_output(str(tmp_path / "r.html"), snapshot) == tmp_path / "r.html"
    assert report_output(None, snapshot) == tmp_path / "published" / "report.html"
    monkeypatch.setenv("TSRATE_REPORT", str(tmp_path / "out"))  # the variable alike
    assert report_output(None, snapshot) == tmp_path / "out" / "report.html"


def test_a_rename_from_a_temporary_file_names_only_its_destination(tmp_path):
    """The real OSError a rename of a temporary file over a folder raises."""
    target = tmp_path / "report.html"
    target.mkdir()
    partial = tmp_path / f".report.html.{os.getpid()}.1a2b3c4d.partial"
    partial.write_text("x")
    with pytest.raises(OSError) as caught:
        os.replace(partial, target)
    assert caught.value.filename2 is not None
    assert path_error_line(caught.value) == (
        f"{target}: {os.strerror(errno.EISDIR)} (hint: the path is a folder where a file is "
        "needed: name a file)"
    )
    assert is_staging_name(".tsrate.duckdb.run-1.partial")
    assert is_staging_name("/x/.export.partial-1a2b3c4d")
    assert not is_staging_name("/x/report.partial") and not is_staging_name(".hidden.html")
    other = OSError(errno.EXDEV, os.strerror(errno.EXDEV), "/a/b.csv", None, "/c/d.csv")
    assert path_error_line(other).startswith("/a/b.csv and /c/d.csv: ")


def test_report_html_that_is_a_folder_is_refused_before_anything_is_written(tmp_path, capsys):
    """``--output FOLDER`` whose ``report.html`` is itself a folder: one line naming it,
    before the snapshot is read and before the chart specs are written."""
    (tmp_path / "out" / "report.html").mkdir(parents=True)
    snapshot = tmp_path / "missing.duckdb"
    line = error_line(["report", "--snapshot", str(snapshot), "--output", str(tmp_path / "out")],
                      capsys)  # fmt: skip
    assert line == (
        f"tsrate: error: {tmp_path / 'out' / 'report.html'}: {os.strerror(errno.EISDIR)} "
        "(hint: the path is a folder where a file is needed: name a file)"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html"]


# -- the export manifest -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def export(warehouse, tmp_path_factory) -> Path:
    """An export of the import study from the shared prices-only warehouse."""
    folder = tmp_path_factory.mktemp("s44-export") / "export"
    with connect(warehouse) as con:
        export_inputs(con, STUDY, folder)
    return folder


def edited(export: Path, tmp_path: Path, edit) -> Path:  # noqa: ANN001 - a callable
    folder = tmp_path / "edited"
    shutil.copytree(export, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return folder


def import_line(warehouse: Path, folder: Path, tmp_path: Path, monkeypatch, capsys) -> str:
    """``tsrate import-predictions`` of a (never read) file against ``folder``'s manifest: its
    error line; the warehouse stores nothing."""
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_DEBUG", raising=False)
    predictions = tmp_path / "p.csv"
    predictions.write_text("ticker,window_end_date,perturbation_id,horizon_step,forecast\n")
    argv = ["import-predictions", str(predictions), "--system", "naive", "--manifest"]
    line = error_line([*argv, str(folder), "--no-build"], capsys)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = [con.execute(f"select count(*) from raw.{t}").fetchone()[0] for t in STORED]
    assert stored == [0, 0, 0], stored
    return line


def test_an_edited_window_names_the_manifest_the_field_and_a_hint(
    warehouse, export, tmp_path, monkeypatch, capsys
):
    dates = json.loads((export / "manifest.json").read_text())["tickers"]["JPM"]["window_end_dates"]

    def shift(manifest: dict) -> None:
        manifest["tickers"]["JPM"]["window_end_dates"][1] = "2022-01-03"

    folder = edited(export, tmp_path, shift)
    line = import_line(warehouse, folder, tmp_path, monkeypatch, capsys)
    assert line == (
        f"tsrate: error: {folder / 'manifest.json'}: tickers.JPM.window_end_dates differ from "
        "the windows the manifest's study cuts from the stored prices (date 2 is 2022-01-03, "
        f"the study's is {dates[1]}); the manifest or its study's window settings were edited "
        f"{HINT}"
    )
    dropped = edited(
        export, tmp_path / "2", lambda m: m["tickers"]["AAPL"]["window_end_dates"].pop()
    )
    line = import_line(warehouse, dropped / "manifest.json", tmp_path, monkeypatch, capsys)
    assert f"{dropped / 'manifest.json'}: tickers.AAPL.window_end_dates differ" in line
    assert f"({len(dates) - 1} dates listed, the study cuts {len(dates)})" in line
    assert line.endswith(HINT)


def test_edited_prices_hash_names_the_manifest_and_the_field(
    warehouse, export, tmp_path, monkeypatch, capsys
):
    def zero(manifest: dict) -> None:
        manifest["tickers"]["AAPL"]["prices_sha256"] = "0" * 64

    folder = edited(export, tmp_path, zero)
    line = import_line(warehouse, folder, tmp_path, monkeypatch, capsys)
    assert line.startswith(
        f"tsrate: error: {folder / 'manifest.json'}: the stored prices of AAPL changed since "
        "the export, or the manifest's study period was edited (tickers.AAPL.prices_sha256 "
        "differs): "
    )
    assert line.endswith("(hint: export again with `tsrate export-inputs` and rerun the model "
                         "on the new inputs)")  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value", "shown", "study_value"),
    [
        ("horizon", 3, "3", "5"),
        ("horizon", "5", '"5"', "5"),  # text, not the number: still not study.horizon
        ("context_length", 10, "10", "30"),
        ("perturbations", ["P0"], '["P0"]', '["P0", "P1", "P2", "P3"]'),
    ],
)
def test_a_top_level_copy_that_disagrees_with_the_study_is_refused(
    warehouse, export, tmp_path, monkeypatch, capsys, key, value, shown, study_value
):
    folder = edited(export, tmp_path, lambda manifest: manifest.update({key: value}))
    line = import_line(warehouse, folder, tmp_path, monkeypatch, capsys)
    assert line == (
        f"tsrate: error: {folder / 'manifest.json'}: {key} is {shown} but study.{key} is "
        f"{study_value}: the import would use study.{key}, so the two must agree {HINT}"
    )


def test_the_exported_copies_agree_with_the_study(export):
    manifest = json.loads((export / "manifest.json").read_text())
    assert manifest["horizon"] == manifest["study"]["horizon"] == STUDY.horizon
    assert manifest["context_length"] == STUDY.context_length
    assert manifest["perturbations"] == list(STUDY.perturbations)


# -- tsrate.cli ---------------------------------------------------------------------------------


def test_the_full_disk_error_numbers_are_written_once():
    assert cli.DISK_FULL_ERRNOS == (errno.ENOSPC, errno.EDQUOT)
    source = Path(cli.__file__).read_text()
    assert source.count("errno.ENOSPC") == 1 and source.count("errno.EDQUOT") == 1
    assert source.count("in DISK_FULL_ERRNOS") == 2  # the error line and the stdout guard
    line, status = cli._error_line(OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)))
    assert status == 2 and line.startswith("out of disk space: ")
