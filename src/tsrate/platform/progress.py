"""Progress people can read: one line per phase start and end, done/total with an ETA.

* :func:`run_logger` — Prefect's run logger inside an orchestrated flow run, else the
  ``tsrate.run`` logger (``tsrate run`` without a Prefect API runs the flows in-process).
* :func:`phase` — ``<name>: started`` and ``<name>: done in 12.3s`` (or ``failed after``).
* :class:`Progress` — ``[45/120] 38% fracast MRK P1 ... ETA 1m05s``. On a terminal it is one
  line redrawn in place (a bar); in logs, plain lines. The ETA weighs the work left by what
  each system's finished partitions cost so far (a fracast partition costs more than a
  naive one), converted to wall time by the wall/compute ratio observed so far.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator

log = logging.getLogger("tsrate.run")


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    """Prefect's run logger inside a flow or task run; the ``tsrate.run`` logger elsewhere."""
    from prefect.context import FlowRunContext, TaskRunContext

    if FlowRunContext.get() is None and TaskRunContext.get() is None:
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


@contextlib.contextmanager
def phase(name: str, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Say when the phase ``name`` starts and when it ends, with its elapsed time."""
    say = say or run_logger().info
    started = time.perf_counter()
    say(f"{name}: started")
    try:
        yield
    except BaseException:
        say(f"{name}: failed after {time.perf_counter() - started:.1f}s")
        raise
    say(f"{name}: done in {time.perf_counter() - started:.1f}s")


class Progress:
    """Done/total of weighted items (forecast partitions) with an ETA.

    ``update(group, label, seconds)`` after each item: ``group`` is what predicts its cost
    (the system), ``seconds`` the compute it took. ``pending`` lists the groups of the items
    not done yet (one entry per item).
    """

    def __init__(
        self,
        pending: list[str],
        say: Callable[[str], None],
        tty: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total = len(pending)
        self.pending = list(pending)
        self.done = 0
        self.say = say
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.clock = clock
        self.started = clock()
        self.cost: dict[str, list[float]] = {}

    def eta(self) -> float | None:
        """Seconds of wall time left, or None before anything finished."""
        spent = [s for costs in self.cost.values() for s in costs]
        if not spent:
            return None
        overall = sum(spent) / len(spent)
        left = sum(
            (sum(self.cost[g]) / len(self.cost[g])) if g in self.cost else overall
            for g in self.pending
        )
        wall_per_compute = (self.clock() - self.started) / max(sum(spent), 1e-9)
        return left * wall_per_compute

    def line(self, label: str) -> str:
        share = self.done / self.total if self.total else 1.0
        eta = self.eta()
        eta_text = f"ETA {duration(eta)}" if eta is not None and self.pending else ""
        return f"[{self.done}/{self.total}] {share:4.0%} {label} {eta_text}".rstrip()

    def update(self, group: str, label: str, seconds: float) -> None:
        self.done += 1
        with contextlib.suppress(ValueError):
            self.pending.remove(group)
        self.cost.setdefault(group, []).append(max(seconds, 0.0))
        text = self.line(label)
        if self.tty:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            end = "\n" if self.done >= self.total else ""
            sys.stderr.write(f"\r\x1b[2K[{bar}] {text}{end}")
            sys.stderr.flush()
        else:
            self.say(text)
