"""The understanding suite counts series, not format copies: every interval, test and
stability resample treats the series (the sampled unit) as independent.

Checked against independent computations: statsmodels' Wilson interval of the uncopied
data, statsmodels' cluster-robust variance of a mean (the Rao-Scott design effect), and the
same tables computed on the data with every series asked once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.stats.proportion import proportion_confint

from tsrate.suites import intervals
from tsrate.suites.understanding.marts import (
    position_bias_table,
    rating_stability_table,
    rating_table,
    score_table,
    task_scores,
)
from tsrate.suites.understanding.report_figures import with_pooled_wilson
from tsrate.suites.understanding.report_prompting import chance_table

FORMATS = ("csv", "plain", "tsv", "json", "markdown", "spaces", "context", "symbol", "custom")
NO_OPTIONS = pd.DataFrame(columns=["prompt_key", "options"])


def copied(right: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Items and their series: every series' answer repeated k times (k formats)."""
    return np.repeat(right, k), np.repeat(np.arange(len(right)), k)


@pytest.mark.parametrize("k", [1, 3, 9])
def test_copies_of_every_series_give_the_interval_of_the_series(k):
    right = np.random.default_rng(4).random(45) < 0.8
    items, series = copied(right, k)
    expected = proportion_confint(int(right.sum()), 45, method="wilson")
    assert intervals.clustered_wilson_interval(items, series) == pytest.approx(expected)
    plain = intervals.wilson_interval(int(items.sum()), len(items))
    if k > 1:  # the prompt-counted interval is about sqrt(k) times too narrow
        width = plain[1] - plain[0]
        assert width * np.sqrt(k) == pytest.approx(expected[1] - expected[0], rel=0.1)


def test_design_effect_is_the_cluster_robust_variance_over_the_binomial_one():
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 12, 30)
    series = np.repeat(np.arange(30), sizes)
    shares = rng.random(30)
    items = (rng.random(len(series)) < shares[series]).astype(float)
    k, n = intervals.clustered_counts(items, series)
    fit = sm.OLS(items, np.ones(len(items))).fit(
        cov_type="cluster", cov_kwds={"groups": series, "use_correction": False}
    )
    p = items.mean()
    deff = max(float(fit.cov_params()[0, 0]) / (p * (1 - p) / len(items)), 1.0)
    assert deff > 1.5  # series answered alike: fewer effective prompts
    assert n == pytest.approx(len(items) / deff) and k / n == pytest.approx(p)


def test_all_right_counts_each_series_once():
    assert intervals.clustered_counts(np.ones(18), np.repeat([0, 1], 9)) == (2.0, 2.0)


def answer_rows(right: dict[str, np.ndarray], formats, task="retrieval"):
    rows = []
    for system, marks in right.items():
        for s, ok in enumerate(marks):
            for fmt in formats:
                rows.append(
                    {
                        "suite_run_id": "run", "prompt_key": f"s{s:02d}-{fmt}",
                        "series_key": f"s{s:02d}", "system_id": system, "dataset": "outlier",
                        "task": task, "feature": "outlier", "format": fmt, "decimals": 2,
                        "expected": '{"value": 100.0}', "quadrant": 1 + s % 4,
                        "series_length": 40 + s, "parse_ok": True, "parse_error": None,
                        "answer": None, "answer_value": 100.0 if ok else 150.0,
                        "answer_date": None,
                    }
                )  # fmt: skip
    return score_table(pd.DataFrame(rows))


def two_systems(n=24, seed=5):
    rng = np.random.default_rng(seed)
    return {"a": rng.random(n) < 0.7, "b": rng.random(n) < 0.5}


def test_rating_stability_resamples_series_with_all_their_formats():
    right = two_systems()
    once = answer_rows(right, FORMATS[:1])
    nine = answer_rows(right, FORMATS)
    tables = []
    for scored in (once, nine):
        ratings = rating_table(task_scores(scored, NO_OPTIONS), 3)
        table = rating_stability_table(scored, NO_OPTIONS, ratings, 3, resamples=60)
        table = table[table["metric"] == "retrieval_accuracy"].set_index("system_id")
        tables.append(table)
    columns = ["share_at_rating", "ci_low", "ci_high", "n_series"]
    pd.testing.assert_frame_equal(tables[0][columns], tables[1][columns])
    assert set(tables[1]["n_series"]) == {24} and set(tables[1]["n_prompts"]) == {24 * 9}


