"""Temporaries of atomic writes: the next write of a path removes the ``.NAME.PID.TAG.partial``
files its writers left when killed outright (and only theirs: a live writer's, another
name's or another pattern's stay)."""

from __future__ import annotations

import os
from pathlib import Path

from tsrate.platform.files import process_running, write_text_atomic


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
