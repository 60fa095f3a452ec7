"""Tests written for the mutation sweep of the leaderboard code
(tests/planted/sweep_stability_marts.json): win rates and skill against the seasonal naive
baseline, with ties and clipped relative errors, and the tasks each scope lists.

Every expectation is computed independently of the product, from the definitions written
out with NumPy on a small board worked by hand (derivations in the comments).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

# --------------------------------------------------------------------------- leaderboard

#: task errors (6 tasks, tickers X X Y Y Z Z) with ties and clipping; relative errors:
#: a [1, .5, .01 (0.005 clipped), 1, 2, 1], b [.5, .5, .01 (0.001 clipped), 2, 1, .5],
#: c [3, 1, 1, .5, 100 (200 clipped), .5], the baseline 1 everywhere.
BOARD = {
    "seasonal_naive": [1.0, 2.0, 1.0, 4.0, 1.0, 2.0],
    "a": [1.0, 1.0, 0.005, 4.0, 2.0, 2.0],
    "b": [0.5, 1.0, 0.001, 8.0, 1.0, 1.0],
    "c": [3.0, 2.0, 1.0, 2.0, 200.0, 1.0],
}
TICKERS = ["X", "X", "Y", "Y", "Z", "Z"]


def board_tasks(errors: dict[str, list[float]], tickers=TICKERS) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id="r", scope="all", metric="mase", task_id=f"{t} P1.{i}", block_id=t)
            | dict(system_id=system, test_error=value)
            for system, values in errors.items()
            for i, (t, value) in enumerate(zip(tickers, values, strict=True))
        ]
    )


def fev_scores(relative: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Skill (1 - geometric mean), win rate (lower: 1, tie: 1/2, averaged over the other
    systems) and average rank (ties averaged) of a (tasks x systems) relative-error table,
    written out loop by loop."""
    n_tasks, n_sys = relative.shape
    skill = np.array(
        [1 - math.exp(sum(math.log(v) for v in relative[:, j]) / n_tasks) for j in range(n_sys)]
    )
    win = np.full(n_sys, np.nan)
    if n_sys > 1:
        for j in range(n_sys):
            shares = []
            for k in range(n_sys):
                if k != j:
                    points = [
                        1.0 if x < y else 0.5 if x == y else 0.0 for x, y in relative[:, [j, k]]
                    ]
                    shares.append(sum(points) / n_tasks)
            win[j] = sum(shares) / len(shares)
    ranks = np.array([sps.rankdata(row, method="average") for row in relative]).mean(axis=0)
    return skill, win, ranks


