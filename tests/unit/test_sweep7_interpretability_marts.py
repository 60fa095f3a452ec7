"""The interpretability suite's mart functions (tsrate.suites.interpretability.marts, the
logic of the dbt Python models interp_*) on small hand-built frames, against values worked
out independently: the attention and ground-truth matrices each run hands to the measures
(captured, and compared with arrays filled in by hand), the rule against uniform attention
at and around its threshold (the module docstring), and the rating-stability resamples
redrawn here from their documented seed (seed and the first four bytes of SHA-256 of the
group's key) with each score recomputed by plain numpy (the docstring of
``rating_stability_table``).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep7_interpretability_marts.json): each test pins exact values, so a
changed index, bound, filter, key, statistic or seed in these functions changes a checked
value. The measures themselves are pinned elsewhere (test_interpretability_measures.py).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.interpretability import marts

# --------------------------------------------------------------------------- correctness


def capture_measures(monkeypatch):
    """Replace the measures by a recorder: the mart's job is the matrices it builds."""
    calls = []

    def fake(beta, alpha, picks, truth, lag_truth):  # the chance level is exact: no draws
        calls.append(
            {"beta": beta, "alpha": alpha, "picks": picks, "truth": truth, "lags": lag_truth}
        )
        k = len(calls)
        return [
            {"measure": "m", "value": float(k), "chance": 0.5, "margin": k - 0.5,
             "undefined_reason": None},
            {"measure": "u", "value": np.nan, "chance": np.nan, "margin": np.nan,
             "undefined_reason": "why"},
        ]  # fmt: skip

    monkeypatch.setattr(marts, "correctness_with_chance", fake)
    return calls


def run_row(run_key, model_id="tft", variant_key="v1", n=3, window=4, seed=1):
    return {
        "suite_run_id": "s",
        "run_key": run_key,
        "variant_id": variant_key + "_id",
        "variant_key": variant_key,
        "model_id": model_id,
        "seed": seed,
        "n_series": n,
        "window_length": window,
    }


def cell(run_key, kind, target, source, value, lag=None):
    return {
        "run_key": run_key,
        "attention": kind,
        "target_index": target,
        "source_index": source,
        "lag": np.nan if lag is None else float(lag),
        "value": value,
    }


def edge(variant_key, target, source, lag, weight):
    return {
        "variant_key": variant_key,
        "target_index": target,
        "source_index": source,
        "lag": lag,
        "weight": weight,
    }


BETA = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.25, 0.25, 0.5]])


def beta_cells(run_key):
    return [cell(run_key, "beta", t, s, BETA[t, s]) for t in range(3) for s in range(3)]


TRUTH = pd.DataFrame(
    [
        edge("v1", 0, 1, 1, 0.5),  # lag 1: the first lag slot
        edge("v1", 0, 1, 4, 0.25),  # lag == window: the last slot
        edge("v1", 2, 0, 0, 0.7),  # lag 0: in the matrix, not in the lags
        edge("v1", 1, 2, 5, 0.3),  # lag past the window: in the matrix, not in the lags
        edge("v1", 1, 2, 2, 0.2),  # a second edge on the same pair adds up
        edge("other", 1, 1, 2, 9.0),  # another variant's edge
    ]
)


def expected_truth():
    matrix = np.zeros((3, 3))
    matrix[0, 1] = 0.75
    matrix[2, 0] = 0.7
    matrix[1, 2] = 0.5
    lags = np.zeros((3, 3, 4))
    lags[0, 1, 0] = 0.5
    lags[0, 1, 3] = 0.25
    lags[1, 2, 1] = 0.2
    return matrix, lags


