"""A reading review of the leaderboard and the fev export against fev 0.10's own rules
(fev/analysis.py): what fev reads per task must be one value per task, and a system's
failures are its own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.leaderboard_tasks import board_tasks, task_rows
from tsrate.robustness.fev_export import fev_summaries
from tsrate.robustness.marts.leaderboard import leaderboard
from tsrate.robustness.report.probabilistic import leaderboard_section


def _task_rows(errors: dict[str, list[float]], windows: dict[str, list[int]]) -> pd.DataFrame:
    return task_rows(
        errors,
        lambda system, index, value: dict(run_id="r", metric="wql", task_id=f"AAPL P{index}",
                                          ticker="AAPL", perturbation_id=f"P{index}",
                                          system_id=system, test_error=value,
                                          n_windows=windows[system][index], inference_time_s=1.0),
    )  # fmt: skip


def test_num_forecasts_is_the_tasks_window_count_for_every_system() -> None:
    # as leaderboard_tasks writes them: 16 scored windows per task; arima fell back on one
    # window of P1 (no quantiles there), so it has 15 values and no task error
    tasks = _task_rows(
        {"seasonal_naive": [0.02, 0.03], "arima": [0.01, np.nan]},
        {"seasonal_naive": [16, 16], "arima": [16, 15]},
    )
    frame = fev_summaries(tasks, {"horizon": 20}, "abc")["wql"]
    # fev.leaderboard(..., normalize_time_per_n_forecasts=...) refuses a task whose models
    # report different num_forecasts ("corrupted evaluation summaries"): one per task
    assert frame.groupby("dataset_config")["num_forecasts"].nunique().eq(1).all()
    assert frame["num_forecasts"].tolist() == [16, 16, 16, 16]


def test_a_task_the_baseline_failed_counts_only_as_the_baselines_failure() -> None:
    board = leaderboard(
        board_tasks(
            {"seasonal_naive": [1.0, np.nan, 2.0], "a": [0.5, 0.7, 1.0], "b": [2.0, 0.9, 4.0]},
            metric="wql",
        ),
        n_resamples=0,
    ).set_index("system_id")
    # the task is dropped for all (no relative error without the baseline's) ...
    assert (board["n_tasks"] == 2).all()
    assert board.loc["a", "skill_score"] == pytest.approx(0.5)
    assert board.loc["b", "skill_score"] == pytest.approx(-1.0)
    # ... and counted where the error is missing: a and b gave theirs
    assert board.loc["seasonal_naive", "num_failures"] == 1
    assert board.loc["a", "num_failures"] == 0 and board.loc["b", "num_failures"] == 0


def test_the_reports_leaderboard_names_the_baseline_the_mart_divided_by() -> None:
    board = pd.DataFrame(
        [
            dict(scope="all", metric="mase", system_id=s, skill_score=k, skill_score_lower=k,
                 skill_score_upper=k, win_rate=0.5, average_rank=1.5, n_tasks=4,
                 num_failures=0, baseline_system_id="naive", reason=None)
            for s, k in (("naive", 0.0), ("arima", 0.1))
        ]
    )  # fmt: skip

    def num(value, table, column, where, integer=False):
        return f"{value:g}"

    html = leaderboard_section(board, num)
    assert "relative error vs naive clipped" in html
    assert "seasonal naive" not in html
