"""A phase that Ctrl-C or SIGTERM stops says "stopped after", not "failed after": a cron
user reading the log must not take a deliberate stop for a failure (the CLI turns SIGTERM
into KeyboardInterrupt("SIGTERM"), see tsrate.cli._stop_on_sigterm)."""

from __future__ import annotations

import pytest

from tsrate.platform.progress import phase


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), KeyboardInterrupt("SIGTERM")])
def test_a_stopped_phase_says_stopped(stop):
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt), phase("forecast", lines.append):
        raise stop
    assert lines[0] == "forecast: started"
    assert lines[1].startswith("forecast: stopped after ") and lines[1].endswith("s")
    assert len(lines) == 2


@pytest.mark.parametrize("error", [ValueError("bad input"), SystemExit(1)])
def test_a_failed_phase_still_says_failed(error):
    lines: list[str] = []
    with pytest.raises(type(error)), phase("build", lines.append):
        raise error
    assert lines[1].startswith("build: failed after ")
    assert len(lines) == 2
