"""Imported by the forecast workers' fork server (:mod:`tsrate.robustness.forecast.workers`):
the workers' own module, then each module named in ``TSRATE_WORKER_PRELOAD`` and its
``worker_imports()`` (a system's libraries: torch and fracast, statsmodels), so that every
worker forked from the server has them loaded. A module that fails to import is left to
the worker, which then reports the error as it would have without the server."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys

import tsrate.robustness.forecast.execute  # noqa: F401 - what every worker runs


def _leave_at_once() -> None:
    """The server leaves without the interpreter's teardown of torch and the rest (about a
    second, during which it still held the run's stdout and stderr: a caller reading them
    to the end waited for it). Workers forked from it register their own exit."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


atexit.register(_leave_at_once)

for _name in filter(None, os.environ.get("TSRATE_WORKER_PRELOAD", "").split(",")):
    with contextlib.suppress(Exception):
        _imports = getattr(importlib.import_module(_name), "worker_imports", None)
        if _imports is not None:
            _imports()