def test_correctness_table_hands_the_hand_built_matrices_to_the_measures(monkeypatch):
    calls = capture_measures(monkeypatch)
    runs = pd.DataFrame([run_row("r1", "tft", seed=3)])
    attention = pd.DataFrame(
        [
            *beta_cells("r1"),
            cell("r1", "alpha", 0, 1, 0.4, lag=1),
            cell("r1", "alpha", 2, 2, 0.9, lag=4),
            cell("r1", "alpha", 1, 0, 0.3, lag=2),  # source 0 is a series
            cell("r1", "alpha", 1, -1, 0.8, lag=2),  # encoder state: no per-series lag
            cell("r1", "tcdf_picks", 1, 0, 1.0),
        ]
    )
    out = marts.correctness_table(runs, attention, TRUTH)
    assert len(calls) == 1
    call = calls[0]
    np.testing.assert_array_equal(call["beta"], BETA)  # diagonal kept (not DA-RNN)
    alpha = np.zeros((3, 3, 4))
    alpha[0, 1, 0] = 0.4
    alpha[2, 2, 3] = 0.9
    alpha[1, 0, 1] = 0.3
    np.testing.assert_array_equal(call["alpha"], alpha)
    picks = np.zeros((3, 3))
    picks[1, 0] = 1.0
    np.testing.assert_array_equal(call["picks"], picks)
    matrix, lags = expected_truth()
    np.testing.assert_allclose(call["truth"], matrix, atol=1e-15)
    np.testing.assert_allclose(call["lags"], lags, atol=1e-15)
    assert list(out.columns) == marts.CORRECTNESS_COLUMNS
    assert out["measure"].tolist() == ["m", "u"]
    assert out["run_key"].tolist() == ["r1", "r1"]
    assert out["variant_id"].tolist() == ["v1_id", "v1_id"]
    assert out["model_id"].tolist() == ["tft", "tft"]
    assert out["seed"].tolist() == [3, 3] and out["seed"].dtype == "int64"
    assert out["value"].iloc[0] == 1.0 and np.isnan(out["value"].iloc[1])
    assert out["margin"].iloc[0] == 0.5 and out["chance"].dtype == "float64"
    assert pd.isna(out["undefined_reason"].iloc[0]) and out["undefined_reason"].iloc[1] == "why"


def test_darnn_loses_its_beta_diagonal_and_missing_parts_are_none(monkeypatch):
    calls = capture_measures(monkeypatch)
    runs = pd.DataFrame(
        [
            run_row("d", "darnn", variant_key="v1"),
            run_row("gone", "tft"),  # no attention at all: skipped
            run_row("nobeta", "tft"),  # attention without beta: skipped
            run_row("t", "tft", variant_key="none"),  # no ground truth for its variant
        ]
    )
    attention = pd.DataFrame(
        [
            *beta_cells("d"),
            cell("d", "alpha", 0, -1, 0.8, lag=1),  # only encoder states: no alpha
            cell("nobeta", "alpha", 0, 1, 0.4, lag=1),
            *beta_cells("t"),
        ]
    )
    out = marts.correctness_table(runs, attention, TRUTH)
    assert len(calls) == 2
    darnn, other = calls
    expected = BETA.copy()
    expected[[0, 1, 2], [0, 1, 2]] = np.nan
    np.testing.assert_array_equal(darnn["beta"], expected)
    assert darnn["alpha"] is None and darnn["picks"] is None
    np.testing.assert_allclose(darnn["truth"], expected_truth()[0], atol=1e-15)
    # the run whose variant has no edges gets all-zero ground truth, and its own beta
    np.testing.assert_array_equal(other["truth"], np.zeros((3, 3)))
    np.testing.assert_array_equal(other["lags"], np.zeros((3, 3, 4)))
    np.testing.assert_array_equal(other["beta"], BETA)
    assert other["alpha"] is None and other["picks"] is None
    assert out["run_key"].tolist() == ["d", "d", "t", "t"]


def test_correctness_table_without_any_ground_truth_or_attention(monkeypatch):
    calls = capture_measures(monkeypatch)
    runs = pd.DataFrame([run_row("r1")])
    attention = pd.DataFrame(beta_cells("r1"))
    empty_truth = TRUTH.iloc[0:0]
    out = marts.correctness_table(runs, attention, empty_truth)
    np.testing.assert_array_equal(calls[0]["truth"], np.zeros((3, 3)))
    assert len(out) == 2
    out = marts.correctness_table(runs, attention.iloc[0:0], TRUTH)
    assert len(out) == 0 and list(out.columns) == marts.CORRECTNESS_COLUMNS


# --------------------------------------------------------------------------- rating scores


