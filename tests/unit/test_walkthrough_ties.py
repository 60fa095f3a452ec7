"""One model's forecasts imported under three ids (a CSV, a Parquet file with quantiles, and a
copy) must be rated alike. On the walk-through their MASE on P0 was 3.4781964783883512,
3.4781964783883499 and 3.4781964783883517 (the order of the additions of DuckDB's parallel
mean), so the distinct-score rule gave one of them rating 1 and the others 2, three ranks,
and the leaderboard three win rates (0.508, 0.518, 0.474) for the same forecasts.

The scores below are the walk-through's, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.noise import snap_row_ties, snap_ties
from tsrate.methods.ratings import bootstrap_summary, rate_matrix, ratings_frame
from tsrate.robustness.marts.leaderboard import leaderboard, scoped_tasks

#: marts.ratings, MASE on P0 of the default study with the three imports beside the six systems
MASE_P0 = {
    "naive": 3.2435679,
    "fracast": 3.3318402,
    "bad_model": 3.4781964783883512204,
    "drift_csv": 3.4781964783883498882,
    "drift_q": 3.4781964783883516645,
    "seasonal_naive": 3.6146122,
    "arima": 3.9077458,
    "random": 9.5421017,
    "biased": 395.8470521,
}
COPIES = ["bad_model", "drift_csv", "drift_q"]


def _rated(scores: dict[str, float]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {"metric": "mase", "perturbation_id": "P0", "system_id": list(scores)}
    ).assign(raw_score=list(scores.values()))
    return ratings_frame(frame, 3, {"mase": False}).set_index("system_id")


def test_copies_of_one_model_share_a_rating_and_a_rank():
    rated = _rated(MASE_P0)
    assert rated.loc[COPIES, "rating"].nunique() == 1, rated
    assert rated.loc[COPIES, "rank"].nunique() == 1, rated
    assert rated.loc[COPIES, "raw_score"].nunique() == 1
    # 7 distinct scores (the copies' is one) split [3, 2, 2]: naive, fracast, the copies
    assert rated.loc["naive", "rating"] == 1 and rated.loc["biased", "rating"] == 3
    assert rated.loc["drift_csv", "rating"] == 1 and rated.loc["drift_csv", "rank"] == 3
    assert rated.loc["seasonal_naive", "rating"] == 2 and rated.loc["seasonal_naive", "rank"] == 6


def test_scores_apart_by_more_than_noise_stay_apart():
    scores = {"a": 1.0, "b": 1.0 + 1e-9, "c": 1.0 + 2e-9}
    rated = _rated(scores)
    assert list(rated.loc[["a", "b", "c"], "rating"]) == [1, 2, 3]
    assert list(snap_ties([1.0, 1.0 + 1e-9, 1.0 + 1e-13, np.nan])[:3]) == [1.0, 1.0 + 1e-9, 1.0]
    assert np.isnan(snap_ties([1.0, np.nan])[1])


def test_the_bootstrap_rates_noisy_copies_alike_in_every_resample():
    values = np.array(list(MASE_P0.values()))
    noisy = np.vstack([values, values * (1 + np.array([0, 0, 2e-16, -2e-16, 3e-16, 0, 0, 0, 0]))])
    ratings = rate_matrix(noisy, 3)
    copies = [list(MASE_P0).index(name) for name in COPIES]
    assert all(len(set(row[copies])) == 1 for row in ratings), ratings
    groups = pd.DataFrame({"system_id": list(MASE_P0), "perturbation_id": "P0"})
    summary = bootstrap_summary(groups, values, noisy, 3, 0.95)
    point = summary.drop_duplicates("system_id").set_index("system_id")["rating"]
    assert (point == _rated(MASE_P0)["rating"].reindex(point.index)).all()


def test_copies_of_one_model_get_one_win_rate_and_one_average_rank():
    rng = np.random.default_rng(0)
    rows = []
    for ticker in ["AAPL", "MSFT", "PFE"]:
        for perturbation in ["P0", "P1"]:
            base, model = rng.uniform(1, 2), rng.uniform(1, 2)
            errors = {"seasonal_naive": base, "other": rng.uniform(1, 2)}
            # the same forecasts' error, added in three orders
            for name, bits in zip(COPIES, [0.0, 1e-16, -1e-16], strict=True):
                errors[name] = model * (1 + bits)
            for system_id, error in errors.items():
                rows.append(("run", "mase", ticker, perturbation, system_id, error))
    tasks = pd.DataFrame(
        rows,
        columns=["run_id", "metric", "ticker", "perturbation_id", "system_id", "test_error"],
    )
    board = leaderboard(scoped_tasks(tasks), n_resamples=50, seed=1)
    board = board[board["scope"] == "all"].set_index("system_id")
    for column in ["win_rate", "average_rank", "skill_score", "win_rate_lower", "win_rate_upper"]:
        assert board.loc[COPIES, column].nunique() == 1, board[[column]]


def test_row_ties_follow_each_row_alone():
    x = np.array([[1.0, 1.0 + 1e-14, 5.0], [2.0, 2.0 + 1e-6, np.nan]])
    snapped = snap_row_ties(x)
    assert snapped[0, 1] == 1.0 and snapped[0, 2] == 5.0
    assert snapped[1, 1] == 2.0 + 1e-6 and np.isnan(snapped[1, 2])
