"""Honest scoring of the reasoning suite: every forecast counts (unusable ones penalised),
z-scored and min-max errors, bootstrap intervals and rating stability; hand-worked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
    return {
        "suite_run_id": "run",
        "prompt_hash": f"{system}-{item}-{condition}",
        "item_id": item,
        "system_id": system,
        "condition": condition,
        "category": "c",
        "task": "forecast",
        "is_answered": answered,
        "parse_ok": parsed and answered,
        "forecast": forecast if parsed and answered else None,
        "series": HISTORY,
        "future": future,
        "is_correct": None,
    }


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
