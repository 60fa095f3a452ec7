"""The lock file's ``eta_seconds`` (what ``tsrate status --format json`` gives monitors) is
the ETA the progress line shows, in whole seconds: rounded up to the unit shown and never 0
while an item still runs. It was ``round(eta, 1)``: 0.0 beside a line saying ``ETA <1s``,
and 1.2 beside ``ETA 2s``."""

from __future__ import annotations

import pytest

from tsrate.platform.locking import writer_lock, writer_status
from tsrate.platform.progress import Progress, remaining, shown_seconds


def _stored_after_first(tmp_path, seconds: float) -> tuple[str, dict]:
    """The line and the lock file's counts after the first of two equal items, finished
    after ``seconds`` of wall time that were all its compute: the ETA is ``seconds``."""
    warehouse = tmp_path / "tsrate.duckdb"
    now, said = [0.0], []
    with writer_lock(warehouse):
        progress = Progress(["naive", "naive"], said.append, tty=False, clock=lambda: now[0])
        now[0] = seconds
        progress.update("naive", "naive MRK P1", seconds)
        assert progress.eta() == pytest.approx(seconds)
        return said[-1], writer_status(warehouse)["progress"]


@pytest.mark.parametrize(
    ("seconds", "shown", "stored"),
    [
        (0.0, "<1s", 1),  # an instant item: the one left is not done in 0 s
        (0.04, "<1s", 1),  # round(0.04, 1) was 0.0
        (0.5, "<1s", 1),
        (1.0, "1s", 1),
        (1.2, "2s", 2),  # round(1.2, 1) was 1.2, under the 2s shown
        (59.01, "1m00s", 60),
        (3600.5, "1h01m", 3660),  # shown in minutes: rounded up to the minute
    ],
)
def test_the_stored_eta_is_the_one_the_line_shows(tmp_path, seconds, shown, stored):
    line, counts = _stored_after_first(tmp_path, seconds)
    assert line == f"[1/2]  50% naive MRK P1 ETA {shown}"
    assert counts == {"done": 1, "total": 2, "eta_seconds": stored}
    assert isinstance(counts["eta_seconds"], int)


@pytest.mark.parametrize("seconds", [0.0, 0.3, 0.999, 1.0, 1.001, 61.1, 3598.2, 3599.2, 7199.0])
def test_shown_seconds_is_what_remaining_writes(seconds):
    whole = shown_seconds(seconds)
    assert whole >= 1 and whole >= seconds
    if seconds >= 1:  # remaining writes these seconds; under one it writes <1s
        assert remaining(seconds) == remaining(whole)
