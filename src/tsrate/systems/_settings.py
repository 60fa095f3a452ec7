"""Settings of the model-backed systems: an environment variable, else a dbt var, else a default.

The environment wins because it describes this machine (where the weights are, which
server to call); the ``vars:`` of ``dbt_project.yml`` hold the project's defaults.
"""

from __future__ import annotations

import os
from typing import Any

from tsrate import TsrateError
from tsrate.config import project_vars


def setting(env: str, var: str, default: Any) -> Any:
    """``$env`` if set and non-empty, else the dbt var ``var``, else ``default``."""
    value = os.environ.get(env)
    if value not in (None, ""):
        return value
    try:
        values = project_vars()
    except TsrateError:
        values = {}
    value = values.get(var)
    return default if value in (None, "") else value


def int_setting(env: str, var: str, default: int, minimum: int = 1) -> int:
    """An integer setting of at least ``minimum``; a bad value is an error naming both sources."""
    raw = setting(env, var, default)
    try:
        value = int(raw)
    except (TypeError, ValueError) as exc:
        raise TsrateError(
            f"{raw!r} is not a whole number (environment {env} or dbt var {var})"
        ) from exc
    if value < minimum:
        raise TsrateError(f"{env} / var {var} must be at least {minimum}, got {value}")
    return value


def float_setting(env: str, var: str, default: float, minimum: float = 0.0) -> float:
    """A number of at least ``minimum``; a bad value is an error naming both sources."""
    raw = setting(env, var, default)
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise TsrateError(f"{raw!r} is not a number (environment {env} or dbt var {var})") from exc
    if not value >= minimum:
        raise TsrateError(f"{env} / var {var} must be at least {minimum}, got {value}")
    return value
