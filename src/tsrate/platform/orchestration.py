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

#: ``auto`` (orchestrate when a Prefect API is configured), ``always`` or ``never``
PREFECT_MODE = "TSRATE_PREFECT"


def prefect_api_configured() -> bool:
    """Whether a Prefect API is set (env ``PREFECT_API_URL`` or the active Prefect profile)."""
    from prefect.settings import PREFECT_API_URL

    return bool(PREFECT_API_URL.value())


def run_flow(flow: Any, needs_prefect: bool = False, **parameters: Any) -> Any:
    """Run a top-level flow as the CLI does: orchestrated when a Prefect API is configured
    (or ``TSRATE_PREFECT=always``, or ``needs_prefect``: a temporary server owned by tsrate,
    stopped at the end), in-process as a plain function otherwise."""
    import os

    from tsrate import TsrateError

    mode = os.environ.get(PREFECT_MODE, "auto")
    if mode not in ("auto", "always", "never"):
        raise TsrateError(f"{PREFECT_MODE}={mode!r}: use auto, always or never")
    if mode == "never" and not needs_prefect:
        return flow.fn(**parameters)
    if prefect_api_configured():
        return flow(**parameters)
    if mode == "always" or needs_prefect:
        from tsrate.platform.prefect_server import owned_prefect_server

        with owned_prefect_server(ui=False):
            return flow(**parameters)
    return flow.fn(**parameters)


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
    """Run ``step`` orchestrated inside an orchestrated flow run, else as a plain function.
    ``step`` may also be a plain function (a helper that calls tasks itself): it is called."""
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is not None:
        return step(*args, **kwargs)
    retries = int(getattr(step, "retries", 0) or 0)
    condition = getattr(step, "retry_condition_fn", None)
    function = getattr(step, "fn", step)  # a Prefect task's function, or a plain function
    for attempt in range(retries + 1):
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            last = attempt == retries
            if last or (condition is not None and not condition(step, None, _FailedState(exc))):
                raise
            time.sleep(_delay(step, attempt))
    raise AssertionError("unreachable")  # pragma: no cover
