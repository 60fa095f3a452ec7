"""The suites' Python marts against hand-worked numbers: the reasoning suite's predict-median
baseline on a skewed history, the per-item context gain and series gap (signs), and the
interpretability suite's rule against near-uniform attention (round 4 of the planted
errors, tests/planted/round4_suites.json)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.reasoning_responses import forecast_response
from tsrate.suites.interpretability.marts import NEAR_UNIFORM_ENTROPY, rating_scores
from tsrate.suites.reasoning.marts import forecast_errors, item_values

#: median 0, mean 2.5: a baseline that predicted the mean would be told apart
SKEWED = [0.0, 0.0, 0.0, 10.0]


def forecast_row(system, item, condition, forecast, future, history=SKEWED):
    """A response answered with ``forecast``, or unanswered where it is None."""
    return forecast_response(system, item, forecast, future, history, condition=condition,
                             answered=forecast is not None)  # fmt: skip


def test_the_baseline_predicts_the_median_of_the_history():
    """Paper Section 6: the "predict median" baseline forecasts the history's median (0 for
    [0, 0, 0, 10]; its mean would be 2.5) at every step. Against the future [1, 1] its
    errors are 1, 1: MAE 1 / sd and MSE 1 / sd^2 with the history's population sd
    (sqrt(18.75)), MAE 1 / 10 on the min-max scale (range 10). An unusable forecast on
    the item, where the only usable one is exact, is charged the baseline's error."""
    sd = np.std(SKEWED)  # numpy's default ddof 0: the population sd
    assert sd == pytest.approx(np.sqrt(18.75))
    rows = [
        forecast_row("exact", "i1", "without_context", [1.0, 1.0], [1.0, 1.0]),
        forecast_row("mute", "i1", "without_context", None, [1.0, 1.0]),
    ]
    scored = forecast_errors(pd.DataFrame(rows)).set_index("system_id")
    assert scored.loc["exact", "baseline_mae"] == pytest.approx(1 / sd)
    assert scored.loc["exact", "baseline_mse"] == pytest.approx(1 / sd**2)
    assert scored.loc["exact", "baseline_mae_minmax"] == pytest.approx(1 / 10)
    assert scored.loc["exact", "mae"] == 0.0
    assert scored.loc["mute", "mae"] == pytest.approx(1 / sd)  # the baseline's error
    assert scored.loc["mute", "mse"] == pytest.approx(1 / sd**2)


def test_item_values_gain_is_without_minus_with_context_and_gap_with_minus_without_series():
    """The per-item values the rating stability resamples must be the marts' own signs:
    context_gain = MAE without context - MAE with it (positive = context helps; here
    item i1: 2/sd - 1/sd), series_gap = right with the series - right without (item q1:
    right with, wrong without -> +1)."""
    sd = np.std(SKEWED)
    rows = [
        forecast_row("s", "i1", "without_context", [3.0, 3.0], [1.0, 1.0]),  # errors 2, 2
        forecast_row("s", "i1", "with_context", [2.0, 2.0], [1.0, 1.0]),  # errors 1, 1
    ]
    scored = forecast_errors(pd.DataFrame(rows))
    choice = pd.DataFrame(
        {
            "suite_run_id": ["run", "run"],
            "task": ["qa_single", "qa_single"],
            "item_id": ["q1", "q1"],
            "system_id": ["s", "s"],
            "condition": ["with_series", "without_series"],
            "is_correct": [True, False],
            "is_answered": [True, True],
            "parse_ok": [True, True],
        }
    )
    values = item_values(choice, scored).set_index(["metric", "item_id"])["value"]
    assert values[("context_gain", "i1")] == pytest.approx(2 / sd - 1 / sd)
    assert values[("series_gap", "q1")] == 1.0
    assert values[("accuracy", "q1")] == 1.0


