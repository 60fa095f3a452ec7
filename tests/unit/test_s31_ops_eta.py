"""The forecast's progress line never says ``ETA 0s`` while an item still runs: the ETA is
rounded up to the unit it is shown in, and under a second it reads ``<1s``."""

from __future__ import annotations

import pytest

from tsrate.platform.progress import Progress, remaining


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _line_after_first(seconds: float) -> str:
    """The line of the first of two equal items, finished after ``seconds`` of wall time
    that were all its compute: the ETA of the one left is ``seconds``."""
    clock, said = Clock(), []
    progress = Progress(["naive", "naive"], said.append, tty=False, clock=clock)
    clock.now = seconds
    progress.update("naive", "naive MRK P1", seconds)
    assert progress.eta() == pytest.approx(seconds)
    return said[-1]


def test_the_last_item_still_running_is_not_eta_0s():
    line = _line_after_first(0.4)
    assert line == "[1/2]  50% naive MRK P1 ETA <1s"


def test_the_eta_is_rounded_up_not_to_the_nearest_second():
    assert _line_after_first(1.2).endswith("ETA 2s")
    assert _line_after_first(61.1).endswith("ETA 1m02s")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "<1s"),
        (0.999, "<1s"),
        (1.0, "1s"),
        (1.001, "2s"),
        (59.5, "1m00s"),
        (119.0, "1m59s"),
        (3598.2, "59m59s"),  # the last second shown in seconds
        (3599.2, "1h00m"),
        (3600.0, "1h00m"),
        (3600.5, "1h01m"),  # minutes shown: rounded up to the next minute
        (3661.0, "1h02m"),
        (7199.0, "2h00m"),
    ],
)
def test_remaining_rounds_up_to_the_unit_shown(seconds, text):
    assert remaining(seconds) == text


def test_no_eta_once_nothing_is_pending():
    clock, said = Clock(), []
    progress = Progress(["naive"], said.append, tty=False, clock=clock)
    clock.now = 0.3
    progress.update("naive", "naive MRK P1", 0.3)
    assert said == ["[1/1] 100% naive MRK P1"]
