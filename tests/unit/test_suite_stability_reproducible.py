"""The suites' rating stability does not move when nothing changed.

Each suite's stability bootstrap is seeded by var ``bootstrap_seed`` and the keys that
identify the rated group in the data (suite, prompting, metric, task / feature / variant),
never the suite run id: the same inputs stored under two suite runs give identical shares,
intervals and standard errors, while two groups (or two seeds) draw independently. Every
share carries its Monte Carlo standard error sqrt(p (1 - p) / R), checked here against the
formula and against the spread of the share over many seeds. Real computations of the
suites' marts; nothing is replaced."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.interpretability import marts as interp
from tsrate.suites.reasoning import marts as rsn
from tsrate.suites.understanding import marts as und

VALUES = ["raw_score", "rating", "share_at_rating", "share_mc_se", "n_resamples_undefined"]


def same_rows(table: pd.DataFrame, keys: list[str], run: str) -> pd.DataFrame:
    """One suite run's rows, indexed by the group keys (without the run), values only."""
    part = table[table["suite_run_id"] == run].set_index(keys).sort_index()
    columns = [c for c in [*VALUES, "ci_low", "ci_high"] if c in part.columns]
    return part[columns]


def assert_some_share_is_shaky(table: pd.DataFrame) -> None:
    """A share strictly between 0 and 1: different draws would give a different share, so
    the comparisons below can fail."""
    shares = table["share_at_rating"].dropna()
    assert ((shares > 0.05) & (shares < 0.95)).any(), shares.tolist()


# --------------------------------------------------------------------------- reasoning


