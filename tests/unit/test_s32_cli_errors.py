"""What a newcomer's mistakes at the command line print: one line ``tsrate: error: ...``
naming the problem (and the sub-command), with a hint, exit status 2.

Found by a fresh-clone trial: argparse's usage errors were three lines naming ``tsrate``
for an option of ``tsrate run``; bad output paths ended in "unexpected
NotADirectoryError ... report it" (exit 1); a CSV given as a snapshot quoted DuckDB's
"Cannot launch in-memory database in read-only mode!"; a prediction file missing one
horizon step made a 6 KB line; ``tsrate studies`` printed "1 runs"."""

from __future__ import annotations

import difflib
import errno
import os

import duckdb
import pandas as pd
import pytest

from tests.support.prediction_grid import SMALL, grid_rows, validate
from tsrate import cli
from tsrate.commands.usage import closest
from tsrate.robustness.blackbox.validation import MAX_ALIKE, ImportValidationError
from tsrate.robustness.report.data import Report, load_report_data
from tsrate.robustness.report.render import write_rendered


def usage_error(argv: list[str], capsys) -> str:
    """``tsrate ARGV``'s usage error: its one stderr line (exit 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert "usage:" not in err
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "--tikers", "AAPL"], "tsrate run: unrecognized argument --tikers "
         "(did you mean --tickers?); see 'tsrate run --help'"),
        (["run", "--tikers=AAPL"], "tsrate run: unrecognized argument --tikers "
         "(did you mean --tickers?); see 'tsrate run --help'"),
        (["qurey"], "invalid choice: 'qurey' (did you mean query?); see 'tsrate --help'"),
        (["query", "select 1", "--format", "xml"], "tsrate query: argument --format: invalid "
         "choice: 'xml' (choose from table, csv, json); see 'tsrate query --help'"),
        (["query"], "tsrate query: the following arguments are required: SQL; "
         "see 'tsrate query --help'"),
        (["runs", "extra"], "tsrate runs: unexpected argument 'extra'; see 'tsrate runs --help'"),
        (["--nope", "runs"], "unrecognized argument --nope; see 'tsrate --help'"),
        (["run", "--zzzzzz"], "tsrate run: unrecognized argument --zzzzzz; "
         "see 'tsrate run --help'"),
        (["suite", "understandin", "run"], "tsrate suite: invalid choice: 'understandin' "
         "(did you mean understanding?); see 'tsrate suite --help'"),
        (["suite", "reasoning", "fly"], "tsrate suite reasoning: invalid choice: 'fly' "
         "(choose from run, build, report); see 'tsrate suite reasoning --help'"),
        (["suite", "reasoning", "run", "--scenaros", "5"], "tsrate suite reasoning run: "
         "unrecognized argument --scenaros (did you mean --scenarios?); "
         "see 'tsrate suite reasoning run --help'"),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_line_naming_the_command_and_a_hint(argv, line, capsys):
    assert usage_error(argv, capsys) == f"tsrate: error: {line}"


def test_an_unknown_command_far_from_every_command_lists_none(capsys):
    """Twenty commands are too many for the line: --help lists them."""
    line = usage_error(["xyzzy"], capsys)
    assert line == "tsrate: error: invalid choice: 'xyzzy'; see 'tsrate --help'"


def test_the_suggestions_are_difflibs_closest_nearly_as_close_as_the_best():
    options = ["--tickers", "--workers", "--start", "--end", "--force"]
    assert closest("--tikers", options) == ["--tickers"]  # --workers: 0.71 against 0.94
    words = ["runs", "run", "ruins", "query"]
    # an independent computation: difflib's ratios, the best and those within 0.1 of it
    ratios = {w: difflib.SequenceMatcher(None, "runz", w).ratio() for w in words}
    best = max(ratios.values())
    expected = [w for w in sorted(words, key=lambda w: -ratios[w]) if ratios[w] >= best - 0.1]
    assert closest("runz", words) == expected == ["run"]  # runs: 0.75, under 0.86 - 0.1
    assert closest("zzzz", words) == []


def test_the_help_says_build_publishes(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    build = next(line for line in capsys.readouterr().out.splitlines() if "tsrate build" in line)
    assert "publish" in build and "newest run" not in build


def test_report_help_says_its_folder_is_made(capsys):
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    assert "its folder created" in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def warehouse_env(tmp_path, monkeypatch):
    """An empty warehouse folder as TSRATE_WAREHOUSE's, and a plain file ``f.csv``."""
    (tmp_path / "wh").mkdir()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    monkeypatch.delenv("TSRATE_DEBUG", raising=False)
    (tmp_path / "f.csv").write_text("ticker,date,close\n")
    return tmp_path


