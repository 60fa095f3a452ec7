"""The ETA is within 50 % of the truth once 10 % of the partitions are done (issue 29), on a
synthetic clock: a run of cheap and dear systems' partitions on two workers, with a first-
import cost per worker; the truth is the simulated schedule's own end time.

The systems' true costs are the issue's measurement on this machine (ARIMA's partitions 2.6x
fracast's), not the scheduler's prior (``SYSTEM_COST``: ARIMA 15, fracast 8 ms per window,
1.9x), so the prior is tested as the approximation it is."""

from __future__ import annotations

import heapq
import itertools

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
        [g for g, _ in queue], say=lambda _line: None, tty=False, clock=lambda: now[0], prior=prior
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
