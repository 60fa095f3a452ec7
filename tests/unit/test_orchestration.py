"""In-process flows (no Prefect API): every step runs as a plain function, tasks included."""

from __future__ import annotations

from tsrate.platform.orchestration import call


def test_call_runs_plain_functions_and_task_functions_outside_a_flow():
    from prefect import task

    @task
    def doubled(x: int) -> int:
        return 2 * x

    assert call(lambda x: x + 1, 1) == 2
    assert call(doubled, 21) == 42
