"""The crash-test hook (tsrate.platform.stages) and whole-file writes
(tsrate.platform.files) at what the older tests left free: which stage a pause is for, the
dbt line hook only when the build stage is asked for and only on a finished model, the
marker file and the stderr line of a pause, this process's children read from /proc, and an
atomic write into folders that do not exist yet. (Freezing the children at the build stage,
which needs a real child process: tests/integration/test_sweep9_platform_stages.py.)

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json).
"""

from __future__ import annotations

import os
from pathlib import Path

from tsrate.platform.files import write_text_atomic
from tsrate.platform.stages import _child_pids, dbt_line_hook, pause_point, pause_requested


def test_a_pause_is_requested_for_the_named_stage_only(monkeypatch):
    monkeypatch.delenv("TSRATE_TEST_PAUSE_AT", raising=False)
    assert not pause_requested("build")
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "build")
    assert pause_requested("build")
    assert not pause_requested("publish")


def test_the_dbt_line_hook_exists_only_when_the_build_stage_is_asked_for(monkeypatch):
    monkeypatch.delenv("TSRATE_TEST_PAUSE_AT", raising=False)
    assert dbt_line_hook() is None
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "publish")
    assert dbt_line_hook() is None
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "build")
    assert callable(dbt_line_hook())


def test_a_pause_writes_its_marker_and_says_so_on_stderr(monkeypatch, tmp_path, capsys):
    marker = tmp_path / "paused"
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "publish")
    monkeypatch.setenv("TSRATE_TEST_PAUSE_FILE", str(marker))
    monkeypatch.setenv("TSRATE_TEST_PAUSE_SECONDS", "0")
    pause_point("ingest")  # another stage: nothing
    assert not marker.exists() and capsys.readouterr().err == ""
    pause_point("publish")
    assert marker.read_text() == f"publish {os.getpid()}\n"
    assert capsys.readouterr().err == f"TSRATE_TEST_PAUSED publish pid={os.getpid()}\n"


def test_the_build_hook_does_not_pause_before_a_model_has_finished(monkeypatch, tmp_path, capsys):
    """(At the first finished model it freezes this process's children: only in
    tests/integration/test_sweep9_platform_stages.py, with a child of a child.)"""
    marker = tmp_path / "paused"
    monkeypatch.setenv("TSRATE_TEST_PAUSE_AT", "build")
    monkeypatch.setenv("TSRATE_TEST_PAUSE_FILE", str(marker))
    monkeypatch.setenv("TSRATE_TEST_PAUSE_SECONDS", "0")
    hook = dbt_line_hook()
    hook("1 of 3 START sql table model main.stg_prices")
    hook("Running with dbt=1.10")
    assert not marker.exists() and capsys.readouterr().err == ""


def test_child_pids_are_read_from_proc():
    """The children listed in /proc/<pid>/task/*/children, read here independently."""
    expected = []
    tasks = Path("/proc", str(os.getpid()), "task")
    for task in sorted(tasks.iterdir()) if tasks.is_dir() else []:
        children = task / "children"
        if children.exists():
            expected += [int(pid) for pid in children.read_text().split()]
    assert sorted(_child_pids()) == sorted(expected)


def test_an_atomic_write_makes_every_missing_folder(tmp_path):
    path = write_text_atomic(tmp_path / "a" / "b" / "c" / "page.html", "whole")
    assert path.read_text() == "whole"
    assert os.listdir(path.parent) == ["page.html"]
