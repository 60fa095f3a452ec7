"""Correctness measures against hand-computed values, and the suite's rating table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.interpretability.marts import correctness_table, rating_table
from tsrate.suites.interpretability.measures import (
    alpha_lag_topk,
    auroc,
    beta_auroc,
    beta_spearman,
    beta_topk,
    pick_precision_recall,
)

TRUTH = np.array([[0.0, 1.0], [1.0, 0.0]])  # dataset 4: antidiagonal


def test_beta_spearman_by_hand():
    beta = np.array([[0.2, 0.8], [0.6, 0.4]])
    # ranks of beta: 0.2->1, 0.4->2, 0.6->3, 0.8->4; truth ranks: zeros 1.5, ones 3.5
    # Pearson of (1,4,3,2) and (1.5,3.5,3.5,1.5): centred products sum to 4, the centred
    # norms are sqrt(5) and 2 -> 4 / (2 sqrt 5)
    assert beta_spearman(beta, TRUTH) == pytest.approx(4 / (2 * math.sqrt(5)))
    assert math.isnan(beta_spearman(np.full((2, 2), 0.5), TRUTH))
    assert math.isnan(beta_spearman(beta, np.zeros((2, 2))))


def test_beta_topk_and_auroc_by_hand():
    beta = np.array([[0.2, 0.8], [0.4, 0.6]])
    assert beta_topk(beta, TRUTH) == 0.5  # row 0 right, row 1 wrong
    # positives 0.8, 0.4; negatives 0.2, 0.6: 3 of 4 (positive, negative) pairs ordered
    assert beta_auroc(beta, TRUTH) == 0.75
    assert beta_auroc(np.array([[0.2, 0.8], [0.6, 0.4]]), TRUTH) == 1.0
    assert auroc(np.array([1.0, 1.0]), np.array([True, False])) == 0.5  # a tie counts 1/2
    assert math.isnan(auroc(np.array([1.0, 2.0]), np.array([True, True])))
    assert math.isnan(beta_topk(beta, np.zeros((2, 2))))


def test_beta_with_nan_cells_leaves_them_out():
    beta = np.array([[np.nan, 1.0], [1.0, np.nan]])  # DA-RNN: no diagonal
    assert math.isnan(beta_spearman(beta, TRUTH))  # only positives left: constant
    assert beta_topk(beta, TRUTH) == 1.0


def test_alpha_lag_topk_by_hand():
    lag_truth = np.zeros((1, 1, 10))
    lag_truth[0, 0, [2, 6]] = 0.5  # lags 3 and 7
    alpha = np.full((1, 1, 10), 0.05)
    alpha[0, 0, 2] = 0.3  # lag 3 on top
    alpha[0, 0, 0] = 0.2  # lag 1 second: one of two true lags found
    assert alpha_lag_topk(alpha, lag_truth) == 0.5


def test_pick_precision_recall_by_hand():
    picks = np.array([[1, 1], [0, 0]])
    assert pick_precision_recall(picks, TRUTH) == (0.5, 0.5)
    precision, recall = pick_precision_recall(np.zeros((2, 2)), TRUTH)
    assert math.isnan(precision) and recall == 0.0


def test_correctness_table_from_long_attention():
    runs = pd.DataFrame(
        [
            dict(
                suite_run_id="s",
                run_key="r1",
                variant_key="v",
                variant_id="d4",
                model_id="imv_tensor",
                seed=1,
                n_series=2,
                window_length=10,
            ),
            dict(
                suite_run_id="s",
                run_key="r2",
                variant_key="v",
                variant_id="d4",
                model_id="darnn",
                seed=1,
                n_series=2,
                window_length=10,
            ),
        ]
    )
    beta = [("beta", t, s, None, v) for (t, s), v in np.ndenumerate([[0.2, 0.8], [0.6, 0.4]])]
    alpha = [("alpha", 0, 1, lag, 1.0 if lag == 2 else 0.0) for lag in range(1, 11)]
    rows = [("r1", *row) for row in beta + alpha]
    rows += [("r2", "beta", 0, 1, None, 1.0), ("r2", "beta", 1, 0, None, 1.0)]
    rows += [("r2", "beta", 0, 0, None, 0.0), ("r2", "beta", 1, 1, None, 0.0)]
    rows += [("r2", "alpha", 0, -1, lag, 0.1) for lag in range(1, 11)]
    attention = pd.DataFrame(
        rows, columns=["run_key", "attention", "target_index", "source_index", "lag", "value"]
    )
    truth = pd.DataFrame(
        [
            ("v", 0, 1, 2, 0.4),
            ("v", 0, 1, 5, 0.2),
            ("v", 0, 1, 9, 0.4),
            ("v", 1, 0, 2, 0.4),
            ("v", 1, 0, 5, 0.2),
            ("v", 1, 0, 9, 0.4),
        ],
        columns=["variant_key", "target_index", "source_index", "lag", "weight"],
    )
    table = correctness_table(runs, attention, truth).set_index(["run_key", "measure"])["value"]
    assert table["r1", "beta_topk"] == 1.0
    assert table["r1", "beta_auroc"] == 1.0
    # pair (0, 1) has 3 true lags (2, 5, 9); alpha puts lag 2 first: 1 of 3; pair (1, 0)
    # has alpha all zero -> ties broken by lag 1, 2, 3: lag 2 found: 1 of 3
    assert table["r1", "alpha_lag_topk"] == pytest.approx(1 / 3)
    assert table["r2", "beta_topk"] == 1.0  # the diagonal is not modelled by DA-RNN
    assert ("r2", "alpha_lag_topk") not in table.index  # encoder-state alpha: no lag measure


def test_rating_table_uses_tsrate_ratings_per_metric_and_variant():
    scores = pd.DataFrame(
        [
            ("s", "test_mse", "d4", "imv_tensor", 0.1),
            ("s", "test_mse", "d4", "tcdf", 0.3),
            ("s", "test_mse", "d4", "darnn", 0.2),
            ("s", "beta_spearman", "d4", "imv_tensor", 0.9),
            ("s", "beta_spearman", "d4", "tcdf", float("nan")),
        ],
        columns=["suite_run_id", "metric", "variant_id", "model_id", "raw_score"],
    )
    rated = rating_table(scores, 3).set_index(["metric", "model_id"])
    assert rated.loc[("test_mse", "imv_tensor"), "rating"] == 1
    assert rated.loc[("test_mse", "darnn"), "rating"] == 2
    assert rated.loc[("test_mse", "tcdf"), "rating"] == 3
    # a lone defined score that is not 0 gets L; the undefined one is not rated
    assert rated.loc[("beta_spearman", "imv_tensor"), "rating"] == 3
    assert bool(rated.loc[("beta_spearman", "imv_tensor"), "higher_is_better"])
    assert ("beta_spearman", "tcdf") not in rated.index
    assert rating_table(scores.iloc[0:0], 3).empty
    with pytest.raises(ValueError, match="no rating direction"):
        rating_table(scores.assign(metric="unknown"), 3)


def test_heatmap_svg_draws_one_cell_per_entry_and_greys_missing_ones():
    import xml.etree.ElementTree as ET

    from tsrate.suites.interpretability.report import heatmap_svg

    svg = heatmap_svg(np.array([[0.0, 1.0], [np.nan, 0.5]]), "d4 <beta>")
    root = ET.fromstring(svg)  # well-formed, title escaped
    cells = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(cells) == 4
    values = {(c.get("data-row"), c.get("data-col")): c.get("data-value") for c in cells}
    assert values[("0", "1")] == "1" and values[("1", "1")] == "0.5"
    fills = {(c.get("data-row"), c.get("data-col")): c.get("fill") for c in cells}
    assert fills[("1", "0")] == "#eeeeee" and fills[("0", "0")] == "rgb(255,255,255)"
    with pytest.raises(ValueError, match="2-D"):
        heatmap_svg(np.zeros(3), "bad")
