"""The ETA is within 50 % of the truth once 10 % of the partitions are done, on a
synthetic clock: a run of cheap and dear systems' partitions on two workers, with a first-
import cost per worker; the truth is the simulated schedule's own end time.

The systems' true costs are the issue's measurement on this machine (ARIMA's partitions 2.6x
fracast's), not the scheduler's prior (``SYSTEM_COST``: ARIMA 15, fracast 8 ms per window,
1.9x), so the prior is tested as the approximation it is."""

from __future__ import annotations

import heapq
import itertools
import json
from pathlib import Path

import pytest

from tsrate.platform.progress import Progress
from tsrate.robustness.forecast.execute import Partition, order_partitions, system_cost

BASE = {"arima": 4.0, "fracast": 1.5, "naive": 0.05}  # seconds per partition
PRIOR = {g: system_cost(g, None) for g in BASE}  # the scheduler's ms per window


def simulate(queue: list[tuple[str, float]], workers: int, startup: float):
    """Partitions in ``queue`` order, greedy on ``workers``; returns
    [(finish_time, group, compute_seconds)] sorted by finish time."""
    free = [(startup, w) for w in range(workers)]
    events = []
    for group, cost in queue:
        at, worker = heapq.heappop(free)
        events.append((at + cost, group, cost))
        heapq.heappush(free, (at + cost, worker))
    return sorted(events)


def costs(order, count=40):
    wobble = itertools.cycle([0.8, 1.0, 1.3, 0.9, 1.1])
    return [(g, BASE[g] * next(wobble)) for g in order for _ in range(count)]


def worst_miss(queue, prior, workers=2, startup=6.0):
    """The largest |ETA - truth| / allowed over every partition finished after 10 % of them,
    where allowed is half the truth, or 1 s (the ETA is shown in whole seconds) in the last
    seconds of the run, when a dear partition still in flight beside cheap ones dominates;
    at most 1 means the ETA held throughout."""
    events = simulate(queue, workers, startup)
    end = events[-1][0]
    now = [0.0]
    progress = Progress(
        [g for g, _ in queue],
        say=lambda _line: None,
        tty=False,
        clock=lambda: now[0],
        prior=prior,
        parallel=workers,
    )
    errors = []
    for finish, group, cost in events:
        now[0] = finish
        progress.update(group, group, cost)
        if progress.done >= 0.1 * progress.total and progress.pending:
            truth = end - finish
            errors.append(abs(progress.eta() - truth) / max(0.5 * truth, 1.0))
    assert len(errors) > 90
    return max(errors)


@pytest.mark.parametrize("order", [("arima", "fracast", "naive"), ("fracast", "naive", "arima")])
def test_eta_within_half_of_the_truth_after_a_tenth(order):
    """System by system in either order (an executor may hand partitions back in any order):
    a system not seen yet is priced by its prior, scaled by what the seen ones cost."""
    assert worst_miss(costs(order), PRIOR) <= 1


def test_eta_in_the_flows_own_order():
    """The order the forecast flow queues partitions in (costliest prior first)."""
    todo = [
        Partition(g, f"T{i:02d}", "P0", f"{g}{i}")
        for g in ("naive", "fracast", "arima")
        for i in range(40)
    ]
    ordered = order_partitions(todo, {g: (None,) for g in BASE})
    order = list(dict.fromkeys(p.system_id for p in ordered))
    assert order == ["arima", "fracast", "naive"]
    assert worst_miss(costs(order), PRIOR) <= 1


@pytest.mark.parametrize("order", [("arima", "fracast", "naive"), ("fracast", "naive", "arima")])
def test_eta_without_a_prior_is_the_old_overall_mean(order):
    """Without a prior an unseen system costs the overall mean of the finished ones: the ETA
    this issue found 1.5-3x off (a check that the test above can fail)."""
    assert worst_miss(costs(order), prior=None) > 1


def test_first_item_sets_where_compute_began():
    """A worker start-up of 6 s before the first 1 s item is not charged to the items left."""
    now = [0.0]
    progress = Progress(["a"] * 4, say=lambda _line: None, tty=False, clock=lambda: now[0])
    now[0] = 7.0
    progress.update("a", "a", 1.0)
    assert progress.compute_started == pytest.approx(6.0)
    assert progress.eta() == pytest.approx(3.0)


# --- Real runs replayed ---------------------------------------------------------------

RECORDED = Path(__file__).parents[1] / "support" / "recorded_forecast_runs.json"


