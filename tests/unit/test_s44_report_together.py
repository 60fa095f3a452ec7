"""The report and its charts folder appear together or not at all: a write that fails (a
file too large for the disk's limit, the page's path taken by a folder at the final rename)
or is stopped (Ctrl-C) leaves the earlier report and its charts byte for byte, no new charts
folder and no temporaries; a writer killed outright is finished by the next write."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
from pathlib import Path

import pytest

from tsrate.commands.usage import PATH_HINT, PATH_HINTS, path_error_line
from tsrate.html.together import sweep_leftovers, write_page_and_folder
from tsrate.robustness.report.data import Report
from tsrate.robustness.report.render import write_rendered

SPEC = {"mark": "line", "data": {"values": [{"x": 1}]}}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (relative) with its bytes (None for a folder)."""
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def earlier(tmp_path):
    """An earlier report at ``out/report.html`` with two charts and a file of the user's."""
    output = tmp_path / "out" / "report.html"
    write_rendered("old-run", Report("<p>old</p>", {"a": SPEC, "b": SPEC}), output)
    (output.parent / "report-charts" / "notes.txt").write_text("mine")
    return output


def test_a_page_too_large_to_write_keeps_the_earlier_report_and_its_charts(earlier):
    """A real write failure (the file-size limit, as a full disk fails a write) after the
    chart specs fit: the earlier page and charts stay, nothing new or temporary is left."""
    before = tree(earlier.parent)
    big = "<p>" + "x" * 200_000 + "</p>"
    new = Report(big, {"a": {"mark": "bar"}, "c": SPEC})  # specs far below the limit
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, hard))
    try:
        with pytest.raises(OSError) as failure:
            write_rendered("new-run", new, earlier)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert failure.value.errno == 27  # EFBIG
    assert tree(earlier.parent) == before


def test_a_folder_at_the_pages_path_at_the_final_rename_leaves_no_new_charts(tmp_path):
    """The page's path is a folder (not refused earlier: write_rendered is also what `tsrate
    run` calls): the rename over it fails after the charts were ready; an earlier report's
    charts folder there stays byte for byte, and nothing temporary is left."""
    output = tmp_path / "out" / "report.html"
    write_rendered("old-run", Report("<p>old</p>", {"a": SPEC, "b": SPEC}), output)
    output.unlink()
    output.mkdir()
    (output / "kept.txt").write_text("a folder someone made")
    before = tree(tmp_path)
    with pytest.raises(OSError):
        write_rendered("new-run", Report("<p>new</p>", {"c": SPEC}), output)
    assert tree(tmp_path) == before


