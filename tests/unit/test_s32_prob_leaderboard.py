"""The leaderboard's two edge conventions, checked against scipy computed from the task errors
alone: a task where the baseline's error is exactly 0 (no relative error: dropped for every
system, counted in ``n_tasks_zero_baseline`` and named in the reason, nobody's failure), and
rank ties among systems clipped at the same bound (``scipy.stats.rankdata(method="average")``
of the clipped relative errors).

fev 0.10 refuses the first case outright: ``fev.leaderboard`` on such summaries raises
"Results for baseline_model 'seasonal_naive' are missing for 1 out of 3 tasks."
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsrate.robustness.marts.leaderboard import (
    MAX_RELATIVE_ERROR,
    MIN_RELATIVE_ERROR,
    leaderboard,
    scoped_tasks,
)

BASELINE = "seasonal_naive"


def _tasks(errors: dict[str, dict[str, float]], metric: str = "smape") -> pd.DataFrame:
    """{ticker: {system: task error}} → scoped leaderboard_tasks rows, one perturbation P0."""
    rows = [
        {
            "run_id": "r",
            "metric": metric,
            "ticker": ticker,
            "perturbation_id": "P0",
            "system_id": system,
            "test_error": value,
        }
        for ticker, by_system in errors.items()
        for system, value in by_system.items()
    ]
    return scoped_tasks(pd.DataFrame(rows))


def _board(errors: dict[str, dict[str, float]], metric: str = "smape") -> pd.DataFrame:
    board = leaderboard(_tasks(errors, metric), BASELINE, n_resamples=0)
    return board[board["scope"] == "all"].set_index("system_id")


def _independent(errors: dict[str, dict[str, float]], keep: list[str]):
    """Skill score, win rate and average rank of the kept tasks from numpy/scipy alone."""
    frame = pd.DataFrame(errors).T.loc[keep]
    systems = list(frame.columns)
    ratio = np.clip(
        frame.to_numpy() / frame[[BASELINE]].to_numpy(), MIN_RELATIVE_ERROR, MAX_RELATIVE_ERROR
    )
    skill = 1.0 - stats.gmean(ratio, axis=0)
    ranks = stats.rankdata(ratio, axis=1, method="average").mean(axis=0)
    wins = []
    for i in range(len(systems)):
        shares = [
            np.mean((ratio[:, i] < ratio[:, j]) + 0.5 * (ratio[:, i] == ratio[:, j]))
            for j in range(len(systems))
            if j != i
        ]
        wins.append(np.mean(shares))
    return (
        pd.Series(skill, systems),
        pd.Series(wins, systems),
        pd.Series(ranks, systems),
    )


ZERO_BASELINE = {
    # T1: the baseline's SMAPE is exactly 0 (it repeated a flat week): a / 0 has no value
    "T1": {BASELINE: 0.0, "a": 0.5, "c": 0.0},
    "T2": {BASELINE: 1.0, "a": 2.0, "c": 0.5},
    "T3": {BASELINE: 2.0, "a": 1.0, "c": 4.0},
    "T4": {BASELINE: 0.4, "a": 0.1, "c": 0.3},
    # a tiny but positive baseline error is an ordinary task: a's ratio 5000 clips to 100
    "T5": {BASELINE: 1e-4, "a": 0.5, "c": 1e-4},
}


def test_a_zero_baseline_task_is_counted_named_and_nobodys_failure():
    board = _board(ZERO_BASELINE)
    assert set(board.index) == {BASELINE, "a", "c"}
    assert (board["n_tasks"] == 4).all()
    assert (board["n_tasks_zero_baseline"] == 1).all()
    assert (board["num_failures"] == 0).all()
    for reason in board["reason"]:
        assert reason == "1 task(s) left out: seasonal_naive's smape is 0 there (no relative error)"


def test_scores_without_the_zero_baseline_task_equal_scipy():
    board = _board(ZERO_BASELINE)
    skill, win, rank = _independent(ZERO_BASELINE, ["T2", "T3", "T4", "T5"])
    for system in board.index:
        assert board.loc[system, "skill_score"] == pytest.approx(skill[system], abs=1e-12)
        assert board.loc[system, "win_rate"] == pytest.approx(win[system], abs=1e-12)
        assert board.loc[system, "average_rank"] == pytest.approx(rank[system], abs=1e-12)


def test_no_zero_baseline_task_counts_zero_and_says_nothing():
    errors = {t: v for t, v in ZERO_BASELINE.items() if t != "T1"}
    board = _board(errors)
    assert (board["n_tasks_zero_baseline"] == 0).all()
    assert board["reason"].isna().all()


def test_only_zero_baseline_tasks_leave_nothing_to_rank_and_say_why():
    board = _board({"T1": {BASELINE: 0.0, "a": 0.5}, "T2": {BASELINE: 0.0, "a": 0.0}})
    assert board["skill_score"].isna().all()
    assert (board["n_tasks_zero_baseline"] == 2).all()
    assert (board["num_failures"] == 0).all()
    assert set(board["reason"]) == {
        "no task left to rank; 2 task(s) left out: seasonal_naive's smape is 0 there "
        "(no relative error)"
    }


def test_a_failed_task_beside_a_zero_baseline_task_is_still_the_systems_failure():
    errors = dict(ZERO_BASELINE) | {"T6": {BASELINE: 1.0, "a": np.nan, "c": 2.0}}
    board = _board(errors)
    assert board.loc["a", "num_failures"] == 1
    assert board.loc["c", "num_failures"] == 0
    assert (board["n_tasks"] == 4).all()
    assert (board["n_tasks_zero_baseline"] == 1).all()


CLIPPED = {
    # relative errors 150 and 400 both clip to 100 (tie for last); 0.004 and 0.002 both clip
    # to 0.01 (tie for first); on T3 a and b tie at 100 with c below
    "T1": {BASELINE: 1.0, "a": 150.0, "b": 400.0, "c": 2.0},
    "T2": {BASELINE: 1.0, "a": 0.004, "b": 0.002, "c": 0.5},
    "T3": {BASELINE: 2.0, "a": 1000.0, "b": 201.0, "c": 150.0},
    "T4": {BASELINE: 1.0, "a": 0.5, "b": 3.0, "c": 0.5},
}


def test_systems_clipped_at_the_same_bound_share_the_mean_rank_as_scipy():
    board = _board(CLIPPED, metric="mase")
    skill, win, rank = _independent(CLIPPED, list(CLIPPED))
    for system in board.index:
        assert board.loc[system, "average_rank"] == pytest.approx(rank[system], abs=1e-12)
        assert board.loc[system, "win_rate"] == pytest.approx(win[system], abs=1e-12)
        assert board.loc[system, "skill_score"] == pytest.approx(skill[system], abs=1e-12)
    # by hand, ranks per task (baseline, a, b, c) of the clipped relative errors:
    # T1 (1, 100, 100, 2): 1 3.5 3.5 2; T2 (1, 0.01, 0.01, 0.5): 4 1.5 1.5 3;
    # T3 (1, 100, 100, 75): 1 3.5 3.5 2; T4 (1, 0.5, 3, 0.5): 3 1.5 4 1.5
    assert board.loc["a", "average_rank"] == pytest.approx((3.5 + 1.5 + 3.5 + 1.5) / 4)
    assert board.loc["b", "average_rank"] == pytest.approx((3.5 + 1.5 + 3.5 + 4) / 4)
    assert board.loc[BASELINE, "average_rank"] == pytest.approx((1 + 4 + 1 + 3) / 4)
    assert board.loc["c", "average_rank"] == pytest.approx((2 + 3 + 2 + 1.5) / 4)


def test_a_lone_system_keeps_its_reason_beside_the_zero_baseline_note():
    board = _board({"T1": {BASELINE: 0.0}, "T2": {BASELINE: 1.0}})
    assert board.loc[BASELINE, "reason"] == (
        "a lone system has no win rate; 1 task(s) left out: seasonal_naive's smape is 0 there "
        "(no relative error)"
    )
    assert board.loc[BASELINE, "n_tasks"] == 1