def test_cell_intervals_count_a_series_asked_twice_once():
    """A cell (one format) holding each series' question twice: accuracy's Wilson
    interval and MAPE's bootstrap are those of the series asked once."""
    right = two_systems(30)
    once = task_scores(answer_rows(right, ["csv"]), NO_OPTIONS)
    twice = answer_rows(right, ["csv", "csv2"]).assign(format="csv")
    twice = task_scores(twice, NO_OPTIONS)
    columns = ["accuracy", "accuracy_ci_low", "accuracy_ci_high", "mape_ci_low", "mape_ci_high"]
    for system in right:
        a = once[once["system_id"] == system][columns].astype(float).to_numpy()
        b = twice[twice["system_id"] == system][columns].astype(float).to_numpy()
        assert b == pytest.approx(a)
    k = int(right["a"].sum())
    expected = proportion_confint(k, 30, method="wilson")
    row = once[once["system_id"] == "a"].iloc[0]
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == pytest.approx(expected)


def test_f1_bootstrap_draws_series():
    rows = []
    rng = np.random.default_rng(8)
    truth = rng.random(20) < 0.5
    said = np.where(rng.random(20) < 0.75, truth, ~truth)
    for copies in (1, 4):
        block = []
        for s in range(20):
            for c in range(copies):
                block.append(
                    {
                        "suite_run_id": "run", "prompt_key": f"s{s}-{c}", "series_key": f"s{s}",
                        "system_id": "a", "dataset": "trend", "task": "detection",
                        "feature": "trend", "format": "csv", "decimals": 2,
                        "expected": '{"answer": "%s"}' % ("yes" if truth[s] else "no"),
                        "quadrant": None, "series_length": 40, "parse_ok": True,
                        "parse_error": None, "answer": "yes" if said[s] else "no",
                        "answer_value": None, "answer_date": None,
                    }
                )  # fmt: skip
        rows.append(task_scores(score_table(pd.DataFrame(block)), NO_OPTIONS).iloc[0])
    once, four = rows
    assert four["f1"] == pytest.approx(once["f1"])
    assert (four["f1_ci_low"], four["f1_ci_high"]) == pytest.approx(
        (once["f1_ci_low"], once["f1_ci_high"])
    )


def test_position_bias_counts_series_across_formats():
    right = two_systems(48)
    once = position_bias_table(answer_rows(right, FORMATS[:1]))
    nine = position_bias_table(answer_rows(right, FORMATS))
    columns = ["accuracy", "accuracy_ci_low", "accuracy_ci_high", "p_value", "judgeable"]
    pd.testing.assert_frame_equal(
        once[columns].astype(float), nine[columns].astype(float), check_exact=False
    )
    assert (nine["n_prompts"] == 9 * once["n_prompts"]).all()


def series_frame(right: dict[str, np.ndarray], k: int) -> pd.DataFrame:
    """und_series_scores rows: each series asked in k formats, answered alike."""
    return pd.DataFrame(
        [
            {"prompting": "zero_shot", "system_id": system, "task": "detection",
             "series_key": f"s{s}", "dataset": "trend", "series_length": 40 + s,
             "n_prompts": k, "n_correct": k * int(ok)}
            for system, marks in right.items()
            for s, ok in enumerate(marks)
        ]
    )  # fmt: skip


def test_against_chance_counts_the_45_series_not_the_405_prompts():
    rng = np.random.default_rng(18)
    right = {"und_analyst": rng.random(45) < 0.86, "und_random": rng.random(45) < 0.5}
    scores = pd.DataFrame({"system_id": ["und_analyst", "und_random"]})
    nine = chance_table(scores, series_frame(right, 9)).iloc[0]
    once = chance_table(scores, series_frame(right, 1)).iloc[0]
    k, k0 = int(right["und_analyst"].sum()), int(right["und_random"].sum())
    expected = proportion_confint(k, 45, method="wilson")
    assert (nine["ci_low"], nine["ci_high"]) == pytest.approx(expected)
    assert nine["p_value"] == pytest.approx(intervals.two_proportion_p(k, 45, k0, 45))
    assert nine["p_value"] == pytest.approx(once["p_value"])
    assert nine["n_prompts"] == 405 and nine["n_series"] == 45
    assert nine["accuracy"] == pytest.approx(k / 45)


def test_length_chart_pools_formats_counting_series():
    right = {"a": np.random.default_rng(2).random(30) < 0.6}
    series = series_frame(right, 9).assign(task="retrieval", series_length=45)
    k = int(right["a"].sum())
    curves = pd.DataFrame(
        [{"prompting": "zero_shot", "system_id": "a", "task": "retrieval",
          "length_bin_start": 30, "length_bin_end": 59, "n": 270, "n_correct": 9 * k,
          "accuracy": k / 30}]
    )  # fmt: skip
    row = with_pooled_wilson(curves, series).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(k, 30, method="wilson")
    )
    assert row["n_series"] == 30