def test_a_first_report_that_fails_leaves_no_charts_folder(tmp_path):
    output = tmp_path / "report.html"
    output.mkdir()
    with pytest.raises(OSError):
        write_rendered("new-run", Report("<p>new</p>", {"c": SPEC}), output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert list(output.iterdir()) == []


def test_a_stop_while_writing_unwinds_to_the_earlier_report(earlier):
    """Ctrl-C (and SIGTERM, which tsrate turns into the same stop) while the new folder is
    made: the handler's KeyboardInterrupt unwinds, the earlier pair stays whole."""
    before = tree(earlier.parent)
    charts = earlier.parent / "report-charts"

    def interrupted(entry: Path) -> bool:
        signal.raise_signal(signal.SIGINT)  # the default handler: KeyboardInterrupt
        return True

    # Python's own SIGINT handler, even where pytest started with SIGINT ignored (a job
    # started in the background by a shell), so the signal does raise KeyboardInterrupt
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_page_and_folder(earlier, "<p>new</p>", charts, {"c.vl.json": "{}"}, interrupted)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert tree(earlier.parent) == before


def test_a_successful_rewrite_replaces_the_pair_and_leaves_no_temporaries(earlier):
    write_rendered("new-run", Report("<p>new</p>", {"b": {"mark": "bar"}}), earlier)
    charts = earlier.parent / "report-charts"
    assert sorted(p.name for p in earlier.parent.iterdir()) == ["report-charts", "report.html"]
    assert sorted(p.name for p in charts.iterdir()) == ["b.vl.json", "notes.txt"]
    assert json.loads((charts / "b.vl.json").read_text()) == {"mark": "bar"}
    assert earlier.read_text() == "<p>new</p>"


def _dead_pid() -> int:
    """A pid no process can have: above the kernel's largest."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


@pytest.mark.parametrize("stage", ["copying", "old folder aside", "new folder in place", "done"])
def test_the_next_write_finishes_what_a_killed_writer_left(earlier, stage):
    """The files a writer killed outright (SIGKILL) leaves at each step of its commit, laid
    out by hand: the sweep restores the earlier pair while the page was not replaced, and
    keeps the new one (removing the old folder) once it was."""
    folder, pid = earlier.parent / "report-charts", _dead_pid()
    page_temp = earlier.with_name(f".report.html.{pid}.abcd1234.partial")
    staging = folder.with_name(f".report-charts.{pid}.abcd1234.new.partial")
    backup = folder.with_name(f".report-charts.{pid}.abcd1234.old.partial")
    old = tree(earlier.parent)
    page_temp.write_text("<p>new</p>")
    staging.mkdir()
    (staging / "c.vl.json").write_text("{}")
    if stage != "copying":
        folder.rename(backup)
    if stage in ("new folder in place", "done"):
        staging.rename(folder)
    if stage == "done":
        page_temp.replace(earlier)
        new = {k: v for k, v in tree(earlier.parent).items() if not k.startswith(backup.name)}
    assert sweep_leftovers(earlier, folder)
    assert tree(earlier.parent) == (new if stage == "done" else old)


def test_a_running_writers_temporaries_and_other_files_are_left_alone(earlier):
    mine = earlier.with_name(f".report.html.{os.getpid()}.abcd1234.partial")
    mine.write_text("in progress")
    others = [f".report.html.{_dead_pid()}.partial", f".report.html.{_dead_pid()}.a.b.partial",
              ".report.html.x.a.partial", f".report-charts.{_dead_pid()}.a.kept.partial"]  # fmt: skip
    for name in others:  # not names a report writes: someone else's
        (earlier.parent / name).write_text("theirs")
    assert sweep_leftovers(earlier, earlier.parent / "report-charts") == []
    assert mine.read_text() == "in progress"
    assert all((earlier.parent / name).read_text() == "theirs" for name in others)


def test_a_charts_path_taken_by_a_file_is_refused_before_anything_is_written(tmp_path):
    output = tmp_path / "report.html"
    (tmp_path / "report-charts").write_text("not a folder")
    with pytest.raises(FileExistsError):
        write_rendered("run", Report("<p>new</p>", {"c": SPEC}), output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report-charts"]


def test_a_killed_first_report_leaves_no_charts_folder_after_the_next_sweep(tmp_path):
    """Killed after its new folder was in place but before its page was: there was no
    folder before (the marker says so), so the sweep removes the new one."""
    page, folder, pid = tmp_path / "report.html", tmp_path / "report-charts", _dead_pid()
    page.write_text("<p>a page from before, without charts</p>")
    before = tree(tmp_path)
    page.with_name(f".report.html.{pid}.abcd1234.partial").write_text("<p>new</p>")
    folder.with_name(f".report-charts.{pid}.abcd1234.none.partial").mkdir()
    folder.mkdir()
    (folder / "c.vl.json").write_text("{}")
    assert len(sweep_leftovers(page, folder)) == 2
    assert tree(tmp_path) == before


def test_a_failed_write_names_the_users_path_not_a_temporary(earlier):
    """A chart file the file system refuses (a name over its 255 bytes) fails inside the
    temporary folder; the error names the file in the charts folder, and nothing changed."""
    before, long = tree(earlier.parent), "c" * 250
    with pytest.raises(OSError) as failure:
        write_rendered("new-run", Report("<p>new</p>", {long: SPEC}), earlier)
    charts = earlier.parent / "report-charts"
    assert failure.value.filename == str(charts / f"{long}.vl.json")
    assert path_error_line(failure.value) == (
        f"{charts / f'{long}.vl.json'}: {os.strerror(errno.ENAMETOOLONG)} (hint: "
        f"{PATH_HINTS.get(errno.ENAMETOOLONG, PATH_HINT)})"
    )
    assert tree(earlier.parent) == before