def score_inputs(entropy: dict[str, float], in_main=True):
    keys = {"suite_run_id": "s", "variant_id": "v"}
    models = list(entropy)
    prediction = pd.DataFrame(
        [{**keys, "model_id": m, "test_mse_mean": 1.0 + k, "test_mse_cv": 0.1 * (k + 1),
          "in_main_study": in_main} for k, m in enumerate(models)]
    )  # fmt: skip
    correctness = []
    for k, m in enumerate(models):
        for measure, margin, value in (
            ("beta_spearman", 0.3 + k, 0.5),
            ("beta_auroc", 0.2 + k, 0.7),
            ("alpha_lag_topk", 0.9, 0.9),  # not rated
            ("beta_entropy", np.nan, entropy[m]),
        ):
            correctness.append({**keys, "model_id": m, "measure": measure, "mean_margin": margin,
                                "mean_value": value, "in_main_study": in_main})  # fmt: skip
    stability = pd.DataFrame(
        [{**keys, "model_id": m, "attention": a, "mean_std": 0.01 * (k + 1) + (a == "alpha"),
          "in_main_study": in_main} for k, m in enumerate(models) for a in ("beta", "alpha")]
    )  # fmt: skip
    return prediction, pd.DataFrame(correctness), stability


def test_rating_scores_takes_each_metric_from_its_column():
    prediction, correctness, stability = score_inputs({"a": 0.5, "b": 0.9})
    out = marts.rating_scores(prediction, correctness, stability)
    got = {(r.model_id, r.metric): r.raw_score for r in out.itertuples()}
    assert got == pytest.approx(
        {
            ("a", "test_mse"): 1.0,
            ("b", "test_mse"): 2.0,
            ("a", "test_mse_cv"): 0.1,
            ("b", "test_mse_cv"): 0.2,
            ("a", "beta_spearman_margin"): 0.3,
            ("b", "beta_spearman_margin"): 1.3,
            ("a", "beta_auroc_margin"): 0.2,
            ("b", "beta_auroc_margin"): 1.2,
            ("a", "beta_std"): 0.01,
            ("b", "beta_std"): 0.02,
        }
    )
    assert out["unrated_reason"].isna().all()
    assert "beta_entropy" not in out.columns


@pytest.mark.parametrize(
    ("entropy", "unrated"),
    [(0.98999, False), (0.99, True), (0.995, True), (np.nan, True), (0.0, False)],
)
def test_the_rule_against_uniform_attention_at_its_threshold(entropy, unrated):
    prediction, correctness, stability = score_inputs({"a": entropy})
    out = marts.rating_scores(prediction, correctness, stability).set_index("metric")
    reasons = out["unrated_reason"]
    for metric in ("beta_spearman_margin", "beta_auroc_margin", "beta_std"):
        assert pd.isna(reasons[metric]) != unrated
    # the prediction metrics are always rated
    assert reasons[["test_mse", "test_mse_cv"]].isna().all()
    if unrated and np.isnan(entropy):
        assert reasons["beta_std"].startswith("beta_entropy undefined")
    elif unrated:
        assert reasons["beta_std"].startswith(
            f"near-uniform attention: mean beta_entropy {entropy:.3f}"
        )


def test_rating_scores_keeps_the_main_study_only():
    prediction, correctness, stability = score_inputs({"a": 0.5})
    side = score_inputs({"z": 0.5}, in_main=False)
    unknown = score_inputs({"y": 0.5}, in_main=None)
    out = marts.rating_scores(
        pd.concat([prediction, side[0], unknown[0]]),
        pd.concat([correctness, side[1], unknown[1]]),
        pd.concat([stability, side[2], unknown[2]]),
    )
    assert set(out["model_id"]) == {"a"} and len(out) == 5


# --------------------------------------------------------------------------- stability


def key_rng(seed, *parts):
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4]
    return np.random.default_rng([seed, int.from_bytes(digest, "little")])


SEEDS = [3, 1, 2]  # unsorted on purpose: the mart sorts them


