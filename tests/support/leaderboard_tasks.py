"""Task-error frames as the leaderboard mart and the fev export read them: one row a system
and task, built from each system's list of task errors."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd


def task_rows(
    errors: dict[str, list[float]], row: Callable[[str, int, float], dict]
) -> pd.DataFrame:
    """``row(system, index, error)`` for each system's ``index``-th task error."""
    return pd.DataFrame(
        [
            row(system, index, value)
            for system, values in errors.items()
            for index, value in enumerate(values)
        ]
    )


def board_tasks(errors: dict[str, list[float]], metric: str = "mase") -> pd.DataFrame:
    """The leaderboard's input: task i is ``t{i}`` in block ``b{i}``."""
    return task_rows(
        errors,
        lambda system, index, value: dict(run_id="r", scope="all", metric=metric,
                                          task_id=f"t{index}", block_id=f"b{index}",
                                          system_id=system, test_error=value),
    )  # fmt: skip
