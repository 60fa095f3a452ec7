"""Two real builds of one run whose start falls in the same second (the clock's second is
pinned here) write two log files, each holding its own build's lines; before, the second
build's log replaced the first's (one name per run and second)."""

from __future__ import annotations

import time

import pytest

from tests.integration.runner_fixture import tiny_project
from tsrate.platform import dbt_runner as dbt

pytestmark = pytest.mark.slow


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    yield from tiny_project(tmp_path, monkeypatch)


def test_two_builds_in_one_second_keep_two_logs(tiny, monkeypatch):
    _, warehouse, target = tiny
    real = time.strftime

    def one_second(form: str, *when) -> str:  # every log stamp falls in one second
        return "20261205T120000" if form == "%Y%m%dT%H%M%S" else real(form, *when)

    monkeypatch.setattr(time, "strftime", one_second)
    first = dbt.build("run-7", warehouse, lambda _: None, None, target)
    second = dbt.build("run-7", warehouse, lambda _: None, None, target)
    logs = sorted((warehouse.parent / "logs").glob("dbt-build-run-7-20261205T120000*.log"))
    assert len(logs) == 2
    assert sorted(log.read_text().splitlines() for log in logs) == sorted([first, second])
