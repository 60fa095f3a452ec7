"""The interpretability ratings' stability: a bootstrap over training seeds, checked against
an exact enumeration of the seed draws and against scores recomputed independently."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.interpretability.marts import (
    _resampled_score,
    rating_stability_table,
    rating_table,
)

SEEDS = [1, 2, 3]


def runs_frame(test_mse: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for model_id, values in test_mse.items():
        for seed, value in zip(SEEDS, values, strict=True):
            rows.append(
                {
                    "suite_run_id": "s",
                    "variant_id": "d2",
                    "model_id": model_id,
                    "seed": seed,
                    "run_key": f"{model_id}-{seed}",
                    "test_mse": value,
                }
            )
    return pd.DataFrame(rows)


def empty_correctness() -> pd.DataFrame:
    columns = ["suite_run_id", "variant_id", "model_id", "seed", "measure", "margin"]
    return pd.DataFrame(columns=columns)


def empty_attention() -> pd.DataFrame:
    columns = ["suite_run_id", "variant_id", "model_id", "seed", "attention", "target_index",
               "source_index", "lag", "value"]  # fmt: skip
    return pd.DataFrame(columns=columns)


def published(runs: pd.DataFrame, levels: int = 3) -> pd.DataFrame:
    means = runs.groupby("model_id", as_index=False)["test_mse"].mean()
    scores = means.assign(suite_run_id="s", variant_id="d2", metric="test_mse")
    scores = scores.rename(columns={"test_mse": "raw_score"})
    return rating_table(scores, levels)


def test_share_matches_the_exact_probability_over_all_seed_draws():
    # A is better on seeds 1 and 3, worse on seed 2: its published rating (1, the better)
    # survives a draw exactly when its mean stays below B's
    runs = runs_frame({"A": [1.0, 3.5, 1.0], "B": [2.0, 2.0, 2.0]})
    ratings = published(runs)
    assert dict(zip(ratings["model_id"], ratings["rating"], strict=True)) == {"A": 1, "B": 2}
    a = runs[runs.model_id == "A"].set_index("seed")["test_mse"]
    b = runs[runs.model_id == "B"].set_index("seed")["test_mse"]
    draws = list(itertools.product(SEEDS, repeat=3))
    exact = np.mean([np.mean([a[s] for s in d]) < np.mean([b[s] for s in d]) for d in draws])
    assert exact == pytest.approx(20 / 27)  # all draws but those with two or three seed-2s
    # three seeds: the exact bootstrap (every distinct draw with its probability) by default
    table = rating_stability_table(
        runs, empty_correctness(), empty_attention(), ratings, 3, resamples=4000, seed=7
    )
    shares = table.set_index("model_id")["share_at_rating"]
    assert shares["A"] == pytest.approx(exact, abs=1e-12)
    assert shares["B"] == pytest.approx(exact, abs=1e-12)
    assert (table["n_seeds"] == 3).all() and (table["n_resamples"] == 10).all()
    assert (table["share_mc_se"] == 0).all()
    # random draws instead (as with more seeds than EXACT_MAX_SEEDS): near the same share
    table = rating_stability_table(
        runs, empty_correctness(), empty_attention(), ratings, 3, resamples=4000, seed=7,
        exact_max_seeds=0,
    )  # fmt: skip
    shares = table.set_index("model_id")["share_at_rating"]
    assert shares["A"] == pytest.approx(exact, abs=0.03)
    assert shares["B"] == pytest.approx(exact, abs=0.03)
    assert (table["n_seeds"] == 3).all() and (table["n_resamples"] == 4000).all()


def test_a_dominant_model_is_always_at_its_rating_and_one_seed_cannot_be_resampled():
    runs = runs_frame({"A": [1.0, 1.1, 0.9], "B": [2.0, 2.1, 1.9]})
    table = rating_stability_table(
        runs, empty_correctness(), empty_attention(), published(runs), 3, resamples=200
    )
    assert (table["share_at_rating"] == 1.0).all()
    one = runs[runs.seed == 1]
    table = rating_stability_table(
        one, empty_correctness(), empty_attention(), published(one), 3, resamples=200
    )
    assert table["share_at_rating"].isna().all() and (table["n_resamples"] == 0).all()


def test_resampled_scores_on_all_seeds_equal_the_marts_formulas():
    rng = np.random.default_rng(0)
    runs = runs_frame({"A": list(rng.uniform(1, 2, 3))})
    values = runs["test_mse"].to_numpy()
    scores = {"test_mse": runs.pivot_table(index="model_id", columns="seed", values="test_mse")}
    everything = np.arange(3)
    assert _resampled_score("test_mse", "A", everything, scores, {}) == pytest.approx(values.mean())
    assert _resampled_score("test_mse_cv", "A", everything, scores, {}) == pytest.approx(
        pd.Series(values).std() / values.mean()
    )
    # beta_std: the sample std across runs of every beta cell, averaged over cells
    cube = rng.uniform(0, 1, (4, 3))
    expected = pd.DataFrame(cube).T.std().mean()
    assert _resampled_score("beta_std", "A", everything, scores, {"A": cube}) == pytest.approx(
        expected
    )
    # a draw of one seed twice has no spread
    assert _resampled_score(
        "beta_std", "A", np.array([0, 0, 0]), scores, {"A": cube}
    ) == pytest.approx(0.0, abs=1e-12)


def test_unrated_models_get_no_share_and_stay_out_of_the_comparison():
    runs = runs_frame({"A": [1.0, 1.1, 0.9], "B": [2.0, 2.1, 1.9], "C": [0.1, 0.1, 0.1]})
    means = runs.groupby("model_id", as_index=False)["test_mse"].mean()
    scores = means.assign(suite_run_id="s", variant_id="d2", metric="test_mse")
    scores = scores.rename(columns={"test_mse": "raw_score"})
    scores["unrated_reason"] = [None, None, "near-uniform attention (test)"]
    ratings = rating_table(scores, 3)
    table = rating_stability_table(
        runs, empty_correctness(), empty_attention(), ratings, 3, resamples=100
    ).set_index("model_id")
    assert np.isnan(table.loc["C", "share_at_rating"])
    # were C compared, A would not keep its rating 1 in any resample
    assert table.loc["A", "share_at_rating"] == 1.0
