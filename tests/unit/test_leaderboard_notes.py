"""A group with both a dropped task (a system lacks it) and a zero-baseline task: every ranked
row carries its own reason, then the drop note, then the zero-baseline note, joined by "; ".
The expected counts are read from the hand-built task errors, not from the mart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.robustness.marts.leaderboard import leaderboard, scoped_tasks

BASELINE = "seasonal_naive"
#: ticker → system → task error (one perturbation, P0): b lacks T2; the baseline is 0 on T3
ERRORS = {
    "T1": {BASELINE: 1.0, "a": 0.5, "b": 0.8},
    "T2": {BASELINE: 2.0, "a": 1.0, "b": np.nan},
    "T3": {BASELINE: 0.0, "a": 0.3, "b": 0.4},
    "T4": {BASELINE: 2.0, "a": 1.5, "b": 1.0},
}


def _board(errors: dict) -> pd.DataFrame:
    rows = [
        {
            "run_id": "r",
            "metric": "smape",
            "ticker": ticker,
            "perturbation_id": "P0",
            "system_id": system,
            "test_error": value,
        }
        for ticker, by_system in errors.items()
        for system, value in by_system.items()
        if not np.isnan(value)
    ]
    return leaderboard(scoped_tasks(pd.DataFrame(rows)), BASELINE, n_resamples=0)


def _notes(errors: dict, scope: str) -> tuple[str, str]:
    lacking = sum(any(np.isnan(v) for v in e.values()) for e in errors.values())
    zero = sum(e[BASELINE] == 0 for e in errors.values())
    where = "; compare the per-perturbation scopes" if scope == "all" else ""
    drop = (
        f"{lacking} of {len(errors)} tasks dropped for every system: no smape from b (1) "
        f"(fev's missing_strategy 'drop'{where})"
    )
    return drop, f"{zero} task(s) left out: {BASELINE}'s smape is 0 there (no relative error)"


def test_every_ranked_row_says_the_drop_then_the_zero_baseline_note():
    board = _board(ERRORS)
    assert set(board["scope"]) == {"all", "P0"}
    for scope, rows in board.groupby("scope"):
        drop, zero = _notes(ERRORS, str(scope))
        assert set(rows["system_id"]) == {BASELINE, "a", "b"}
        assert (rows["reason"] == f"{drop}; {zero}").all(), scope
        assert (rows["n_tasks"] == len(ERRORS) - 2).all()  # T2 dropped, T3 left out


def test_a_group_without_either_note_keeps_an_empty_reason():
    errors = {t: e for t, e in ERRORS.items() if t in ("T1", "T4")}
    board = _board(errors)
    assert board["reason"].isna().all()
    assert (board["n_tasks"] == 2).all()
