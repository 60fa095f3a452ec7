"""Which leaderboard rows carry the zero-baseline note: every ranked system's row of every
(run, scope, metric) group whose baseline error is exactly 0 on some task, and no other row.

The expected count per scope is read from the task errors themselves (the tasks of the scope
whose baseline error is 0), not from the mart. Two perturbations give three groups (``all``,
``P0``, ``P1``), and a system with no error on any task adds a row of its own before the
ranked ones, so a note written into the wrong rows of ``rows`` shows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.robustness.marts.leaderboard import leaderboard, scoped_tasks

BASELINE = "seasonal_naive"
#: (ticker, perturbation) → system → task error; the baseline is 0 on (T1, P0) alone
ERRORS = {
    ("T1", "P0"): {BASELINE: 0.0, "a": 0.5, "b": 0.2, "dead": np.nan},
    ("T2", "P0"): {BASELINE: 1.0, "a": 2.0, "b": 0.5, "dead": np.nan},
    ("T3", "P0"): {BASELINE: 2.0, "a": 1.0, "b": 4.0, "dead": np.nan},
    ("T1", "P1"): {BASELINE: 0.4, "a": 0.1, "b": 0.3, "dead": np.nan},
    ("T2", "P1"): {BASELINE: 1.5, "a": 0.5, "b": 3.0, "dead": np.nan},
}


def _board(errors: dict) -> pd.DataFrame:
    rows = [
        {
            "run_id": "r",
            "metric": "smape",
            "ticker": ticker,
            "perturbation_id": perturbation,
            "system_id": system,
            "test_error": value,
        }
        for (ticker, perturbation), by_system in errors.items()
        for system, value in by_system.items()
    ]
    return leaderboard(scoped_tasks(pd.DataFrame(rows)), BASELINE, n_resamples=0)


def _zero_tasks(errors: dict, scope: str) -> int:
    return sum(
        by_system[BASELINE] == 0
        for (_, perturbation), by_system in errors.items()
        if scope in ("all", perturbation)
    )


def test_every_ranked_row_of_each_scope_names_its_own_zero_baseline_tasks():
    board = _board(ERRORS)
    assert set(board["scope"]) == {"all", "P0", "P1"}
    for scope, rows in board.groupby("scope"):
        zero = _zero_tasks(ERRORS, scope)
        assert (rows["n_tasks_zero_baseline"] == zero).all(), scope
        note = f"{zero} task(s) left out: {BASELINE}'s smape is 0 there (no relative error)"
        ranked = rows[rows["system_id"] != "dead"].set_index("system_id")
        assert set(ranked.index) == {BASELINE, "a", "b"}
        for system, reason in ranked["reason"].items():
            if zero:
                assert reason == note, (scope, system)
            else:
                assert pd.isna(reason), (scope, system)


def test_the_system_without_errors_keeps_its_own_reason_and_fails_every_task():
    board = _board(ERRORS)
    dead = board[board["system_id"] == "dead"].set_index("scope")
    for scope in ("all", "P0", "P1"):
        tasks = sum(scope in ("all", p) for _, p in ERRORS)
        assert dead.loc[scope, "reason"] == "no smape for any task"
        assert dead.loc[scope, "num_failures"] == tasks
