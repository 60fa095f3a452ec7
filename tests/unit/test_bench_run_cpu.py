"""The CPU-by-process benchmark's bookkeeping (benchmarks/bench_run_cpu.py): which process is
which, which phase a CPU sample belongs to, and what is left once the model compute is
taken out."""

from __future__ import annotations

import datetime as dt

import pytest

from benchmarks.bench_run_cpu import (
    OUTSIDE,
    attribute,
    budget,
    descends,
    kind,
    model_compute,
    phase_marks,
)

LOG = """2026-12-04 09:15:22,100 INFO tsrate.run: ingest: started
2026-12-04 09:15:23,000 INFO tsrate.run: ingest: done in 0.9s
2026-12-04 09:15:23,000 INFO tsrate.run: forecast: started
2026-12-04 09:15:59,000 INFO tsrate.run: forecast: 144 partitions (0 reused, 144 computed, 440640 rows) in 36.0s [arima 40.0s, fracast 20.0s]; forecast CPU [arima 38.5s, biased 0.0s, fracast 19.5s, naive 1.0s]; worker setup [arima 0.1s]
2026-12-04 09:16:00,000 INFO tsrate.run: build (dbt): started
2026-12-04 09:16:08,000 INFO tsrate.run: built 1 exposures, 65 models, 7 seeds (0 failed; Python models' own time 6.5s)
"""


def at(clock: str) -> float:
    return dt.datetime.strptime(f"2026-12-04 {clock}", "%Y-%m-%d %H:%M:%S.%f").timestamp()


def test_processes_are_told_apart():
    assert (
        kind("/v/bin/python -m tsrate.platform.dbt_child tsrate-build --exclude x") == "dbt child"
    )
    assert kind("/v/bin/python -c from multiprocessing.forkserver import main; main(3)") == (
        "forecast workers"
    )
    assert kind("/v/bin/python /v/bin/tsrate run") == "tsrate run"
    assert kind("/usr/bin/python3 -c while True: pass") == "other"


def test_samples_go_to_the_phase_running_then():
    marks = phase_marks(LOG, at("09:15:20.000"))
    assert [name for name, _ in marks] == ["start", "ingest", "forecast", "build (dbt)"]
    assert marks[1][1] == pytest.approx(at("09:15:22.100"))
    events = [
        (at("09:15:19.000"), "tsrate run", 5.0),  # before the run: left out
        (at("09:15:21.000"), "tsrate run", 1.0),
        (at("09:15:22.100"), "dbt child", 0.5),  # on the mark: the phase that starts
        (at("09:15:30.000"), "forecast workers", 40.0),
        (at("09:15:30.000"), "forecast workers", 20.0),
        (at("09:16:05.000"), "dbt child", 9.0),
    ]
    assert attribute(events, marks) == {
        ("start", "tsrate run"): 1.0,
        ("ingest", "dbt child"): 0.5,
        ("forecast", "forecast workers"): 60.0,
        ("build (dbt)", "dbt child"): 9.0,
    }


def test_the_budget_takes_the_model_compute_out():
    forecast, python = model_compute(LOG)
    assert forecast == pytest.approx(38.5 + 0.0 + 19.5 + 1.0)  # CPU, not the wall figures
    assert python == pytest.approx(6.5)
    table = {("forecast", "forecast workers"): 61.0, ("build (dbt)", "dbt child"): 9.0,
             ("start", "dbt child"): 1.5, ("start", "tsrate run"): 2.0}  # fmt: skip
    assert budget(table, forecast, python) == pytest.approx(
        {"forecast workers": 61.0 - 59.0, "dbt child": 10.5 - 6.5, "tsrate run": 2.0}
    )


def test_only_the_runs_own_processes_are_charged():
    """The run (100), its dbt child (101), fork server (102) and a worker forked from it (103)
    are the run's; another session's dbt child (201, under its own shell 200) and init are
    not, and what is outside the run stays out of the budget."""
    parents = {100: 50, 101: 100, 102: 100, 103: 102, 200: 1, 201: 200, 50: 1}
    assert [descends(pid, 100, parents) for pid in (100, 101, 102, 103)] == [True] * 4
    assert [descends(pid, 100, parents) for pid in (50, 200, 201, 1, 999)] == [False] * 5
    assert descends(5, 100, {5: 6, 6: 5}) is False  # a loop in stale pids ends
    table = {("build (dbt)", "dbt child"): 9.0, ("build (dbt)", OUTSIDE): 30.0}
    assert budget(table, 0.0, 6.5) == pytest.approx({"dbt child": 2.5, "forecast workers": 0.0})