def error_line(argv: list[str], capsys) -> str:
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err + out, err
    assert err.startswith("tsrate: error: ")
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["export", "{f}/sub"], "{f}/sub"),
        (["export", "{f}"], "{f}"),
        (["export-inputs", "{f}/sub"], "{f}/sub"),
        (["docs", "--output", "{f}/d"], "{f}/d"),
        (["report", "--output", "{f}/r.html"], "{f}"),
    ],
)
def test_an_output_path_under_a_file_is_named_with_the_os_reason(
    warehouse_env, capsys, argv, named
):
    f = warehouse_env / "f.csv"
    argv = [arg.format(f=f) for arg in argv]
    line = error_line(argv, capsys)
    reason = os.strerror(errno.ENOTDIR)
    assert line == (
        f"tsrate: error: {named.format(f=f)}: {reason} (hint: a part of the path is a file "
        "where a folder is needed: choose another path)"
    )
    assert not (warehouse_env / "wh" / "docs").exists()


def test_an_os_error_with_a_path_is_a_usage_error_not_an_unexpected_one(tmp_path):
    """The real error an export under a file raises, through the CLI's error mapping."""
    (tmp_path / "f.csv").write_text("x")
    target = tmp_path / "f.csv" / "sub"
    with pytest.raises(OSError) as caught:
        target.mkdir(parents=True)
    line, status = cli._error_line(caught.value)
    assert status == 2
    assert line.startswith(f"{target}: {os.strerror(caught.value.errno)} (hint: ")
    missing = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "/no/such")
    assert cli._error_line(missing) == (
        f"/no/such: {os.strerror(errno.ENOENT)} (hint: check the path's spelling; the folders "
        "above it must exist)",
        2,
    )
    other = OSError(errno.EIO, os.strerror(errno.EIO), "/disk")
    assert cli._error_line(other)[0].endswith("(hint: check the path, and that you may read "
                                              "and write there)")  # fmt: skip
    assert cli._error_line(OSError("no path"))[1] == 1  # without a path: unexpected, still


