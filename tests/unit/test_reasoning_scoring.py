"""Honest scoring of the reasoning suite: every forecast counts (unusable ones penalised),
z-scored and min-max errors, bootstrap intervals and rating stability; hand-worked."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from tests.support.reasoning_responses import forecast_response
from tsrate.suites.reasoning.marts import (
    forecast_errors,
    forecast_intervals,
    item_values,
    normalised_errors,
    rating_stability_table,
    rating_table,
)

HISTORY = [0.0, 1.0, 2.0, 3.0, 4.0]  # mean 2, population sd sqrt(2), range 4, median 2


def response(
    system, item, forecast, future, *, parsed=True, answered=True, condition="without_context"
):
    return forecast_response(system, item, forecast, future, HISTORY, condition=condition,
                             parsed=parsed, answered=answered)  # fmt: skip


def test_normalised_errors_hand_worked():
    # errors [0, 1]: MAE 0.5, MSE 0.5 before scaling
    mae, mse = normalised_errors(HISTORY, [5.0, 6.0], [5.0, 5.0])
    assert mae == pytest.approx(0.5 / np.sqrt(2)) and mse == pytest.approx(0.5 / 2)
    mae, mse = normalised_errors(HISTORY, [5.0, 6.0], [5.0, 5.0], "minmax")
    assert mae == pytest.approx(0.5 / 4) and mse == pytest.approx(0.5 / 16)
    assert normalised_errors([3.0, 3.0], [4.0], [3.0], "minmax") == (1.0, 1.0)  # constant: scale 1


def test_an_unusable_forecast_costs_the_worst_error_on_its_item():
    future = [2.0, 2.0]
    rows = [
        response("good", "i1", [2.0, 2.0], future),  # exact: 0
        response("bad", "i1", [6.0, 6.0], future),  # |4| / sqrt 2
        response("garbage", "i1", None, future, parsed=False),
        response("good", "i2", [9.0, 9.0], [9.0, 9.0]),
        response("bad", "i2", [8.0, 8.0], [9.0, 9.0]),  # |1| / sqrt 2, below the baseline
        response("garbage", "i2", None, [9.0, 9.0], answered=False),
    ]
    scored = forecast_errors(pd.DataFrame(rows)).set_index(["item_id", "system_id"])
    assert not scored.loc[("i1", "garbage"), "usable"] and scored["usable"].sum() == 4
    # i1: the worst usable error (bad's 4 / sqrt 2) beats the baseline's (median 2: 0)
    assert scored.loc[("i1", "garbage"), "mae"] == pytest.approx(4 / np.sqrt(2))
    assert scored.loc[("i1", "garbage"), "mae_minmax"] == pytest.approx(4 / 4)
    # i2: the baseline (median 2 against 9: 7 / sqrt 2) is worse than any forecast
    assert scored.loc[("i2", "garbage"), "mae"] == pytest.approx(7 / np.sqrt(2))
    assert scored.loc[("i2", "garbage"), "mse"] == pytest.approx(49 / 2)
    means = scored.groupby("system_id")["mae"].mean()
    assert means.idxmax() == "garbage"
    ratings = rating_table(
        pd.DataFrame(
            {
                "suite_run_id": "run",
                "metric": "mae",
                "task": "forecast_without_context",
                "system_id": means.index,
                "raw_score": means.to_numpy(),
            }
        ),
        3,
    ).set_index("system_id")
    assert ratings.loc["garbage", "rank"] == 3  # the largest error: last
    intervals = forecast_intervals(scored.reset_index()).set_index("system_id")
    for system, mean in means.items():
        assert intervals.loc[system, "mae_ci_low"] <= mean + 1e-12
        assert mean <= intervals.loc[system, "mae_ci_high"] + 1e-12
    # the means the mart shows: every item (penalties included); mae_parsed usable ones only
    assert intervals["mae"].to_dict() == pytest.approx(means.to_dict())
    assert intervals.loc["garbage", "n_scored"] == 0 and pd.isna(
        intervals.loc["garbage", "mae_parsed"]
    )
    assert intervals.loc["bad", "mae_parsed"] == pytest.approx(
        (4 / np.sqrt(2) + 1 / np.sqrt(2)) / 2
    )
    assert intervals.loc["bad", "baseline_mae"] == pytest.approx((0 + 7 / np.sqrt(2)) / 2)


def test_rating_stability_over_items():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        future = [float(rng.normal())] * 2
        rows.append(response("exact", f"i{i}", future, future))
        rows.append(response("close", f"i{i}", [future[0] + 0.01] * 2, future))
        rows.append(
            response("closer", f"i{i}", [future[0] + 0.0101 * rng.choice([-1, 1])] * 2, future)
        )
        rows.append(response("far", f"i{i}", [future[0] + 5.0] * 2, future))
    responses = pd.DataFrame(rows)
    scored = forecast_errors(responses)
    values = item_values(responses.iloc[0:0].assign(task="qa_single"), scored)
    means = values[values["metric"] == "mae"].groupby("system_id")["value"].mean()
    assert means.to_dict() == pytest.approx(scored.groupby("system_id")["mae"].mean().to_dict())
    published = rating_table(
        pd.DataFrame(
            {
                "suite_run_id": "run",
                "metric": "mae",
                "task": "forecast_without_context",
                "system_id": means.index,
                "raw_score": means.to_numpy(),
            }
        ),
        3,
    )
    stability = rating_stability_table(values, published, 3, resamples=100).set_index("system_id")
    assert stability.loc["far", "share_at_rating"] == 1.0  # 5 sd off: always the worst
    assert stability.loc["exact", "share_at_rating"] == 1.0  # 0 error: always the best
    assert stability["n_items"].eq(40).all()
    # every item's error is the same for "far" and "exact": a point interval at the score
    for system in ("far", "exact"):
        row = stability.loc[system]
        assert row["ci_low"] == pytest.approx(row["raw_score"]) == pytest.approx(row["ci_high"])
    assert (stability["ci_low"] <= stability["raw_score"] + 1e-12).all()
    assert (stability["raw_score"] <= stability["ci_high"] + 1e-12).all()


def test_rating_stability_re_rates_by_the_rule_of_the_published_ratings():
    """Each resample is re-rated like rsn_ratings: direction, ideal and worst value of the
    rating spec. A lone system is rated by the slice of [ideal 1, worst 0] holding its
    accuracy (L = 3, mirrored as higher is better): 0.5 is 0.5 from the ideal -> slice 2 ->
    rating 2. Over 6 items a resample's accuracy is k/6: k = 2 (0.667 from the ideal) and
    k = 3 (0.5) fall in slice 2; k <= 1 in slice 3, k >= 4 in slice 1 -- so the share is
    the share of resamples that drew 2 or 3 correct items, counted by hand. A lone system on
    series_gap (no ideal) is unrated: its share is null and the reason is kept."""
    correct = [1.0, 0.0] * 3  # 6 items, accuracy 0.5
    values = pd.DataFrame(
        {
            "suite_run_id": "run",
            "metric": ["accuracy"] * 6 + ["series_gap"] * 6,
            "task": "qa_single",
            "item_id": [f"i{i}" for i in range(6)] * 2,
            "system_id": "solo",
            "value": correct + [0.5, -0.5, 0.0, 0.5, 0.0, 0.0],
        }
    )
    scores = values.groupby(["suite_run_id", "metric", "task", "system_id"], as_index=False)[
        "value"
    ].mean()
    published = rating_table(scores.rename(columns={"value": "raw_score"}), 3)
    rated = published.set_index("metric")
    assert rated.loc["accuracy", "rating"] == 2  # lone, accuracy 0.5: the middle slice
    assert pd.isna(rated.loc["series_gap", "rating"])  # lone, no ideal: unrated
    assert "no ideal" in rated.loc["series_gap", "rating_reason"]
    stability = rating_stability_table(values, published, 3, resamples=200, seed=3)
    stability = stability.set_index("metric")
    # by hand: the same item draws; rated 2 when 2 or 3 of the 6 drawn items are correct
    digest = hashlib.sha256(b"reasoning|accuracy|qa_single").digest()[:4]
    rng = np.random.default_rng([3, int.from_bytes(digest, "little")])
    draws = [rng.integers(0, 6, 6) for _ in range(200)]
    expected = np.mean([np.array(correct)[d].sum() in (2.0, 3.0) for d in draws])
    assert stability.loc["accuracy", "share_at_rating"] == pytest.approx(expected)
    # the rated score's interval: the 2.5 / 97.5 % quantiles of the same resampled means
    means = [np.array(correct)[d].mean() for d in draws]
    assert (stability.loc["accuracy", "ci_low"], stability.loc["accuracy", "ci_high"]) == (
        pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    )
    # series_gap is unrated here, yet carries its interval (its own draws, by hand)
    gaps = np.array([0.5, -0.5, 0.0, 0.5, 0.0, 0.0])
    digest = hashlib.sha256(b"run|series_gap|qa_single").digest()[:4]
    rng = np.random.default_rng([3, int.from_bytes(digest, "little")])
    gap_means = [gaps[rng.integers(0, 6, 6)].mean() for _ in range(200)]
    assert (stability.loc["series_gap", "ci_low"], stability.loc["series_gap", "ci_high"]) == (
        pytest.approx(tuple(np.percentile(gap_means, [2.5, 97.5])))
    )
    assert stability.loc["series_gap", "ci_low"] < 0.0833 < stability.loc["series_gap", "ci_high"]
    assert pd.isna(stability.loc["series_gap", "share_at_rating"])
    assert stability.loc["series_gap", "rating_reason"] == rated.loc["series_gap", "rating_reason"]
    assert stability["rating_levels"].eq(3).all()
