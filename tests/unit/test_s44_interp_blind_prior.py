"""Data-blind priors against the suite's fixed truths: the report shows what a rule that
never sees the data scores, beside the models.

The suite's own generators fix the truth's structure (dataset 2: each series drives only
itself; dataset 5: series 0 drives every series; the lattice: every edge at lag 1), so such
a prior reaches the top score there, far above the exact chance level. These tests
compute the prior's score by hand (pair counting, scipy's rank correlation, top-1 by
argmax) from the generators' edges.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsrate.suites.interpretability import report as interp
from tsrate.suites.interpretability.baselines import best_blind_prior
from tsrate.suites.interpretability.datasets import generate


def truth_of(dataset_id: int, **params):
    data = generate(dataset_id, length=60, burn_in=20, seed=2293, **params)
    return data.interaction_matrix(), data.lag_tensor(10)


def cells_of(truth: np.ndarray, picks: bool = False) -> pd.DataFrame:
    """interp_attention_summary's beta (and tcdf_picks) cells of one model on this truth."""
    n = len(truth)
    kinds = ("beta", "tcdf_picks") if picks else ("beta",)
    return pd.DataFrame(
        [
            {"suite_run_id": "s", "variant_id": "v", "model_id": "imv_tensor",
             "attention": kind, "target_index": t, "source_index": s, "lag": None,
             "n_runs": 2, "mean_value": 1.0 / n, "std_value": 0.0,
             "true_weight": float(truth[t, s])}
            for kind, t, s in itertools.product(kinds, range(n), range(n))
        ]
    )  # fmt: skip


def auroc_by_pairs(scores: np.ndarray, labels: np.ndarray) -> float:
    """AUROC by counting every (true, false) pair: 1 if the true cell scores higher, 1/2 tie."""
    pos, neg = scores[labels].ravel(), scores[~labels].ravel()
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
    return wins / (pos.size * neg.size)


def test_dataset_2_own_past_prior_is_perfect_and_the_report_shows_it():
    truth, _ = truth_of(2)
    own = np.eye(len(truth))  # "each series drives itself": no data looked at
    spearman = stats.spearmanr(own.ravel(), truth.ravel()).statistic
    auroc = auroc_by_pairs(own, truth > 0)
    assert spearman == pytest.approx(1.0) and auroc == 1.0
    rows = interp.blind_prior_rows(cells_of(truth, picks=True)).set_index("measure")
    assert rows.loc["beta_spearman", "mean_value"] == pytest.approx(spearman)
    assert rows.loc["beta_spearman", "mean_chance"] == pytest.approx(0.0)
    assert rows.loc["beta_auroc", "mean_value"] == pytest.approx(auroc)
    assert rows.loc["beta_auroc", "mean_margin"] == pytest.approx(auroc - 0.5)
    # TCDF-style picks of the diagonal: every pick true, every true edge picked
    assert rows.loc["tcdf_precision", "mean_value"] == pytest.approx(1.0)
    assert rows.loc["tcdf_recall", "mean_value"] == pytest.approx(1.0)
    assert set(rows["model_id"]) == {interp.BLIND_PRIOR}


def test_dataset_5_lowest_index_prior_is_perfect():
    truth, _ = truth_of(5)
    first = np.zeros_like(truth)
    first[:, 0] = 1.0  # "series 0 drives everything"
    auroc = auroc_by_pairs(first, truth > 0)
    assert auroc == 1.0
    rows = interp.blind_prior_rows(cells_of(truth)).set_index("measure")
    assert rows.loc["beta_auroc", "mean_value"] == pytest.approx(auroc)
    assert rows.loc["beta_topk", "mean_value"] == pytest.approx(1.0)
    assert rows.loc["beta_topk", "mean_chance"] == pytest.approx(1 / 5)
    assert "tcdf_precision" not in rows.index  # no TCDF picks in this variant


def test_the_lattice_recency_prior_finds_every_lag():
    truth, lags = truth_of(9, side=3)
    recency = 1.0 / np.arange(1, 11)
    pairs = np.argwhere(lags.sum(-1) > 0)
    by_hand = np.mean([float(np.argmax(recency) == np.argmax(lags[t, s])) for t, s in pairs])
    assert by_hand == 1.0
    n = len(truth)
    best = best_blind_prior(np.ones((n, n)), np.ones(lags.shape), None, truth, lags)
    score, chance, name = best["alpha_lag_topk"]
    assert (score, name) == (pytest.approx(by_hand), "recency")
    assert chance == pytest.approx(1 / 10)


def test_dataset_4_prior_does_not_beat_chance():
    """Two series driving each other: no fixed rule ranks the true edges above the others."""
    truth, _ = truth_of(4)
    rows = interp.blind_prior_rows(cells_of(truth)).set_index("measure")
    assert (rows["mean_margin"] <= 1e-12).all(), rows


def test_the_report_table_carries_the_prior_row():
    truth, _ = truth_of(2)
    cells = cells_of(truth).assign(variant_id="d2")
    scores = pd.DataFrame(
        [dict(suite_run_id="s", variant_id="d2", dataset_id=2, model_id="imv_tensor",
              test_mse_mean=0.5, test_mse_std=0.1, in_main_study=True)]
    )  # fmt: skip
    correctness = pd.DataFrame(
        [dict(suite_run_id="s", variant_id="d2", model_id="imv_tensor", measure="beta_auroc",
              mean_value=0.9, std_value=0.0, mean_chance=0.5, mean_margin=0.4)]
    )  # fmt: skip
    page = interp.render_report(
        {"cells": cells, "alpha": pd.DataFrame(), "correctness": correctness,
         "scores": scores, "sensitivity": pd.DataFrame(), "ratings": pd.DataFrame()}
    )  # fmt: skip
    assert interp.BLIND_PRIOR in page and "never see the data" in page
