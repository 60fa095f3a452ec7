"""Temporaries of atomic writes: the next write of a path removes the ``.NAME.PID.TAG.partial``
files its writers left when killed outright (and only theirs: a live writer's, another
name's or another pattern's stay), and a name near the file system's 255 bytes still gets a
temporary that fits (a shortened, hashed NAME part that the sweep recognises)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tsrate.html.together import sweep_leftovers, write_page_and_folder
from tsrate.platform.files import (
    FULL_STEM_BYTES,
    NAME_MAX_BYTES,
    SHORT_STEM_BYTES,
    partial_path,
    partial_stem,
    process_running,
    write_text_atomic,
)


def dead_pid() -> int:
    """A pid no process can have: above the kernel's largest."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_the_next_write_removes_a_dead_writers_leftover_and_nothing_else(tmp_path):
    """A suite page's leftovers laid out by hand: the dead writer's temporary goes; this
    (live) process's, other names', other patterns' and a folder of that shape stay."""
    page, dead, live = tmp_path / "suite.html", dead_pid(), os.getpid()
    page.write_text("old")
    stale = tmp_path / f".suite.html.{dead}.0badc0de.partial"
    kept = [
        f".suite.html.{live}.abcd1234.partial",  # a writer still running (this process)
        f".suite.html.{dead}.partial",  # no tag: not a name write_text_atomic makes
        f".suite.html.{dead}.ABCD1234.partial",  # not lowercase hex
        f".suite.html.{dead}.abcd12345.partial",  # 9 digits
        f".suite.html.{dead}.abcd1234.new.partial",  # a kind: a folder's, not a file's
        f".suite.htmlx.{dead}.abcd1234.partial",  # another name
        f".other.html.{dead}.abcd1234.partial",
        f"suite.html.{dead}.abcd1234.partial",  # not hidden
    ]
    for name in [stale.name, *kept]:
        (tmp_path / name).write_text("left")
    folder = tmp_path / f".suite.html.{dead}.feedf00d.partial"
    folder.mkdir()  # the right shape, but a folder: not a file a writer left
    assert not process_running(dead) and process_running(live)
    write_text_atomic(page, "new")
    assert page.read_text() == "new"
    assert names(tmp_path) == sorted([page.name, folder.name, *kept])
    assert all((tmp_path / name).read_text() == "left" for name in kept)


def test_a_page_written_with_its_folder_is_left_to_that_pages_own_sweep(tmp_path):
    """A dead writer's page temporary whose folder temporaries still exist (a report and its
    charts killed mid-commit): removing the page's alone would make the report's sweep keep
    the new charts beside the old page, so write_text_atomic leaves both."""
    page, dead = tmp_path / "report.html", dead_pid()
    page_temp = tmp_path / f".report.html.{dead}.abcd1234.partial"
    backup = tmp_path / f".report-charts.{dead}.abcd1234.old.partial"
    page_temp.write_text("<p>new</p>")
    backup.mkdir()
    write_text_atomic(page, "<p>plain</p>")
    assert names(tmp_path) == sorted([page.name, page_temp.name, backup.name])


@pytest.mark.parametrize("name", ["n" * 250, "é" * 125, "x" * 240 + ".html", "a" * 255])
def test_a_name_near_255_bytes_is_written_and_leaves_no_temporary(tmp_path, name):
    assert len(os.fsencode(name)) >= 245
    path = write_text_atomic(tmp_path / name, "whole")
    assert path.read_text() == "whole" and names(tmp_path) == [name]
    write_text_atomic(path, "again")  # over an existing file too
    assert path.read_text() == "again" and names(tmp_path) == [name]


def test_a_long_names_stale_temporary_is_recognised_and_removed(tmp_path):
    path, dead = tmp_path / ("n" * 250), dead_pid()
    stale = partial_path(path, f"{dead}.abcd1234")
    live = partial_path(path, f"{os.getpid()}.abcd1234")
    other = partial_path(tmp_path / ("n" * 249 + "m"), f"{dead}.abcd1234")
    for temporary in (stale, live, other):
        assert len(os.fsencode(temporary.name)) <= NAME_MAX_BYTES
        temporary.write_text("left")
    write_text_atomic(path, "whole")
    assert names(tmp_path) == sorted([path.name, live.name, other.name])


def test_the_stem_is_the_name_up_to_its_limit_then_a_fixed_length_hash():
    short = "r" * FULL_STEM_BYTES
    assert partial_stem(short) == short and partial_stem("suite.html") == "suite.html"
    for name in ("r" * (FULL_STEM_BYTES + 1), "é" * 120, "x" * 240 + ".html", "€" * 85):
        stem = partial_stem(name)
        assert len(os.fsencode(stem)) == SHORT_STEM_BYTES  # never a name used whole
        assert name.startswith(stem[:60]) and stem == partial_stem(name)  # its head
    assert partial_stem("a" * 250) != partial_stem("a" * 249 + "b")  # the hash tells them apart
    longest = partial_path(Path("/x") / ("a" * 255), "4294967295.abcd1234", "none")
    assert len(os.fsencode(longest.name)) == NAME_MAX_BYTES


def test_a_report_and_charts_folder_with_long_names_are_written_and_swept(tmp_path):
    """The report's page and folder temporaries shorten the same way: a write succeeds and
    leaves none, and a killed first write's long temporaries are finished by the sweep."""
    page, folder = tmp_path / ("p" * 245 + ".html"), tmp_path / ("p" * 240 + "-charts")
    write_page_and_folder(page, "<p>one</p>", folder, {"a.vl.json": "{}"}, lambda e: True)
    assert names(tmp_path) == sorted([page.name, folder.name])
    page.write_text("<p>a page from before</p>")
    (folder / "a.vl.json").unlink()
    folder.rmdir()
    token = f"{dead_pid()}.abcd1234"
    partial_path(page, token).write_text("<p>new</p>")  # killed before its page was in place
    partial_path(folder, token, "none").mkdir()
    folder.mkdir()
    assert len(sweep_leftovers(page, folder)) == 2
    assert names(tmp_path) == [page.name] and page.read_text() == "<p>a page from before</p>"


def test_a_name_over_255_bytes_still_fails_with_the_file_systems_error(tmp_path):
    with pytest.raises(OSError) as failure:
        write_text_atomic(tmp_path / ("n" * 256), "text")
    assert failure.value.errno == errno.ENAMETOOLONG and names(tmp_path) == []