def reasoning_values(runs=("run-a", "run-b"), tasks=("qa_single",), items=20, seed=11):
    """Per-item accuracy of three systems, two of them close: the same values stored under
    every suite run and task of ``runs`` x ``tasks``."""
    rng = np.random.default_rng(seed)
    right = {
        "close_1": rng.random(items) < 0.55,
        "close_2": rng.random(items) < 0.5,
        "weak": rng.random(items) < 0.2,
    }
    rows = [
        {"suite_run_id": run, "metric": "accuracy", "task": task, "item_id": f"i{i:02d}",
         "system_id": system, "value": float(marks[i])}
        for run in runs for task in tasks for system, marks in right.items()
        for i in range(items)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def reasoning_stability(values: pd.DataFrame, resamples: int = 200, seed: int = 42):
    keys = ["suite_run_id", "metric", "task", "system_id"]
    scores = values.groupby(keys, as_index=False)["value"].mean()
    ratings = rsn.rating_table(scores.rename(columns={"value": "raw_score"}), 3)
    return rsn.rating_stability_table(values, ratings, 3, resamples=resamples, seed=seed)


def test_reasoning_same_items_under_two_suite_runs_give_identical_stability():
    table = reasoning_stability(reasoning_values())
    assert_some_share_is_shaky(table)
    keys = ["metric", "task", "system_id"]
    first, second = same_rows(table, keys, "run-a"), same_rows(table, keys, "run-b")
    assert len(first) == 3
    pd.testing.assert_frame_equal(first, second)


def test_reasoning_groups_and_seeds_draw_independently():
    """The same values under two tasks of one run (two rated groups) and under another
    bootstrap seed: different draws, hence different intervals."""
    values = reasoning_values(runs=("run-a",), tasks=("qa_single", "qa_multi"))
    table = reasoning_stability(values)
    keys = ["suite_run_id", "metric", "system_id"]
    one = table[table["task"] == "qa_single"].set_index(keys).sort_index()
    other = table[table["task"] == "qa_multi"].set_index(keys).sort_index()
    assert (one["raw_score"] == other["raw_score"]).all()  # the same data ...
    drawn = ["ci_low", "ci_high", "share_at_rating"]
    assert not one[drawn].equals(other[drawn])  # ... resampled independently
    reseeded = reasoning_stability(values, seed=43).set_index([*keys, "task"]).sort_index()
    again = table.set_index([*keys, "task"]).sort_index()
    assert not again[drawn].equals(reseeded[drawn])


def test_reasoning_changed_items_change_the_shares_but_not_the_other_runs():
    """Run b's items changed (one system's marks flipped): run b's rows move, run a's rows
    are those of a build holding run a alone."""
    values = reasoning_values()
    changed = values.copy()
    flip = (changed["suite_run_id"] == "run-b") & (changed["system_id"] == "close_2")
    changed.loc[flip, "value"] = 1.0 - changed.loc[flip, "value"]
    table = reasoning_stability(changed)
    alone = reasoning_stability(values[values["suite_run_id"] == "run-a"])
    keys = ["metric", "task", "system_id"]
    pd.testing.assert_frame_equal(same_rows(table, keys, "run-a"), same_rows(alone, keys, "run-a"))
    assert not same_rows(table, keys, "run-a").equals(same_rows(table, keys, "run-b"))


def test_the_share_mc_se_is_the_binomial_formula_over_the_counted_resamples():
    table = reasoning_stability(reasoning_values(runs=("run-a",)), resamples=150)
    counted = table["n_resamples"] - table["n_resamples_undefined"]
    p = table["share_at_rating"]
    expected = np.sqrt(p * (1 - p) / counted)
    np.testing.assert_allclose(table["share_mc_se"], expected, rtol=1e-12)
    assert table["share_mc_se"].dtype == np.float64


def test_the_share_mc_se_is_the_spread_of_the_share_over_bootstrap_seeds():
    """Sixty bootstrap seeds, 100 resamples each: the standard deviation of a shaky share
    over the seeds is its published Monte Carlo standard error (the mean over the seeds),
    within the 25 % that sixty seeds can tell."""
    values = reasoning_values(runs=("run-a",))
    shares, errors = [], []
    for seed in range(60):
        table = reasoning_stability(values, resamples=100, seed=seed).set_index("system_id")
        shares.append(table["share_at_rating"])
        errors.append(table["share_mc_se"])
    shares, errors = pd.DataFrame(shares), pd.DataFrame(errors)
    shaky = shares.columns[(shares.mean() > 0.2) & (shares.mean() < 0.8)]
    assert len(shaky) >= 1
    for system in shaky:
        spread = shares[system].std(ddof=1)
        assert spread == pytest.approx(errors[system].mean(), rel=0.25), system


# --------------------------------------------------------------------------- understanding

ANSWER_COLUMNS = [
    "suite_run_id", "prompt_key", "series_key", "system_id", "dataset", "task", "feature",
    "format", "decimals", "expected", "quadrant", "series_length", "parse_ok", "parse_error",
    "answer", "answer_value", "answer_date",
]  # fmt: skip


def retrieval_rows(run: str, feature: str = "trend", prompts: int = 16, seed: int = 3):
    """Retrieval answers of two close systems on ``prompts`` prompts (right: the expected
    value 100; wrong: 150)."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, rate in (("a", 0.6), ("b", 0.5)):
        for i in range(prompts):
            value = 100.0 if rng.random() < rate else 150.0
            rows.append(dict(zip(ANSWER_COLUMNS, (
                run, f"p{i:02d}", f"s{i:02d}", system, "trend", "retrieval", feature, "csv", 2,
                '{"value": 100.0}', 1, 40, True, None, None, value, None,
            ), strict=True)))  # fmt: skip
    return rows


def understanding_stability(rows, seed: int = 42):
    options = pd.DataFrame(columns=["prompt_key", "options"])
    scored = und.score_table(pd.DataFrame(rows))
    ratings = und.rating_table(und.task_scores(scored, options), 3)
    return und.rating_stability_table(scored, options, ratings, 3, resamples=200, seed=seed)


def test_understanding_same_prompts_under_two_suite_runs_give_identical_stability():
    table = understanding_stability(retrieval_rows("run-a") + retrieval_rows("run-b"))
    assert_some_share_is_shaky(table)
    keys = ["prompting", "metric", "feature", "system_id"]
    first, second = same_rows(table, keys, "run-a"), same_rows(table, keys, "run-b")
    assert len(first) == 4  # two systems x retrieval accuracy and MAPE
    pd.testing.assert_frame_equal(first, second)


def test_understanding_features_draw_independently():
    rows = retrieval_rows("run-a", "trend") + retrieval_rows("run-a", "seasonality")
    table = understanding_stability(rows)
    keys = ["system_id"]
    one = table[table["feature"] == "trend"].set_index(keys).sort_index()
    other = table[table["feature"] == "seasonality"].set_index(keys).sort_index()
    assert (one["raw_score"] == other["raw_score"]).all()
    assert not one[["ci_low", "ci_high", "share_at_rating"]].equals(
        other[["ci_low", "ci_high", "share_at_rating"]]
    )


# --------------------------------------------------------------------------- interpretability


def interp_inputs(runs_ids=("run-a", "run-b"), variants=("d2",)):
    """test_mse of two models on five training seeds, A better on most: the same runs
    stored under every suite run and variant."""
    # no two draws' means tie (a tie leaves both unrated: that draw would not count)
    mse = {"A": [1.0, 3.5, 1.1, 1.3, 2.4], "B": [2.01, 1.97, 2.03, 1.91, 2.12]}
    rows = [
        {"suite_run_id": run, "variant_id": variant, "model_id": model, "seed": seed,
         "run_key": f"{run}-{variant}-{model}-{seed}", "test_mse": value}
        for run in runs_ids for variant in variants for model, values in mse.items()
        for seed, value in zip(range(1, 6), values, strict=True)
    ]  # fmt: skip
    runs = pd.DataFrame(rows)
    correctness = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "model_id", "seed", "measure", "margin"]
    )
    attention = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "model_id", "seed", "attention",
                 "target_index", "source_index", "lag", "value"]
    )  # fmt: skip
    keys = ["suite_run_id", "variant_id", "model_id"]
    scores = runs.groupby(keys, as_index=False)["test_mse"].mean()
    scores = scores.rename(columns={"test_mse": "raw_score"}).assign(metric="test_mse")
    return runs, correctness, attention, interp.rating_table(scores, 3)


def test_interpretability_same_runs_under_two_suite_runs_give_identical_stability():
    """Random draws (the path of more than EXACT_MAX_SEEDS seeds, forced here)."""
    runs, correctness, attention, ratings = interp_inputs()
    table = interp.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=200, seed=42, exact_max_seeds=0
    )
    assert_some_share_is_shaky(table)
    keys = ["metric", "variant_id", "model_id"]
    first, second = same_rows(table, keys, "run-a"), same_rows(table, keys, "run-b")
    assert len(first) == 2
    pd.testing.assert_frame_equal(first, second)


def test_interpretability_variants_draw_independently():
    runs, correctness, attention, ratings = interp_inputs(("run-a",), ("d2", "d3"))
    table = interp.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=200, seed=42, exact_max_seeds=0
    )
    one = table[table["variant_id"] == "d2"].set_index("model_id").sort_index()
    other = table[table["variant_id"] == "d3"].set_index("model_id").sort_index()
    assert (one["raw_score"] == other["raw_score"]).all()
    assert not np.array_equal(one["share_at_rating"], other["share_at_rating"])


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_exact_seed_draws_are_the_ordered_draws_grouped_by_multiset(n):
    """Independent enumeration: all n^n ordered draws, grouped by their sorted tuple."""
    counts = Counter(tuple(sorted(d)) for d in itertools.product(range(n), repeat=n))
    draws, weights = interp.exact_seed_draws(n)
    assert len(draws) == math.comb(2 * n - 1, n) == len(counts)
    got = {tuple(int(i) for i in d): w for d, w in zip(draws, weights, strict=True)}
    assert got.keys() == counts.keys()
    for multiset, count in counts.items():
        assert got[multiset] == pytest.approx(count / n**n, rel=1e-12)
    assert sum(weights) == pytest.approx(1.0, rel=1e-12)


def test_exact_share_is_the_enumerated_probability_and_random_draws_are_within_their_se():
    """Five seeds: the default bootstrap is exact. Two models: A keeps its published rating
    (1, the better) exactly when its mean over the drawn seeds stays below B's, so the exact
    share is that event's share of the 5^5 equally likely ordered draws, enumerated here.
    The Monte Carlo bootstrap (forced) lies within four of its standard errors of it."""
    runs, correctness, attention, ratings = interp_inputs(("run-a",))
    assert dict(zip(ratings["model_id"], ratings["rating"], strict=True)) == {"A": 1, "B": 2}
    mse = runs.pivot_table(index="seed", columns="model_id", values="test_mse")
    a, b = mse["A"].to_numpy(), mse["B"].to_numpy()
    ordered = np.array(list(itertools.product(range(5), repeat=5)))
    mean_a, mean_b = a[ordered].mean(axis=1), b[ordered].mean(axis=1)
    assert (np.abs(mean_a - mean_b) > 1e-9).all()
    expected = float(np.mean(mean_a < mean_b))
    assert 0.5 < expected < 0.95  # shaky: Monte Carlo noise would show
    exact = interp.rating_stability_table(runs, correctness, attention, ratings, 3, seed=42)
    exact = exact.set_index("model_id")
    for model in ("A", "B"):
        assert exact.loc[model, "share_at_rating"] == pytest.approx(expected, abs=1e-12)
        assert exact.loc[model, "share_mc_se"] == 0.0
        assert exact.loc[model, "n_resamples"] == math.comb(9, 5)
    random = interp.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=400, seed=42, exact_max_seeds=0
    ).set_index("model_id")
    for model in ("A", "B"):
        se = math.sqrt(expected * (1 - expected) / 400)
        assert abs(random.loc[model, "share_at_rating"] - expected) < 4 * se
        assert random.loc[model, "n_resamples"] == 400
        assert random.loc[model, "share_mc_se"] == pytest.approx(se, rel=0.3)


def test_more_seeds_than_the_exact_limit_are_drawn_at_random():
    """Seven seeds: C(13, 7) = 1716 distinct draws, more than the exact limit allows."""
    mse = {"A": [1.0, 3.5, 1.0, 1.2, 2.4, 1.4, 2.6], "B": [2.0] * 7}
    runs = pd.DataFrame(
        [{"suite_run_id": "r", "variant_id": "d2", "model_id": model, "seed": seed,
          "run_key": f"{model}-{seed}", "test_mse": value}
         for model, values in mse.items() for seed, value in enumerate(values, start=1)]
    )  # fmt: skip
    _, correctness, attention, _ = interp_inputs()
    scores = runs.groupby(["suite_run_id", "variant_id", "model_id"], as_index=False)
    scores = scores["test_mse"].mean().rename(columns={"test_mse": "raw_score"})
    ratings = interp.rating_table(scores.assign(metric="test_mse"), 3)
    table = interp.rating_stability_table(runs, correctness, attention, ratings, 3, resamples=90)
    assert interp.EXACT_MAX_SEEDS < 7
    assert (table["n_resamples"] == 90).all() and (table["n_seeds"] == 7).all()
    assert (table["share_mc_se"] > 0).all()