def stability_inputs():
    rng = np.random.default_rng(5)
    runs, correctness, attention = [], [], []
    mse = {"A": [1.0, 2.0, 4.0], "B": [3.0, 3.5, 2.5]}  # by sorted seed 1, 2, 3
    for model, values in mse.items():
        for seed in SEEDS:
            base = {"suite_run_id": "s", "variant_id": "v", "model_id": model, "seed": seed}
            runs.append({**base, "test_mse": values[seed - 1]})
            for measure in ("beta_spearman", "beta_auroc", "alpha_lag_topk"):
                correctness.append({**base, "measure": measure,
                                    "margin": round(float(rng.uniform(-1, 1)), 3)})  # fmt: skip
            for t in range(2):
                for s in range(2):
                    attention.append({**base, "attention": "beta", "target_index": t,
                                      "source_index": s, "lag": np.nan,
                                      "value": round(float(rng.uniform(0, 1)), 3)})  # fmt: skip
            attention.append({**base, "attention": "alpha", "target_index": 0,
                              "source_index": 1, "lag": 1.0, "value": 50.0 * seed})  # fmt: skip
    # another variant's rows must stay out
    runs.append({"suite_run_id": "s", "variant_id": "w", "model_id": "A", "seed": 9,
                 "test_mse": 100.0})  # fmt: skip
    correctness.append({"suite_run_id": "s", "variant_id": "w", "model_id": "A", "seed": 1,
                        "measure": "beta_auroc", "margin": 100.0})  # fmt: skip
    attention.append({"suite_run_id": "t", "variant_id": "v", "model_id": "A", "seed": 1,
                      "attention": "beta", "target_index": 0, "source_index": 0,
                      "lag": np.nan, "value": 100.0})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(correctness), pd.DataFrame(attention)


METRICS = ("test_mse", "test_mse_cv", "beta_spearman_margin", "beta_auroc_margin", "beta_std")


def expected_score(metric, model, seeds, runs, correctness, attention):
    """The docstring's formulas on the runs of the drawn seeds, with plain numpy."""
    mine = lambda f: f[(f.suite_run_id == "s") & (f.variant_id == "v") & (f.model_id == model)]  # noqa: E731
    if metric in ("test_mse", "test_mse_cv"):
        by_seed = mine(runs).set_index("seed")["test_mse"]
        values = np.array([by_seed[s] for s in seeds])
        if metric == "test_mse":
            return values.mean()
        return np.std(values, ddof=1) / values.mean()
    if metric == "beta_std":
        beta = mine(attention)
        beta = beta[beta.attention == "beta"]
        stds = []
        for (_t, _s), cells in beta.groupby(["target_index", "source_index"]):
            by_seed = cells.set_index("seed")["value"]
            stds.append(np.std([by_seed[s] for s in seeds], ddof=1))
        return np.mean(stds)
    measure = metric.removesuffix("_margin")
    rows = mine(correctness)
    by_seed = rows[rows.measure == measure].set_index("seed")["margin"]
    return np.mean([by_seed[s] for s in seeds])


def published_ratings(runs, correctness, attention, rating=(1, 2)):
    rows = []
    seeds = sorted(runs.loc[runs.variant_id == "v", "seed"].unique())
    for metric in METRICS:
        for model, r in zip(("A", "B"), rating, strict=True):
            raw = expected_score(metric, model, seeds, runs, correctness, attention)
            rows.append({"suite_run_id": "s", "variant_id": "v", "metric": metric,
                         "model_id": model, "raw_score": raw, "rating": r,
                         "rating_reason": None})  # fmt: skip
    return pd.DataFrame(rows)


def test_every_resample_is_the_documented_draw_scored_by_the_documented_formulas(monkeypatch):
    runs, correctness, attention = stability_inputs()
    ratings = published_ratings(runs, correctness, attention)
    seen = {}

    def record(key, rows, system, draws, levels, rule, counts, interval=True, weights=None):
        seen[key["metric"]] = {"draws": draws, "rule": rule, "counts": counts, "levels": levels,
                               "interval": interval, "models": rows[system].tolist()}  # fmt: skip
        return []

    monkeypatch.setattr(marts, "stability_records", record)
    monkeypatch.setattr(marts, "stability_table", lambda records, *a, **k: records)
    marts.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=25, seed=4, exact_max_seeds=0
    )
    rng = key_rng(4, "interpretability", "v")
    picks = [rng.integers(0, 3, 3) for _ in range(25)]
    seeds = sorted(SEEDS)
    assert set(seen) == set(METRICS)
    for metric in METRICS:
        got = seen[metric]
        assert got["counts"] == {"n_resamples": 25, "n_seeds": 3}
        assert got["levels"] == 3 and got["interval"] is False
        assert len(got["draws"]) == 25
        for pick, draw in zip(picks, got["draws"], strict=True):
            drawn = [seeds[i] for i in pick]
            assert set(draw) == {"A", "B"}
            for model in ("A", "B"):
                want = expected_score(metric, model, drawn, runs, correctness, attention)
                if np.isnan(want):
                    assert np.isnan(draw[model]), (metric, model, drawn)
                else:
                    assert draw[model] == pytest.approx(want, abs=1e-12), (metric, model, drawn)
    # the rule of the suite's rows in seeds/suite_rating_specs.csv: (ideal, higher, worst)
    assert seen["test_mse"]["rule"] == (0.0, False, None)
    assert seen["beta_std"]["rule"] == (0.0, False, None)
    assert seen["beta_auroc_margin"]["rule"] == (None, True, None)


