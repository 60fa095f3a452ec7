"""Progress people can read: one line per phase start and end, done/total with an ETA.

* :func:`run_logger` — Prefect's run logger inside an orchestrated flow run, else the
  ``tsrate.run`` logger (``tsrate run`` without a Prefect API runs the flows in-process).
* :func:`phase` — ``<name>: started`` and ``<name>: done in 12.3s`` (or ``failed after``, or
  ``stopped after`` when Ctrl-C or SIGTERM stopped it).
* :class:`Progress` — ``[45/120]  37% fracast MRK P1 ... ETA 1m05s`` (the share floored:
  100 % only once every item is done; the ETA rounded up, ``<1s`` under a second, never
  ``0s`` while an item runs; the lock file's ``eta_seconds`` the same, in whole seconds). On a terminal it is one
  line redrawn in place (a bar); in logs, plain lines. The ETA weighs the work left by what
  each system's finished partitions cost so far (a fracast partition costs more than a
  naive one), shrunk toward its prior while few have finished (a system's first partitions
  are not its typical ones: fracast's unperturbed partition costs 2-3x the perturbed ones,
  which reuse its prefix); a system none of whose partitions has finished is priced by its
  prior (the scheduler's measured ms per window) scaled to the seconds the finished systems
  took per prior unit. The partitions in the workers count as under way. Compute converts to
  wall time by the wall/compute ratio since the workers' start-up (first imports, model
  loads) ended. Partitions stored together (the forecast pool stores at most once a
  second) are counted before the ETA is computed: their lines share the ETA of the batch.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

log = logging.getLogger("tsrate.run")

#: the phases under way in this process, outermost first (see :func:`announce`)
_phases: list[str] = []


def announce(detail: str | None = None, counts: Mapping[str, float] | None = None) -> None:
    """Tell readers of the warehouse lock what this process does now: the phases under way
    and, when given, ``detail`` (a progress line) and its ``counts`` (done, total, ETA)."""
    from tsrate.platform.locking import announce as to_lock

    where = " / ".join(_phases)
    to_lock(f"{where}: {detail}" if where and detail else (detail or where), counts)


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    """Prefect's run logger inside a flow or task run; the ``tsrate.run`` logger elsewhere."""
    from tsrate.platform.orchestration import flow_run_context, task_run_context

    if flow_run_context() is None and task_run_context() is None:
        return log
    from prefect import get_run_logger

    return get_run_logger()


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def remaining(seconds: float) -> str:
    """A time left as :func:`duration` writes it, rounded up to the unit shown (``<1s`` under
    a second): an ETA never says less than the estimate, nor ``0s`` while an item still runs."""
    if seconds < 1:
        return "<1s"
    return duration(shown_seconds(seconds))


def shown_seconds(seconds: float) -> int:
    """The whole seconds :func:`remaining` shows for a time left: rounded up to the unit
    shown, at least 1 (``<1s``). The lock file stores this as ``eta_seconds``, so a monitor
    reads what the progress line says, and never 0 while work remains."""
    whole = max(1, math.ceil(seconds))
    if whole >= 3600:  # shown in minutes
        whole = math.ceil(whole / 60) * 60
    return whole


def announcing(say: Callable[[str], None]) -> Callable[[str], None]:
    """``say`` that also announces each line (:func:`announce`): a suite's batch progress."""

    def both(text: str) -> None:
        announce(text)
        say(text)

    return both


