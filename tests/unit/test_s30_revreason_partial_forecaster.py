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


def test_a_held_back_forecaster_does_not_move_the_others_stability():
    # per item MAE: fracast forecast only i1 and i2, where it beats everyone
    per_item = {
        "naive": [1.0, 1.2, 6.0, 9.0],
        "arima": [1.1, 1.3, 5.0, 9.5],
        "median": [2.0, 2.2, 8.0, 8.0],
        "fracast": [0.2, 0.3, None, None],
    }
    rows = [
        (system, f"i{k + 1}", value)
        for system, values in per_item.items()
        for k, value in enumerate(values)
        if value is not None
    ]
    values = pd.DataFrame(rows, columns=["system_id", "item_id", "value"]).assign(
        suite_run_id=RUN, metric="mae", task="forecast_without_context"
    )
    means = values.groupby("system_id")["value"].agg(["mean", "size"])
    errors = pd.DataFrame(
        {
            "suite_run_id": RUN,
            "system_id": list(means.index),
            "condition": "without_context",
            "mae": means["mean"].to_numpy(),
            "mse": means["mean"].to_numpy(),
            "crps": means["mean"].to_numpy(),
            "n_items": means["size"].to_numpy(),
        }
    )
    empty = pd.DataFrame(columns=["suite_run_id", "system_id", "task", "accuracy", "series_gap"])
    context = pd.DataFrame(columns=["suite_run_id", "system_id", "mae_gain"])
    ratings = marts.rating_table(marts.rating_scores(empty, errors, context), 3)
    ratings = ratings[ratings["metric"] == "mae"]
    assert ratings.set_index("system_id")["rating"].isna().to_dict()["fracast"]
    got = marts.rating_stability_table(values, ratings, 3, 300, 0).set_index("system_id")
    # the same three systems with fracast never run: their shares must not differ
    alone = marts.rating_stability_table(
        values[values["system_id"] != "fracast"],
        ratings[ratings["system_id"] != "fracast"],
        3,
        300,
        0,
    ).set_index("system_id")
    for system in ("naive", "arima", "median"):
        assert got.loc[system, "share_at_rating"] == alone.loc[system, "share_at_rating"], system
    # the held-back system keeps its row, without a share; its score is undefined in the
    # resamples that draw neither i1 nor i2 (P = (2/4)^4 = 1/16 of them)
    assert pd.isna(got.loc["fracast", "share_at_rating"])
    assert 0.03 < got.loc["fracast", "n_resamples_undefined"] / 300 < 0.10