def test_a_model_with_a_null_rating_is_resampled_too(monkeypatch):
    # its resampled scores only feed n_resamples_undefined: the kit re-rates the rated
    # models alone (test_s32_suites_interp_undefined checks the shares are unmoved)
    runs, correctness, attention = stability_inputs()
    ratings = published_ratings(runs, correctness, attention, rating=(1, None))
    seen = {}

    def record(key, rows, system, draws, levels, rule, counts, interval=True, weights=None):
        seen[key["metric"]] = draws
        return []

    monkeypatch.setattr(marts, "stability_records", record)
    monkeypatch.setattr(marts, "stability_table", lambda records, *a, **k: records)
    marts.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=5, exact_max_seeds=0
    )
    for draws in seen.values():
        assert len(draws) == 5 and all(set(d) == {"A", "B"} for d in draws)


def test_the_stability_table_end_to_end_on_a_dominant_model():
    runs, correctness, attention = stability_inputs()
    ratings = published_ratings(runs, correctness, attention)
    table = marts.rating_stability_table(runs, correctness, attention, ratings, 3, resamples=10)
    assert len(table) == 10
    # the docstring's columns, without an interval
    assert list(table.columns) == [
        "suite_run_id", "metric", "variant_id", "model_id", "raw_score", "rating",
        "rating_levels", "rating_reason", "share_at_rating", "share_mc_se", "n_resamples",
        "n_seeds",
        "n_resamples_undefined",
    ]  # fmt: skip
    assert (table["n_seeds"] == 3).all() and (table["n_resamples"] == 10).all()
    assert table["share_at_rating"].between(0, 1).all()


def capture_draws(monkeypatch):
    seen = {}

    def record(key, rows, system, draws, levels, rule, counts, interval=True, weights=None):
        seen[key["metric"]] = (draws, counts)
        return []

    monkeypatch.setattr(marts, "stability_records", record)
    monkeypatch.setattr(marts, "stability_table", lambda records, *a, **k: records)
    return seen


def test_the_defaults_are_the_projects_resample_count_and_seed_zero(monkeypatch):
    runs, correctness, attention = stability_inputs()
    ratings = published_ratings(runs, correctness, attention)
    seen = capture_draws(monkeypatch)
    marts.rating_stability_table(runs, correctness, attention, ratings, 3, exact_max_seeds=0)
    project = (Path(__file__).parents[2] / "dbt_project.yml").read_text()
    resamples = int(re.search(r"^\s*bootstrap_resamples:\s*(\d+)", project, re.M).group(1))
    draws, counts = seen["test_mse"]
    assert counts == {"n_resamples": resamples, "n_seeds": 3} and len(draws) == resamples
    rng = key_rng(0, "interpretability", "v")
    by_seed = {1: 1.0, 2: 2.0, 3: 4.0}  # model A's test MSE
    for draw in draws:
        pick = rng.integers(0, 3, 3)
        assert draw["A"] == pytest.approx(np.mean([by_seed[1 + i] for i in pick]))


def test_two_seeds_are_enough_to_resample(monkeypatch):
    runs, correctness, attention = stability_inputs()
    keep = lambda f: f[f["seed"] != 3]  # noqa: E731
    runs, correctness, attention = keep(runs), keep(correctness), keep(attention)
    ratings = published_ratings(runs, correctness, attention).query("metric == 'test_mse'")
    seen = capture_draws(monkeypatch)
    marts.rating_stability_table(
        runs, correctness, attention, ratings, 3, resamples=6, seed=1, exact_max_seeds=0
    )
    draws, counts = seen["test_mse"]
    assert counts == {"n_resamples": 6, "n_seeds": 2}
    rng = key_rng(1, "interpretability", "v")
    for draw in draws:
        pick = rng.integers(0, 2, 2)
        assert draw["B"] == pytest.approx(np.mean([[3.0, 3.5][i] for i in pick]))