def replay(run: dict, prior: dict | None = None) -> list:
    """Replay one recorded run's stored batches through a Progress as the forecast pool
    drives it (2 workers, the scheduler's priors, partitions stored together counted
    together); returns (done %, ETA, truth) after every batch once 10 % are done."""
    updates = run["updates"]
    end = updates[-1][0]
    now = [0.0]
    progress = Progress(
        [system for _, system, _ in updates],
        say=lambda _line: None,
        tty=False,
        clock=lambda: now[0],
        prior=prior or {s: system_cost(s, None) for s in {u[1] for u in updates}},
        parallel=2,
    )
    batches: list[list] = []
    for update in updates:  # lines printed within milliseconds: one stored batch
        if batches and update[0] - batches[-1][-1][0] < 0.05:
            batches[-1].append(update)
        else:
            batches.append([update])
    seen = []
    for batch in batches:
        now[0] = batch[-1][0]
        progress.update_many([(system, system, seconds) for _, system, seconds in batch])
        if progress.done >= 0.1 * progress.total and progress.pending:
            seen.append((100 * progress.done // progress.total, progress.eta(), end - now[0]))
    return seen


def misses(seen: list) -> list:
    """The points where the ETA is off by more than half the truth (and more than 1 s: it
    is shown in whole seconds)."""
    return [(share, round(eta, 1), round(truth, 1)) for share, eta, truth in seen
            if abs(eta - truth) > max(0.5 * truth, 1.0)]  # fmt: skip


def recorded_runs() -> list[dict]:
    return json.loads(RECORDED.read_text())["runs"]


def test_eta_on_real_runs_within_half_of_the_truth():
    """13 real default runs (2 first runs, 7 steady-state ones, 4 at load ~3): after 10 % of
    the partitions, the ETA printed with each stored batch is within half of the time the
    forecasts still took (or 1 s), at every batch but at most one per run and 4 of the 200
    and more in all. The misses: a ticker's fracast partitions taking 3x the system's mean
    so far (7.0 s said, 4.0 s true), and at load ~3 the last cheap partitions, which wait on
    the run process's storing rather than on compute (0.4-1.7 s said, 1.5-4.0 s true)."""
    all_misses = {}
    points = 0
    for run in recorded_runs():
        seen = replay(run)
        points += len(seen)
        found = misses(seen)
        assert len(found) <= 1, (run["run"], found)
        all_misses[run["run"]] = found
    assert points > 200
    assert sum(len(found) for found in all_misses.values()) <= 4, all_misses


def test_eta_on_real_runs_needs_the_prior_weight(monkeypatch):
    """Without shrinking a system's first partitions toward its prior, the first fracast
    partition (unperturbed, 2-3x the perturbed ones) sets the whole system's price: the
    ETA doubles the truth in the first run (a check that the test above can fail)."""
    import tsrate.platform.progress as progress_module

    monkeypatch.setattr(progress_module, "PRIOR_WEIGHT", 0.0)
    found = [misses(replay(run)) for run in recorded_runs()]
    assert max(len(f) for f in found) >= 1
    assert sum(len(f) for f in found) > 3


def test_eta_on_real_runs_needs_the_baselines_prior():
    """Priced at 0 ms per window (their prior before 2026-12-04), the naive baselines'
    partitions left after the dear systems count nothing: the ETA says 0 s while 1-2 s
    remain."""
    found = []
    for run in recorded_runs():
        prior = {s: system_cost(s, None) for s in ("arima", "fracast", "naive", "seasonal_naive")}
        prior.update(naive=0.0, seasonal_naive=0.0, random=0.0, biased=0.0)
        found += misses(replay(run, prior=prior))
    assert len(found) > 3
    assert any(eta < 0.5 and truth >= 1.0 for _, eta, truth in found)


def test_a_batch_shares_one_eta():
    """Partitions stored together print the ETA after the whole batch: a line in the middle
    would still price the batch's later partitions as work to do."""
    now = [0.0]
    lines: list[str] = []
    progress = Progress(["a"] * 6, lines.append, tty=False, clock=lambda: now[0])
    now[0] = 2.0
    progress.update_many([("a", "a1", 1.0), ("a", "a2", 1.0), ("a", "a3", 1.0)])
    # compute began 1 s in (the first item's 1 s before it ended): 3 s of compute in 1 s of
    # wall; 3 items of 1 s left: 1 s. Line by line it would have said 5 s, 2 s, 1 s.
    assert lines == ["[1/6]  16% a1 ETA 1s", "[2/6]  33% a2 ETA 1s", "[3/6]  50% a3 ETA 1s"]
    now[0] = 4.0
    progress.update_many([("a", f"a{i}", 1.0) for i in (4, 5, 6)])
    assert lines[-1] == "[6/6] 100% a6" and lines[-2] == "[5/6]  83% a5"  # nothing left


def test_items_in_the_workers_count_as_under_way():
    """With 2 workers, at an update one has just finished and the other is half way: the
    first 2 pending items count 1/4 done."""
    now = [0.0]
    progress = Progress(["a"] * 5, lambda _l: None, tty=False, clock=lambda: now[0], parallel=2)
    now[0] = 1.0
    progress.update("a", "a", 2.0)  # wall/compute 0.5
    assert progress.eta() == pytest.approx((4 * 2.0 - 0.25 * 2 * 2.0) * 0.5)


def test_first_items_are_shrunk_toward_the_prior():
    """A system's mean counts its prior (priced by the other systems' seconds per prior
    unit) as PRIOR_WEIGHT more items."""
    from tsrate.platform.progress import PRIOR_WEIGHT

    progress = Progress(["a", "b", "b", "b"], lambda _l: None, tty=False, prior={"a": 2, "b": 1})
    progress.update("a", "a", 4.0)  # 2 s per prior unit: b's prior cost is 2 s
    assert progress.group_cost("b") == pytest.approx(2.0)
    progress.update("b", "b", 5.0)
    assert progress.group_cost("b") == pytest.approx(
        (PRIOR_WEIGHT * 2.0 + 5.0) / (PRIOR_WEIGHT + 1)
    )
