"""Operations a user meets around a run, at the values they see: the progress share (floored:
100 % only once every item is done), in the run's line and in ``tsrate status``."""

from __future__ import annotations

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
