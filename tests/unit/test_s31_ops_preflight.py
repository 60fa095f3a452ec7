"""A real folder where the published ``parquet`` link belongs (a user copied the Parquet
files over it) made the publish fail only when it swapped the link in, after every forecast
and the build. ``tsrate run`` and ``tsrate build`` now refuse it before they start: one line
naming the folder and the fix, nothing written.

Another writer holds the warehouse lock in these tests (a descriptor of this process, not
registered as ours: ``flock`` locks belong to an open file), so a run that got past the
pre-flight check stops at the lock at once, before it writes or starts anything."""

from __future__ import annotations

import pytest

from tests.support import locks
from tests.support.published_link import copied_over, env_warehouse, files, refusal
from tsrate import cli


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    return env_warehouse(tmp_path, monkeypatch)


@pytest.fixture
def another_writer(warehouse):
    with locks.another_writer(warehouse):
        yield


def _refused(capsys, link, kind: str = "folder") -> None:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0] == f"tsrate: error: {refusal(link, kind)}"
    assert "being written" not in err  # refused before it reached the lock


@pytest.mark.usefixtures("another_writer")
def test_run_refuses_a_real_parquet_folder_before_it_starts(warehouse, tmp_path, capsys):
    link = copied_over(warehouse.parent / "published")
    before = files(tmp_path)
    assert cli.main(["run", "--lock-timeout", "0"]) == 2
    _refused(capsys, link)
    assert files(tmp_path) == before  # nothing written, the copied files kept


@pytest.mark.usefixtures("another_writer")
def test_run_refuses_a_real_file_there_too(warehouse, tmp_path, capsys):
    link = copied_over(warehouse.parent / "published", kind="file")
    before = files(tmp_path)
    assert cli.main(["run"]) == 2
    _refused(capsys, link, kind="file")
    assert files(tmp_path) == before


@pytest.mark.usefixtures("another_writer")
def test_the_check_looks_beside_an_overridden_snapshot(warehouse, tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "bi" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_PUBLISHED", str(elsewhere))
    link = copied_over(elsewhere.parent)
    copied_over(warehouse.parent / "published", kind="folder")  # not the one published
    assert cli.main(["run"]) == 2
    _refused(capsys, link)


@pytest.mark.usefixtures("another_writer")
def test_a_link_or_nothing_there_passes_the_check(warehouse, capsys):
    assert cli.main(["run"]) == 2  # nothing published yet: on to the lock
    assert "is being written by another process" in capsys.readouterr().err
    published = warehouse.parent / "published"
    (published / "parquet-runs" / "run-1").mkdir(parents=True)
    (published / "parquet").symlink_to("parquet-runs/run-1", target_is_directory=True)
    assert cli.main(["run"]) == 2  # a previous publication's link: on to the lock
    assert "is being written by another process" in capsys.readouterr().err
    (published / "parquet-runs" / "run-1").rmdir()  # a dangling link is swapped over too
    assert cli.main(["run"]) == 2
    assert "is being written by another process" in capsys.readouterr().err


def test_build_refuses_it_before_it_starts(warehouse, tmp_path, capsys):
    """Before the warehouse is even opened, and (there is no warehouse here) before the
    writer lock: not even the lock's empty file is left."""
    link = copied_over(warehouse.parent / "published")
    before = files(tmp_path)
    assert cli.main(["build"]) == 2
    _refused(capsys, link)
    assert files(tmp_path) == before


def test_build_without_publishing_does_not_need_the_link(warehouse, capsys):
    copied_over(warehouse.parent / "published")
    assert cli.main(["build", "--no-publish"]) == 2  # no warehouse: its own refusal
    err = capsys.readouterr().err
    assert "real folder" not in err and "no warehouse" in err
