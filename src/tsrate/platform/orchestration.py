"""Run a flow's steps orchestrated by Prefect, or in-process when there is no Prefect API.

``tsrate run`` without a Prefect API runs its flows as plain functions (no temporary Prefect
server per command, see ``flows/pipeline.py``). :func:`call` runs one step (a sub-flow or a
task) the right way: through Prefect inside an orchestrated flow run, else as the plain
function, keeping a task's retries (``retries``, ``retry_delay_seconds``) and its
``retry_condition_fn`` (asked with the failed attempt's exception as its state's result).

The flows declare their steps with this module's :func:`flow` and :func:`task` (Prefect's
options, as Prefect's decorators take them). In a process that has not imported Prefect (a
plain ``tsrate run``, ``tsrate ingest``, a suite run without an API) a step is a
:class:`Step`: its plain function is ``.fn``, and Prefect (about a core-second to import) is
loaded only when the step is orchestrated (called, ``.submit``, ``.with_options``,
``.to_deployment`` ...). Where Prefect is already loaded (Prefect's own entrypoint loader,
``tsrate serve``, a deployment's flow run) the decorators return Prefect's own objects.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: ``auto`` (orchestrate when a Prefect API is configured), ``always`` or ``never``
PREFECT_MODE = "TSRATE_PREFECT"

#: ``cache_policy=NO_CACHE`` in :func:`task`: Prefect's ``NO_CACHE`` once Prefect is loaded
NO_CACHE = "tsrate:no-cache"


class Step:
    """A flow or task of tsrate's flows, free of Prefect until it is orchestrated.

    ``fn`` is the plain function; ``retries``, ``retry_delay_seconds`` and
    ``retry_condition_fn`` are the options given (what :func:`call` honours outside a flow
    run). Calling the step or reading any other attribute builds Prefect's own flow or task
    (``prefect``) from the same function and options, once, and hands it over.
    """

    def __init__(self, kind: str, fn: Callable, options: dict[str, Any]) -> None:
        functools.update_wrapper(self, fn)
        self.kind = kind
        self.fn = fn
        self.options = dict(options)
        self.retries = options.get("retries") or 0
        self.retry_delay_seconds = options.get("retry_delay_seconds") or 0
        self.retry_condition_fn = options.get("retry_condition_fn")

    @functools.cached_property
    def prefect(self) -> Any:
        """Prefect's ``flow`` or ``task`` made from this step (Prefect is imported here)."""
        import prefect

        options = dict(self.options)
        if options.get("cache_policy") == NO_CACHE:
            from prefect.cache_policies import NO_CACHE as prefect_no_cache

            options["cache_policy"] = prefect_no_cache
        return getattr(prefect, self.kind)(**options)(self.fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.prefect(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # only for names this object does not hold
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.prefect, name)

    def __repr__(self) -> str:
        return f"<tsrate {self.kind} {self.options.get('name', self.fn.__name__)!r}>"


def _decorator(kind: str, options: dict[str, Any]) -> Callable[[Callable], Any]:
    def decorate(fn: Callable) -> Any:
        step = Step(kind, fn, options)
        return step.prefect if "prefect" in sys.modules else step

    return decorate


def flow(**options: Any) -> Callable[[Callable], Any]:
    """``@flow(name=...)``: Prefect's flow options; a :class:`Step` until orchestrated."""
    return _decorator("flow", options)


def task(**options: Any) -> Callable[[Callable], Any]:
    """``@task(...)``: Prefect's task options; a :class:`Step` until orchestrated."""
    return _decorator("task", options)


def flow_run_context() -> Any:
    """Prefect's current flow run context, or None. A process that never imported Prefect
    is in no flow run, so Prefect is not imported to ask."""
    context = sys.modules.get("prefect.context")
    return None if context is None else context.FlowRunContext.get()


def task_run_context() -> Any:
    """Prefect's current task run context, or None (as :func:`flow_run_context`)."""
    context = sys.modules.get("prefect.context")
    return None if context is None else context.TaskRunContext.get()


def _settings_may_name_an_api() -> bool:
    """Whether any place Prefect reads its settings from could set ``PREFECT_API_URL``:
    its environment variables, ``.env``, ``prefect.toml`` or ``pyproject.toml``'s
    ``[tool.prefect]`` in the working folder, or a user profiles file naming it. False means
    no API is configured, known without importing Prefect (Prefect's packaged default
    profiles, used when the user has none, select the ephemeral profile)."""
    if any(name.startswith("PREFECT_API_URL") for name in os.environ):
        return True
    if any(os.environ.get(name) for name in ("PREFECT_PROFILE", "PREFECT_PROFILES_PATH")):
        return True
    if Path(".env").exists() or Path("prefect.toml").exists():
        return True
    try:
        if "tool.prefect" in Path("pyproject.toml").read_text(errors="replace"):
            return True
    except OSError:
        pass
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")
    for folder in {home, home.expanduser()}:  # Prefect reads PREFECT_HOME's profiles as given
        try:
            if "PREFECT_API_URL" in (folder / "profiles.toml").read_text(errors="replace"):
                return True
        except OSError:
            pass
    return False


def prefect_api_configured() -> bool:
    """Whether a Prefect API is set (env ``PREFECT_API_URL``, the active Prefect profile or
    Prefect's other settings files). Prefect's settings are loaded only when one of those
    places could name an API."""
    if not _settings_may_name_an_api():
        return False
    from prefect.settings import PREFECT_API_URL

    return bool(PREFECT_API_URL.value())


def run_flow(flow: Any, needs_prefect: bool = False, **parameters: Any) -> Any:
    """Run a top-level flow as the CLI does: orchestrated when a Prefect API is configured
    (or ``TSRATE_PREFECT=always``, or ``needs_prefect``: a temporary server owned by tsrate,
    stopped at the end), in-process as a plain function otherwise."""
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
    if flow_run_context() is not None:
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