def test_leaderboard_of_four_systems_with_ties_against_a_direct_computation():
    """Every score of the mart from the definitions: skill, win rate (ties 1/2, the mean
    over three other systems -- not their median), average rank (mean over tasks of the
    average-tie ranks -- not the median), and the 95 % block-bootstrap intervals (tickers
    drawn with replacement by NumPy's generator with the mart's seed, all of a drawn ticker's
    tasks taken, the 2.5 % and 97.5 % quantiles over resamples)."""
    from tsrate.robustness.marts.leaderboard import leaderboard

    systems = sorted(BOARD)
    raw = np.array([BOARD[s] for s in systems]).T
    relative = np.clip(raw / raw[:, [systems.index("seasonal_naive")]], 0.01, 100.0)
    skill, win, ranks = fev_scores(relative)
    rng = np.random.default_rng(9)
    blocks = np.array(TICKERS)
    unique = np.unique(blocks)
    boot_skill, boot_win = [], []
    for drawn in rng.integers(0, len(unique), size=(40, len(unique))):
        rows_ = np.concatenate([np.flatnonzero(blocks == unique[i]) for i in drawn])
        s, w, _ = fev_scores(relative[rows_])
        boot_skill.append(s)
        boot_win.append(w)
    board = leaderboard(board_tasks(BOARD), n_resamples=40, seed=9).set_index("system_id")
    board = board.loc[systems]
    np.testing.assert_allclose(board["skill_score"], skill, rtol=1e-12)
    np.testing.assert_allclose(board["win_rate"], win, rtol=1e-12)
    np.testing.assert_allclose(board["average_rank"], ranks, rtol=1e-12)
    low, high = np.quantile(boot_skill, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(board["skill_score_lower"], low, rtol=1e-10)
    np.testing.assert_allclose(board["skill_score_upper"], high, rtol=1e-10)
    low, high = np.quantile(boot_win, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(board["win_rate_lower"], low, rtol=1e-10)
    np.testing.assert_allclose(board["win_rate_upper"], high, rtol=1e-10)
    assert (board["n_tasks"] == 6).all() and board["reason"].isna().all()
    # the example tells the rules apart: the median of the per-task ranks is not their mean,
    # and some relative errors are clipped at either end
    per_task = np.array([sps.rankdata(row, method="average") for row in relative])
    assert not np.allclose(np.median(per_task, axis=0), ranks)
    assert (relative == 0.01).sum() == 2 and (relative == 100.0).sum() == 1


def test_leaderboard_of_two_systems_and_of_the_baseline_alone():
    """Two systems: win rates and their intervals are defined, no reason. The baseline
    alone: skill 0 (every relative error 1), no win rate, the reason says why; with two
    tickers or more its skill interval is [0, 0]; with one ticker there is no interval at
    all (a resample could only repeat the data)."""
    from tsrate.robustness.marts.leaderboard import leaderboard

    pair = {k: BOARD[k] for k in ("seasonal_naive", "a")}
    board = leaderboard(board_tasks(pair), n_resamples=20, seed=1).set_index("system_id")
    # a vs baseline: relative a [1, .5, .01, 1, 2, 1]: wins on tasks 1, 2, ties 0, 3, 5,
    # loses 4 -> (2 + 1.5) / 6 = 7/12; the baseline 5/12
    assert board.loc["a", "win_rate"] == pytest.approx(7 / 12)
    assert board.loc["seasonal_naive", "win_rate"] == pytest.approx(5 / 12)
    assert board[["win_rate_lower", "win_rate_upper", "skill_score_lower"]].notna().all().all()
    assert board["reason"].isna().all()
    alone = {"seasonal_naive": BOARD["seasonal_naive"]}
    row = leaderboard(board_tasks(alone), n_resamples=20, seed=1).iloc[0]
    assert row["skill_score"] == 0.0 and pd.isna(row["win_rate"])
    assert (row["skill_score_lower"], row["skill_score_upper"]) == (0.0, 0.0)
    assert pd.isna(row["win_rate_lower"]) and pd.isna(row["win_rate_upper"])
    assert row["reason"] == "a lone system has no win rate"
    two_tickers = leaderboard(board_tasks(pair, ["X"] * 3 + ["Y"] * 3), n_resamples=20, seed=1)
    assert two_tickers[["skill_score_lower", "win_rate_upper"]].notna().all().all()
    one_ticker = leaderboard(board_tasks(pair, ["X"] * 6), n_resamples=20, seed=1)
    assert one_ticker[["skill_score_lower", "win_rate_upper"]].isna().all().all()
    assert one_ticker["skill_score"].notna().all()
    row = leaderboard(board_tasks(alone), n_resamples=0).iloc[0]
    assert row["skill_score"] == 0.0 and pd.isna(row["win_rate"])


def test_scoped_tasks_list_every_task_under_all_and_under_its_perturbation():
    from tsrate.robustness.marts.leaderboard import scoped_tasks

    tasks = pd.DataFrame(
        {
            "run_id": "r",
            "metric": "mase",
            "ticker": ["AAA", "BBB"],
            "perturbation_id": ["P1", "P2"],
            "system_id": "a",
            "test_error": [1.0, 2.0],
        }
    )
    out = scoped_tasks(tasks)
    got = out[["scope", "task_id", "block_id", "test_error"]].to_records(index=False).tolist()
    assert sorted(got) == sorted(
        [
            ("all", "AAA P1", "AAA", 1.0),
            ("all", "BBB P2", "BBB", 2.0),
            ("P1", "AAA P1", "AAA", 1.0),
            ("P2", "BBB P2", "BBB", 2.0),
        ]
    )
