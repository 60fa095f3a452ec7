"""A forecaster asked only some forecasting items (``--fracast N``) is not ranked against
systems scored on all of them.

The numbers are those of a real offline run (seed 11, 8 scenarios, 4 forecasting items,
length 60, ``--fracast 2``): fracast's mean normalised MAE over its 2 items is 1.558, the
others' over all 4 items 4.32 to 5.09. On fracast's own 2 items the others score arima
1.060, naive 1.177, context_rule 1.372, median 2.088: fracast is fourth of five there, yet
its smaller mean, over easier items, was ranked first. A mean over other items is not a
comparable score: it is held back with the reason, the others are ranked among themselves.
"""

from __future__ import annotations

import pandas as pd

from tsrate.suites.reasoning import marts

RUN = "r"
WITHOUT = [  # system, mean MAE, items forecast (without context)
    ("fracast", 1.557824, 2),
    ("naive", 4.323298, 4),
    ("arima", 4.331180, 4),
    ("context_rule", 4.547621, 4),
    ("median", 5.088049, 4),
]


def frames():
    accuracy = pd.DataFrame(
        {
            "suite_run_id": RUN,
            "system_id": ["random"],
            "task": ["etiological"],
            "accuracy": [0.5],
            "series_gap": [float("nan")],
        }
    )
    errors = pd.DataFrame(
        {
            "suite_run_id": RUN,
            "system_id": [s for s, _, _ in WITHOUT] + ["context_rule"],
            "condition": ["without_context"] * len(WITHOUT) + ["with_context"],
            "mae": [m for _, m, _ in WITHOUT] + [0.898575],
            "mse": [m**2 for _, m, _ in WITHOUT] + [0.9],
            "crps": [m for _, m, _ in WITHOUT] + [0.898575],
            "n_items": [n for _, _, n in WITHOUT] + [4],
        }
    )
    context = pd.DataFrame({"suite_run_id": RUN, "system_id": ["context_rule"], "mae_gain": [3.6]})
    return accuracy, errors, context


def test_a_forecaster_of_fewer_items_is_held_back_not_ranked_first():
    scores = marts.rating_scores(*frames())
    ratings = marts.rating_table(scores, 3)
    for metric in ("mae", "mse", "crps"):
        group = ratings[
            (ratings["metric"] == metric) & (ratings["task"] == "forecast_without_context")
        ]
        fracast = group[group["system_id"] == "fracast"].iloc[0]
        assert pd.isna(fracast["rating"]) and pd.isna(fracast["rank"]), metric
        assert "2 of the 4" in fracast["rating_reason"], fracast["rating_reason"]
        rated = group[group["rating"].notna()].sort_values("rank")
        assert list(rated["system_id"]) == ["naive", "arima", "context_rule", "median"], metric
        assert list(rated["rank"]) == [1, 2, 3, 4], metric


def test_systems_of_every_item_are_rated_as_before():
    scores = marts.rating_scores(*frames())
    assert scores["unrated_reason"].notna().sum() == 3  # fracast's mae, mse, crps only
    ratings = marts.rating_table(scores, 3)
    group = ratings[(ratings["metric"] == "mae") & (ratings["task"] == "forecast_with_context")]
    # the only system of its group: ranked (the kit rates no lone system on an open scale)
    assert list(group["system_id"]) == ["context_rule"] and list(group["rank"]) == [1]
    assert "forecasting items" not in str(group["rating_reason"].iloc[0])
