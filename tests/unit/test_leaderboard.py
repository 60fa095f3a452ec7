"""fev's leaderboard rules on hand-worked task errors (ties, clipping, failures, no baseline)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.leaderboard_tasks import board_tasks as tasks
from tsrate.robustness.marts.leaderboard import leaderboard, win_rates


def test_ties_count_one_half_and_clipping_bounds_the_ratio():
    board = leaderboard(
        tasks({"seasonal_naive": [1.0, 2.0], "a": [0.001, 2.0], "b": [1000.0, 1.0]}),
        n_resamples=0,
    ).set_index("system_id")
    # relative errors: a = [0.01 (clipped from 0.001), 1.0], b = [100 (clipped), 0.5]
    assert board.loc["a", "skill_score"] == pytest.approx(1 - np.sqrt(0.01 * 1.0))
    assert board.loc["b", "skill_score"] == pytest.approx(1 - np.sqrt(100 * 0.5))
    # a vs baseline: task 0 win, task 1 tie -> 0.75; a vs b: win, loss -> 0.5
    assert board.loc["a", "win_rate"] == pytest.approx((0.75 + 0.5) / 2)
    assert board.loc["seasonal_naive", "win_rate"] == pytest.approx((0.25 + 0.5) / 2)
    np.testing.assert_allclose(win_rates(np.array([[1.0, 1.0]])), [0.5, 0.5])


def test_a_failed_task_is_dropped_for_all_and_counted():
    board = leaderboard(
        tasks({"seasonal_naive": [1.0, 1.0, 1.0], "a": [0.5, np.nan, 0.5], "b": [2.0, 2.0, 2.0]}),
        n_resamples=0,
    ).set_index("system_id")
    assert (board["n_tasks"] == 2).all()
    assert board.loc["a", "num_failures"] == 1 and board.loc["b", "num_failures"] == 0
    assert board.loc["a", "skill_score"] == pytest.approx(0.5)


def test_without_the_baseline_every_score_is_null_with_the_reason():
    board = leaderboard(tasks({"a": [1.0], "b": [2.0]}), n_resamples=0)
    assert board["skill_score"].isna().all()
    assert board["reason"].str.contains("baseline seasonal_naive is not in the run").all()


def test_block_bootstrap_intervals_equal_a_plain_resampling_loop():
    from tsrate.robustness.marts.leaderboard import _intervals, skill_scores

    relative = np.random.default_rng(0).uniform(0.5, 2.0, size=(12, 3))
    blocks = np.repeat(np.array(["A", "B", "C", "D"]), 3)
    rng = np.random.default_rng(7)
    skills, wins = [], []
    for drawn in rng.integers(0, 4, size=(50, 4)):  # the same draws, resample by resample
        rows = np.concatenate([np.flatnonzero(blocks == "ABCD"[i]) for i in drawn])
        skills.append(skill_scores(relative[rows]))
        wins.append(win_rates(relative[rows]))
    low, high, win_low, win_high = _intervals(relative, blocks, 50, 7)
    np.testing.assert_allclose(low, np.quantile(skills, 0.025, axis=0))
    np.testing.assert_allclose(high, np.quantile(skills, 0.975, axis=0))
    np.testing.assert_allclose(win_low, np.quantile(wins, 0.025, axis=0))
    np.testing.assert_allclose(win_high, np.quantile(wins, 0.975, axis=0))


def test_trained_on_this_dataset_from_the_leakage_flags():
    """fev's flag per system: True when any window leaks, False when every window is known
    not to, None (unknown) when some window is unknown and none leaks."""
    import pandas as pd

    from tsrate.robustness.fev_export import trained_on_this_dataset

    flags = pd.DataFrame(
        {
            "system_id": ["vit", "vit", "naive", "naive", "chronos", "mixed", "mixed"],
            "in_training_data": [True, False, False, False, None, False, None],
        }
    )
    assert trained_on_this_dataset(flags) == {
        "vit": True,
        "naive": False,
        "chronos": None,
        "mixed": None,
    }


def test_skill_scores_use_scipys_geometric_mean():
    """The geometric mean is computed without importing scipy.stats (its import cost every
    build ~0.5 s): equal to scipy.stats.gmean, column by column."""
    import scipy.stats

    from tsrate.robustness.marts.leaderboard import skill_scores

    rng = np.random.default_rng(7)
    errors = np.clip(np.exp(rng.normal(0.0, 1.5, size=(40, 6))), 0.01, 100.0)
    np.testing.assert_allclose(
        skill_scores(errors), 1.0 - scipy.stats.gmean(errors, axis=0), rtol=1e-13, atol=0
    )
    assert skill_scores(np.array([[0.5], [2.0]]))[0] == pytest.approx(0.0)