@contextlib.contextmanager
def phase(name: str, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Say when the phase ``name`` starts and when it ends, with its elapsed time."""
    say = say or run_logger().info
    started = time.perf_counter()
    say(f"{name}: started")
    _phases.append(name)
    announce()
    try:
        yield
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the CLI raises it): stopped, not failed
        say(f"{name}: stopped after {time.perf_counter() - started:.1f}s")
        raise
    except BaseException:
        say(f"{name}: failed after {time.perf_counter() - started:.1f}s")
        raise
    finally:
        _phases.remove(name)
        announce()  # the enclosing phase again (nothing once the last one ends)
    say(f"{name}: done in {time.perf_counter() - started:.1f}s")


#: a group's prior counts as this many finished items of it (see :meth:`Progress.group_cost`)
PRIOR_WEIGHT = 3.0


class Progress:
    """Done/total of weighted items (forecast partitions) with an ETA.

    ``update(group, label, seconds)`` after each item (``update_many`` after a batch stored
    together): ``group`` is what predicts its cost (the system), ``seconds`` the compute it
    took. ``pending`` lists the groups of the items not done yet (one entry per item), in the
    order they are handed to workers. ``parallel``: how many workers run items at once (a
    process pool's size); when given, the first ``parallel`` pending items are taken to be
    under way, (parallel - 1) / (2 parallel) done on average (at an update one worker has
    just finished and starts its next item; the others are half way through theirs).
    """

    def __init__(
        self,
        pending: list[str],
        say: Callable[[str], None],
        tty: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
        prior: Mapping[str, float] | None = None,
        parallel: int | None = None,
    ) -> None:
        self.parallel = parallel
        self.total = len(pending)
        self.pending = list(pending)
        self.done = 0
        self.say = say
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.clock = clock
        self.started = clock()
        self.cost: dict[str, list[float]] = {}
        #: relative cost of one item per group (e.g. model ms per window), in any unit
        self.prior = dict(prior or {})
        #: when the workers began computing: the start, less their start-up (first imports,
        #: model loads), estimated from the first item as its finish time less its compute
        self.compute_started: float | None = None

    def prior_cost(self, group: str) -> float | None:
        """``group``'s prior in compute seconds: its prior times the seconds per prior unit
        that the other priced groups' finished items took; None without a prior or before
        any other priced group finished an item."""
        priced = [g for g in self.cost if self.prior.get(g, 0.0) > 0 and g != group]
        if group not in self.prior or not priced:
            return None
        seconds = sum(sum(self.cost[g]) for g in priced)
        units = sum(self.prior[g] * len(self.cost[g]) for g in priced)
        return self.prior[group] * seconds / units

    def group_cost(self, group: str) -> float:
        """Expected compute seconds of one more item of ``group``: the mean of its finished
        items, with its :meth:`prior_cost` counted as :data:`PRIOR_WEIGHT` more items (a
        first item costlier than the rest weighs less); with none finished, the prior cost;
        without a prior (or nothing else priced seen yet), the overall mean."""
        prior = self.prior_cost(group)
        own = self.cost.get(group)
        if own:
            if prior is None:
                return sum(own) / len(own)
            return (PRIOR_WEIGHT * prior + sum(own)) / (PRIOR_WEIGHT + len(own))
        if prior is not None:
            return prior
        spent = [s for costs in self.cost.values() for s in costs]
        return sum(spent) / len(spent)

    def eta(self) -> float | None:
        """Seconds of wall time left, or None before anything finished: the compute left (each
        pending item at :meth:`group_cost`) times the wall/compute ratio since the workers'
        start-up ended (a first run's imports and model loads are paid once, not per item)."""
        spent = sum(s for costs in self.cost.values() for s in costs)
        if not self.cost:
            return None
        each = {g: self.group_cost(g) for g in set(self.pending)}
        left = sum(each[g] for g in self.pending)
        if self.parallel:  # the items in the workers are under way (class doc)
            running = sum(each[g] for g in self.pending[: self.parallel])
            left -= running * (self.parallel - 1) / (2 * self.parallel)
        began = self.started if self.compute_started is None else self.compute_started
        wall_per_compute = (self.clock() - began) / max(spent, 1e-9)
        return left * wall_per_compute

    def line(self, label: str) -> str:
        """The last item's line with the ETA now (none once nothing is pending)."""
        return self._text(label, self.done, self.eta() if self.pending else None)

    def _text(self, label: str, done: int, eta: float | None) -> str:
        # floored, not rounded: 199 of 200 is 99 %, and 100 % means every item is done
        percent = done * 100 // self.total if self.total else 100
        eta_text = f"ETA {remaining(eta)}" if eta is not None else ""
        return f"[{done}/{self.total}] {percent:3d}% {label} {eta_text}".rstrip()

    def update(self, group: str, label: str, seconds: float) -> None:
        """One item finished: count it and show its line."""
        self.update_many([(group, label, seconds)])

    def update_many(self, items: Sequence[tuple[str, str, float]]) -> None:
        """Items finished together, ``(group, label, seconds)`` each: all are counted first,
        then each one's line is shown with the ETA after the last (a line in the middle of a
        batch would price items already finished as still to do)."""
        for group, _label, seconds in items:
            self.done += 1
            with contextlib.suppress(ValueError):
                self.pending.remove(group)
            seconds = max(seconds, 0.0)
            if self.compute_started is None:
                now = self.clock()
                self.compute_started = min(now, max(self.started, now - seconds))
            self.cost.setdefault(group, []).append(seconds)
        eta = self.eta() if self.pending else None
        first = self.done - len(items)
        for index, (_group, label, _seconds) in enumerate(items, start=first + 1):
            self._show(self._text(label, index, eta), index, eta)

    def _show(self, text: str, done: int, eta: float | None = None) -> None:
        counts = {"done": done, "total": self.total}
        if eta is not None:
            counts["eta_seconds"] = shown_seconds(eta)  # as the line shows it
        announce(text, counts)
        if self.tty:
            width = 24
            filled = int(width * done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            end = "\n" if done >= self.total else ""
            sys.stderr.write(f"\r\x1b[2K[{bar}] {text}{end}")
            sys.stderr.flush()
        else:
            self.say(text)