def test_an_unwritable_output_folder_is_refused_before_any_work(warehouse_env, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes everywhere")
    locked = warehouse_env / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = error_line(["export", str(locked / "out")], capsys)
    finally:
        locked.chmod(0o700)
    assert line.startswith(f"tsrate: error: {locked}: {os.strerror(errno.EACCES)} (hint: ")


def test_the_report_makes_its_own_folder(tmp_path):
    """--help says so; what the CLI's write does with a new folder."""
    output = tmp_path / "new" / "dir" / "r.html"
    result = write_rendered("run-1", Report("<html></html>", {}), output)
    assert result.path == output and output.read_text() == "<html></html>"


@pytest.mark.parametrize("content", [b"ticker,date,close\nAAPL,2022-01-03,10\n", b"DUCK", b""])
def test_a_snapshot_that_is_not_a_duckdb_file_says_so(tmp_path, capsys, content):
    path = tmp_path / "prices.csv"
    path.write_bytes(content)
    line = error_line(["report", "--snapshot", str(path), "--output", str(tmp_path / "r.html")],
                      capsys)  # fmt: skip
    assert line == (
        f"tsrate: error: {path} cannot be opened as a DuckDB snapshot: it is not a DuckDB file "
        "(no DuckDB header in its first bytes); give --snapshot a published tsrate.duckdb "
        "(`tsrate run` writes one)"
    )
    assert "in-memory" not in line and not (tmp_path / "r.html").exists()


def test_a_duckdb_file_passes_the_header_check(tmp_path):
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select 1 as x")
    con.close()
    with pytest.raises(Exception, match="is not a complete tsrate snapshot"):
        load_report_data(path)


def _drop(frame, *gaps):
    """``frame`` without the (ticker, perturbation, window end, step) forecasts of ``gaps``."""
    keep = pd.Series(True, index=frame.index)
    for ticker, perturbation, end, step in gaps:
        keep &= ~(
            frame["ticker"].eq(ticker)
            & frame["perturbation_id"].eq(perturbation)
            & frame["window_end_date"].eq(end)
            & frame["horizon_step"].eq(step)
        )
    return frame[keep]


def test_many_incomplete_grids_are_quoted_three_then_counted(tmp_path, capsys):
    """Five gaps in 2 tickers x 3 perturbations (AAPL P0 and JPM P0 lack the same forecast:
    one problem names both)."""
    frame = _drop(
        grid_rows(perturbations=("P0", "P1", "P2")),
        ("AAPL", "P0", "2022-10-05", 1),
        ("AAPL", "P1", "2022-10-05", 2),
        ("AAPL", "P2", "2022-10-05", 3),
        ("JPM", "P0", "2022-10-05", 1),
        ("JPM", "P1", "2022-10-07", 2),
        ("JPM", "P2", "2022-10-07", 3),
    )
    with pytest.raises(ImportValidationError) as caught:
        validate(tmp_path, frame, accepted=("P0", "P1", "P2"))
    error = caught.value
    assert len(error.problems) == 5  # every gap is kept for callers
    text = str(error)
    assert text.count(": incomplete grid") == MAX_ALIKE == 3
    assert text == (
        f"{tmp_path / 'p.csv'}: rejected, nothing was stored: AAPL P0 and JPM P0: incomplete "
        "grid, 2 of 30 forecasts (windows × steps 1..3) missing, in 2 of 10 windows: step 1 of "
        "2022-10-05; AAPL P1: incomplete grid, 1 of 24 forecasts (windows × steps 1..3) "
        "missing, in 1 of 8 windows: step 2 of 2022-10-05; AAPL P2: incomplete grid, 1 of 24 "
        "forecasts (windows × steps 1..3) missing, in 1 of 8 windows: step 3 of 2022-10-05; "
        "and 2 more incomplete grids"
    )
    assert error.hint == (
        f"every (ticker, perturbation) in the file needs a forecast for horizon_step 1..{SMALL.horizon} "
        "of every window of the study; `tsrate export-inputs` writes those windows and a manifest"
    )
    line, status = cli._error_line(error)
    assert status == 2 and line == f"{text} (hint: {error.hint})"


def test_three_incomplete_grids_are_all_quoted(tmp_path):
    frame = _drop(
        grid_rows(tickers=("AAPL",), perturbations=("P0", "P1", "P2")),
        ("AAPL", "P0", "2022-10-05", 1),
        ("AAPL", "P1", "2022-10-05", 2),
        ("AAPL", "P2", "2022-10-05", 3),
    )
    with pytest.raises(ImportValidationError) as caught:
        validate(tmp_path, frame, accepted=("P0", "P1", "P2"))
    text = str(caught.value)
    assert text.count("incomplete grid") == 3 and "more" not in text


def test_other_import_problems_are_all_quoted():
    error = ImportValidationError("p.csv", [f"problem {i}" for i in range(5)])
    assert str(error) == (
        "p.csv: rejected, nothing was stored: problem 0; problem 1; problem 2; problem 3; problem 4"
    )
    assert error.hint is None


def test_a_folder_as_the_warehouse_names_the_file_to_give(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path))
    line = error_line(["runs"], capsys)
    assert line == (
        f"tsrate: error: TSRATE_WAREHOUSE names a folder, {tmp_path}, not a DuckDB file "
        f"(hint: set it to the warehouse's file, e.g. {tmp_path / 'tsrate.duckdb'})"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "{missing}"],
        ["import", "{missing}", "--system", "x"],
        ["import-predictions", "{missing}", "--system", "x", "--manifest", "m"],
    ],
)
def test_a_missing_input_file_is_named_before_the_writer_lock(warehouse_env, capsys, argv):
    from tsrate.platform.locking import writer_lock

    missing = warehouse_env / "nonexistent.csv"
    argv = [arg.format(missing=missing) for arg in argv]
    with writer_lock(warehouse_env / "wh" / "tsrate.duckdb", 0.0):  # another writer
        line = error_line(argv, capsys)
    assert line == (
        f"tsrate: error: {missing}: {os.strerror(errno.ENOENT)} (hint: check the path's "
        "spelling; the folders above it must exist)"
    )


def test_studies_count_one_run_as_one_run():
    from tests.support.old_runs import STUDY, insert_run, study_with
    from tests.support.warehouses import OLD_RUNS_DDL
    from tsrate.robustness import studies

    con = duckdb.connect()
    try:
        con.execute(OLD_RUNS_DDL)
        insert_run(con, "r1", STUDY, "2026-01-01")
        insert_run(con, "r2", study_with(stride=2), "2026-01-02")
        insert_run(con, "r3", study_with(stride=2), "2026-01-03")
        studies.ensure_studies(con)
        lines = studies.describe_studies(con)
    finally:
        con.close()
    # each study's first line ends with its runs; its window (the stride) on the next
    one = lines[next(i for i, line in enumerate(lines) if "stride=1" in line) - 1]
    two = lines[next(i for i, line in enumerate(lines) if "stride=2" in line) - 1]
    assert one.endswith("  1 run, last 2026-01-01 00:00"), one
    assert two.endswith("  2 runs, last 2026-01-03 00:00"), two
