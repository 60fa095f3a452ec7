"""The interpretability rating stability counts, for every model, the seed resamples in
which its re-scored value is undefined -- also for a model left unrated (near-uniform
attention), whose score is defined in every resample it has a finite run in. Expected
counts come from enumerating the distinct seed draws independently of the suite's code."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.interpretability.marts import rating_stability_table, rating_table

SEEDS = [1, 2, 3]


def _runs(test_mse: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "suite_run_id": "s",
                "variant_id": "d2",
                "model_id": model_id,
                "seed": seed,
                "run_key": f"{model_id}-{seed}",
                "test_mse": value,
            }  # fmt: skip
            for model_id, values in test_mse.items()
            for seed, value in zip(SEEDS, values, strict=True)
        ]
    )


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=columns)


CORRECTNESS = ["suite_run_id", "variant_id", "model_id", "seed", "measure", "margin"]
ATTENTION = ["suite_run_id", "variant_id", "model_id", "seed", "attention", "target_index",
             "source_index", "lag", "value"]  # fmt: skip


def _ratings(runs: pd.DataFrame, unrated: dict[str, str]) -> pd.DataFrame:
    means = runs.groupby("model_id", as_index=False)["test_mse"].mean()
    scores = means.assign(suite_run_id="s", variant_id="d2", metric="test_mse")
    scores = scores.rename(columns={"test_mse": "raw_score"})
    scores["unrated_reason"] = [unrated.get(m) for m in scores["model_id"]]
    return rating_table(scores, 3)


def _table(runs: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    return rating_stability_table(
        runs, _empty(CORRECTNESS), _empty(ATTENTION), ratings, 3, resamples=50, seed=3
    ).set_index("model_id")


def _undefined_draws(values: list[float]) -> int:
    # the exact bootstrap's distinct draws of three seeds: test_mse (mean of the drawn
    # runs' finite MSEs) is undefined where every drawn run's MSE is missing
    by_seed = dict(zip(SEEDS, values, strict=True))
    draws = list(itertools.combinations_with_replacement(SEEDS, len(SEEDS)))
    assert len(draws) == math.comb(2 * len(SEEDS) - 1, len(SEEDS))  # 10
    return sum(all(np.isnan(by_seed[s]) for s in draw) for draw in draws)


def test_a_near_uniform_model_with_a_score_in_every_resample_has_none_undefined():
    runs = _runs({"A": [1.0, 1.1, 0.9], "B": [2.0, 2.1, 1.9], "C": [0.1, 0.2, 0.1]})
    table = _table(runs, _ratings(runs, {"C": "near-uniform attention (test)"}))
    assert int(table.loc["C", "n_resamples"]) == 10
    assert _undefined_draws([0.1, 0.2, 0.1]) == 0
    assert int(table.loc["C", "n_resamples_undefined"]) == 0  # was 10: "every resample"
    assert np.isnan(table.loc["C", "share_at_rating"])  # unrated: no rating to be at
    assert (table.loc[["A", "B"], "n_resamples_undefined"] == 0).all()


def test_an_unrated_models_missing_runs_count_as_undefined_resamples():
    # C has a finite MSE on seed 1 only: test_mse is undefined in the draws without seed 1
    c = [0.1, float("nan"), float("nan")]
    runs = _runs({"A": [1.0, 3.5, 1.0], "B": [2.0, 2.0, 2.0], "C": c})
    table = _table(runs, _ratings(runs, {"C": "near-uniform attention (test)"}))
    assert _undefined_draws(c) == 4  # {2,2,2} {2,2,3} {2,3,3} {3,3,3}
    assert int(table.loc["C", "n_resamples_undefined"]) == 4


def test_resampling_an_unrated_model_moves_none_of_the_others_shares():
    ab = {"A": [1.0, 3.5, 1.0], "B": [2.0, 2.0, 2.0]}
    alone = _runs(ab)
    with_c = _runs({**ab, "C": [0.1, 0.1, 0.1]})
    expected = _table(alone, _ratings(alone, {}))["share_at_rating"]
    got = _table(with_c, _ratings(with_c, {"C": "near-uniform attention (test)"}))
    # C (the lowest error) would take rating 1 from A in every draw, were it compared
    assert got.loc[["A", "B"], "share_at_rating"].tolist() == expected[["A", "B"]].tolist()
    assert expected["A"] == pytest.approx(20 / 27, abs=1e-12)  # the exact share
