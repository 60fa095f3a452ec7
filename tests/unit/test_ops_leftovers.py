"""Operations a user meets around a run, at the values they see: the progress share (floored:
100 % only once every item is done), in the run's line and in ``tsrate status``; one log file
per build, however close two builds start."""

from __future__ import annotations

import time

import pytest

from tsrate import cli
from tsrate.platform.locking import writer_lock
from tsrate.platform.progress import Progress, phase


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    return path


@pytest.mark.parametrize(
    ("done", "total", "share"),
    [(199, 200, " 99%"), (1, 200, "  0%"), (2, 3, " 66%"), (1, 3, " 33%"), (200, 200, "100%")],
)
def test_the_progress_share_is_floored_so_100_percent_means_done(done, total, share):
    now = [0.0]
    lines: list[str] = []
    progress = Progress(["naive"] * total, lines.append, tty=False, clock=lambda: now[0])
    now[0] = 10.0
    progress.update_many([("naive", f"naive T{i}", 0.05) for i in range(done)])
    assert lines[-1].startswith(f"[{done}/{total}] {share} naive T{done - 1}")
    assert progress.line("naive last").startswith(f"[{done}/{total}] {share} naive last")


def test_status_shows_a_job_at_199_of_200_as_99_percent(warehouse, capsys):
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        progress = Progress(["naive"] * 200, lambda _: None, tty=False)
        progress.update_many([("naive", "naive AAPL P0", 0.01)] * 199)
        assert cli.main(["status"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["now"].startswith("forecast: [199/200]  99% naive AAPL P0 ETA ")


def test_two_build_logs_started_in_one_instant_get_two_files(tmp_path):
    """Two builds of one run started in the same millisecond (two warehouses in one folder,
    two processes): each gets its own log file, the first left as it was."""
    from tsrate.platform.dbt_runner import new_log_file

    now = 1_796_000_000.25
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now)) + ".250"
    first = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    first.write_text("the first build's lines\n")
    second = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    third = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    assert first.name == f"dbt-build-run-7-{stamp}.log"
    assert second.name == f"dbt-build-run-7-{stamp}-2.log"
    assert third.name == f"dbt-build-run-7-{stamp}-3.log"
    assert first.read_text() == "the first build's lines\n" and second.read_text() == ""
    # what reads a run's logs back (the tests, a user's glob) finds all three
    assert set((tmp_path / "logs").glob("dbt-build-run-7-*.log")) == {first, second, third}
    later = new_log_file(tmp_path / "logs", "dbt-build-run-7", now + 0.001)
    assert later.name == f"dbt-build-run-7-{stamp[:-3]}251.log"