# --------------------------------------------------------------------------- one score


def wide(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(values, index=[1, 2, 3]).T


def test_resampled_scores_skip_missing_runs_and_guard_their_edges():
    scores = {
        "test_mse": wide({"A": [2.0, np.nan, 4.0], "Z": [-1.0, 1.0, 3.0], "O": [5.0, 5.0, 5.0]}),
        "beta_auroc_margin": wide({"A": [0.2, np.nan, -0.4]}),
    }
    score = marts._resampled_score
    # the mean and the CV over the finite runs of the draw
    assert score("test_mse", "A", np.array([0, 1, 2]), scores, {}) == 3.0
    assert score("test_mse_cv", "A", np.array([0, 1, 2]), scores, {}) == pytest.approx(
        np.std([2.0, 4.0], ddof=1) / 3.0
    )
    assert score("test_mse_cv", "A", np.array([0, 0, 2]), scores, {}) == pytest.approx(
        np.std([2.0, 2.0, 4.0], ddof=1) / (8 / 3)
    )
    # one finite run: a mean but no CV
    assert score("test_mse", "A", np.array([1, 1, 2]), scores, {}) == 4.0
    assert np.isnan(score("test_mse_cv", "A", np.array([1, 1, 2]), scores, {}))
    assert np.isnan(score("test_mse", "A", np.array([1, 1, 1]), scores, {}))
    # a mean of exactly 0, or below, has no CV; a constant model has CV 0
    assert np.isnan(score("test_mse_cv", "Z", np.array([0, 1]), scores, {}))
    assert np.isnan(score("test_mse_cv", "Z", np.array([0, 0]), scores, {}))
    assert score("test_mse_cv", "Z", np.array([1, 2]), scores, {}) == pytest.approx(
        np.std([1.0, 3.0], ddof=1) / 2.0
    )
    assert score("test_mse_cv", "O", np.array([0, 1, 2]), scores, {}) == 0.0
    # an unknown model or metric
    assert np.isnan(score("test_mse", "Q", np.array([0, 1]), scores, {}))
    assert np.isnan(score("test_mse_cv", "Q", np.array([0, 1]), scores, {}))
    assert np.isnan(score("beta_auroc_margin", "Q", np.array([0, 1]), scores, {}))
    assert np.isnan(score("unknown", "A", np.array([0, 1]), scores, {}))
    # a margin: the mean of the finite margins of the draw
    assert score("beta_auroc_margin", "A", np.array([0, 2, 2]), scores, {}) == pytest.approx(
        (0.2 - 0.8) / 3
    )
    assert score("beta_auroc_margin", "A", np.array([0, 1]), scores, {}) == pytest.approx(0.2)
    assert np.isnan(score("beta_auroc_margin", "A", np.array([1]), scores, {}))


@pytest.mark.filterwarnings("ignore:Degrees of freedom")
def test_resampled_beta_std_is_the_mean_over_cells_of_the_sample_std():
    cube = np.array([[0.1, 0.4, 0.7], [0.2, np.nan, 0.6], [0.5, np.nan, np.nan]])
    score = marts._resampled_score
    pick = np.array([0, 1, 2])
    # cell 3 has one run only: no std; the others: sample std of their finite runs
    want = np.mean([np.std([0.1, 0.4, 0.7], ddof=1), np.std([0.2, 0.6], ddof=1)])
    assert score("beta_std", "A", pick, {}, {"A": cube}) == pytest.approx(want)
    pick = np.array([0, 2])
    want = np.mean([np.std([0.1, 0.7], ddof=1), np.std([0.2, 0.6], ddof=1)])
    assert score("beta_std", "A", pick, {}, {"A": cube}) == pytest.approx(want)
    # one drawn run, an unknown model, or no cell with two runs: undefined
    assert np.isnan(score("beta_std", "A", np.array([0]), {}, {"A": cube}))
    assert np.isnan(score("beta_std", "B", pick, {}, {"A": cube}))
    assert np.isnan(score("beta_std", "A", np.array([1, 1]), {}, {"A": cube[1:]}))
    # skewed cells: a median over cells would differ from the mean
    cube = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    assert score("beta_std", "A", np.array([0, 1]), {}, {"A": cube}) == pytest.approx(
        np.std([0.0, 3.0], ddof=1) / 3
    )