def _interp_frames(entropy: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    keys = {"suite_run_id": ["r"], "variant_id": ["v"], "model_id": ["m"], "in_main_study": [True]}
    prediction = pd.DataFrame({**keys, "test_mse_mean": [1.0], "test_mse_cv": [0.1]})
    correctness = pd.DataFrame(
        {
            "suite_run_id": ["r"] * 3,
            "variant_id": ["v"] * 3,
            "model_id": ["m"] * 3,
            "in_main_study": [True] * 3,
            "measure": ["beta_spearman", "beta_auroc", "beta_entropy"],
            "mean_margin": [0.4, 0.3, np.nan],
            "mean_value": [0.6, 0.8, entropy],
        }
    )
    stability = pd.DataFrame({**keys, "attention": ["beta"], "mean_std": [0.05]})
    return prediction, correctness, stability


@pytest.mark.parametrize(
    "entropy, unrated",
    [
        # (0.6, 0.4) over 2 series: -(0.6 ln 0.6 + 0.4 ln 0.4) / ln 2 = 0.971, peaked enough
        (-(0.6 * np.log(0.6) + 0.4 * np.log(0.4)) / np.log(2), False),
        (0.95, False),
        (0.989, False),
        (0.99, True),  # at the threshold: near-uniform
        (0.999, True),
        (np.nan, True),  # undefined: cannot tell whether the attention is peaked
    ],
)
def test_only_peaked_attention_has_its_margins_and_spread_rated(entropy, unrated):
    """The rule against uniform attention: the two correctness margins and beta_std are
    left unrated (with a reason) when the mean normalised beta entropy is at or above 0.99
    or undefined; test MSE and its CV are always rated."""
    assert NEAR_UNIFORM_ENTROPY == 0.99
    scores = rating_scores(*_interp_frames(entropy)).set_index("metric")
    attention = ["beta_spearman_margin", "beta_auroc_margin", "beta_std"]
    assert scores.loc[attention, "unrated_reason"].notna().tolist() == [unrated] * 3
    assert scores.loc[["test_mse", "test_mse_cv"], "unrated_reason"].isna().all()
    assert scores.loc["beta_spearman_margin", "raw_score"] == 0.4


def _quadrant_answers(system: str, right: dict[int, int], n: int = 50) -> list[dict]:
    rows = []
    for quadrant, k in right.items():
        for i in range(n):
            rows.append(
                {
                    "suite_run_id": "run",
                    "prompting": "zero_shot",
                    "system_id": system,
                    "dataset": "d",
                    "task": "retrieval",
                    "quadrant": quadrant,
                    "correct": i < k,
                }
            )
    return rows


def test_position_bias_is_judged_on_holm_adjusted_p_values():
    """Paper Section 4.3 as a test: each quadrant's accuracy against the other three's with
    the pooled two-proportion z test (statsmodels' proportions_ztest), the p-values of the
    suite run Holm-corrected together (statsmodels' multipletests, 'holm'); bias = Holm
    p < 0.05. Quadrant 1 right 35 of 50 against 75 of 150 elsewhere: p = 0.014 unadjusted,
    but 4 x 0.014 = 0.055 after Holm over the run's four tests: NOT a bias. Every quadrant
    holds 50 prompts, above the 41 the power rule asks for a 1 : 3 split."""
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    from tsrate.suites.understanding.marts import position_bias_table

    right = {1: 35, 2: 25, 3: 25, 4: 25}
    table = position_bias_table(pd.DataFrame(_quadrant_answers("s", right)))
    table = table.set_index("quadrant").sort_index()
    raw = []
    for q in (1, 2, 3, 4):
        k1, k2 = right[q], sum(right.values()) - right[q]
        raw.append(proportions_ztest([k1, k2], [50, 150])[1])
    holm = multipletests(raw, method="holm")[1]
    assert table["p_value"].to_numpy(float) == pytest.approx(raw)
    assert table["p_holm"].to_numpy(float) == pytest.approx(holm)
    assert raw[0] < 0.05 < holm[0]
    assert table["judgeable"].all()
    assert not table["position_bias"].astype(bool).any()
    # a stronger quadrant-1 effect (42 of 50) survives the correction
    strong = position_bias_table(pd.DataFrame(_quadrant_answers("s", {**right, 1: 42})))
    assert strong.set_index("quadrant").loc[1, "position_bias"]


def test_context_gain_is_rated_on_the_mae_gain():
    """The rating spec (seeds/suite_rating_specs.csv): context_gain = forecast MAE without
    context minus MAE with it; the per-item values resampled for its stability are MAE
    differences too, so the rated score is rsn_context_effects.mae_gain, not mse_gain."""
    from tsrate.suites.reasoning.marts import rating_scores

    keys = {"suite_run_id": ["r"], "system_id": ["s"]}
    accuracy = pd.DataFrame({**keys, "task": ["qa_single"], "accuracy": [0.5], "series_gap": [0.1]})
    errors = pd.DataFrame(
        {**keys, "condition": ["with_context"], "mae": [1.0], "mse": [2.0], "crps": [0.8]}
    )
    context = pd.DataFrame({**keys, "mae_gain": [0.25], "mse_gain": [4.0]})
    scores = rating_scores(accuracy, errors, context).set_index(["metric", "task"])["raw_score"]
    assert scores[("context_gain", "forecast")] == 0.25
    assert scores[("mae", "forecast_with_context")] == 1.0
    assert scores[("series_gap", "qa_single")] == 0.1
