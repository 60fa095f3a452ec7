"""Task-error frames as the leaderboard mart reads them: one row a system and task, built
from each system's list of task errors (task i is `t{i}` in block `b{i}`)."""

from __future__ import annotations

import pandas as pd


def board_tasks(errors: dict[str, list[float]], metric: str = "mase") -> pd.DataFrame:
    rows = []
    for system, values in errors.items():
        for index, value in enumerate(values):
            rows.append(
                dict(
                    run_id="r",
                    scope="all",
                    metric=metric,
                    task_id=f"t{index}",
                    block_id=f"b{index}",
                    system_id=system,
                    test_error=value,
                )
            )
    return pd.DataFrame(rows)
