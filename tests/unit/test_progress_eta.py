"""The ETA is within 50 % of the truth once 10 % of the partitions are done (issue 29), on a
synthetic clock: a run of cheap and dear systems' partitions on two workers, with a first-
import cost per worker; the truth is the simulated schedule's own end time."""

from __future__ import annotations

import heapq
import itertools

import pytest

from tsrate.platform.progress import Progress


def simulate(costs: dict[str, list[float]], workers: int, startup: float):
    """Partitions in order (system by system, as the forecast flow queues them), greedy on
    ``workers``; returns [(finish_time, group, compute_seconds)] sorted by finish time."""
    queue = [(g, c) for g, cs in costs.items() for c in cs]
    free = [(startup, w) for w in range(workers)]
    events = []
    for group, cost in queue:
        at, worker = heapq.heappop(free)
        events.append((at + cost, group, cost))
        heapq.heappush(free, (at + cost, worker))
    return sorted(events), [g for g, _ in queue]


@pytest.mark.xfail(
    strict=True,
    reason="not met yet: a system with no finished partition is costed at the overall mean "
    "(e.g. fracast/naive at arima's 4 s each), so at 10 % done the ETA is 1.5-3x the truth; "
    "needs per-system costs from earlier runs (issue 29 item 1, open)",
)
@pytest.mark.parametrize("order", [("arima", "fracast", "naive"), ("fracast", "naive", "arima")])
def test_eta_within_half_of_the_truth_after_a_tenth(order):
    wobble = itertools.cycle([0.8, 1.0, 1.3, 0.9, 1.1])
    base = {"arima": 4.0, "fracast": 2.0, "naive": 0.05}
    count = {"arima": 40, "fracast": 40, "naive": 40}
    costs = {g: [base[g] * next(wobble) for _ in range(count[g])] for g in order}
    events, pending = simulate(costs, workers=2, startup=6.0)
    end = events[-1][0]
    now = [0.0]
    progress = Progress(pending, say=lambda _line: None, tty=False, clock=lambda: now[0])
    checked = 0
    for finish, group, cost in events:
        now[0] = finish
        progress.update(group, group, cost)
        if progress.done >= 0.1 * progress.total and progress.pending:
            truth = end - finish
            eta = progress.eta()
            assert abs(eta - truth) <= 0.5 * truth, (progress.done, eta, truth)
            checked += 1
    assert checked > 90
