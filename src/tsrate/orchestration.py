"""Run a flow's steps orchestrated by Prefect, or in-process when there is no Prefect API.

``tsrate run`` without a Prefect API runs its flows as plain functions (no temporary Prefect
server per command, see ``flows/pipeline.py``). :func:`call` runs one step (a sub-flow or a
task) the right way: through Prefect inside an orchestrated flow run, else as the plain
function, keeping a task's retries (``retries``, ``retry_delay_seconds``) and its
``retry_condition_fn`` (asked with the failed attempt's exception as its state's result).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class _FailedState:
    """The one method of a Prefect state that tsrate's retry conditions use."""

    def __init__(self, exc: BaseException) -> None:
        self._exc = exc

    def result(self, raise_on_failure: bool = True) -> Any:  # noqa: ARG002 - Prefect's signature
        raise self._exc


def _delay(step: Any, attempt: int) -> float:
    delays = getattr(step, "retry_delay_seconds", 0) or 0
    if callable(delays):
        delays = delays(getattr(step, "retries", 0) or 0)
    if isinstance(delays, (list, tuple)):
        return float(delays[min(attempt, len(delays) - 1)]) if delays else 0.0
    return float(delays)


def call(step: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run ``step`` orchestrated inside an orchestrated flow run, else as a plain function."""
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is not None:
        return step(*args, **kwargs)
    retries = int(getattr(step, "retries", 0) or 0)
    condition = getattr(step, "retry_condition_fn", None)
    for attempt in range(retries + 1):
        try:
            return step.fn(*args, **kwargs)
        except Exception as exc:
            last = attempt == retries
            if last or (condition is not None and not condition(step, None, _FailedState(exc))):
                raise
            time.sleep(_delay(step, attempt))
    raise AssertionError("unreachable")  # pragma: no cover
