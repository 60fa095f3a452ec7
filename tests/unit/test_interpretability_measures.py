"""Correctness measures against hand-computed values, and the suite's rating table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.ratings import REASON_LONE_NO_IDEAL
from tsrate.suites.interpretability.datasets import generate
from tsrate.suites.interpretability.marts import correctness_table, rating_scores, rating_table
from tsrate.suites.interpretability.measures import (
    alpha_lag_topk,
    auroc,
    beta_auroc,
    beta_spearman,
    beta_topk,
    chance_level,
    correctness,
    correctness_with_chance,
    expected_topk_hits,
    normalised_entropy,
    pick_precision_recall,
    undefined_reason,
)

TRUTH = np.array([[0.0, 1.0], [1.0, 0.0]])  # dataset 4: antidiagonal


def test_beta_spearman_by_hand():
    beta = np.array([[0.2, 0.8], [0.6, 0.4]])
    # ranks of beta: 0.2->1, 0.4->2, 0.6->3, 0.8->4; truth ranks: zeros 1.5, ones 3.5
    # Pearson of (1,4,3,2) and (1.5,3.5,3.5,1.5): centred products sum to 4, the centred
    # norms are sqrt(5) and 2 -> 4 / (2 sqrt 5)
    assert beta_spearman(beta, TRUTH) == pytest.approx(4 / (2 * math.sqrt(5)))
    assert beta_spearman(np.full((2, 2), 0.5), TRUTH) == 0.0  # constant: no ranking, chance
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
    assert math.isnan(beta_spearman(beta, TRUTH))  # only positives left: constant truth
    # one candidate per target, one true source: recovery certain by construction
    assert math.isnan(beta_topk(beta, TRUTH))
    assert undefined_reason("beta_topk", beta, TRUTH).startswith("true by construction")


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
    # pair (0, 1) has 3 true lags (2, 5, 9); alpha puts lag 2 first (a hit), then 2 slots
    # among 9 tied lags holding 2 true ones: 1 + 2 * 2/9 expected hits of 3; pair (1, 0)
    # has alpha all zero: 3 slots among 10 tied lags holding 3 true ones: 0.9 of 3
    assert table["r1", "alpha_lag_topk"] == pytest.approx(((1 + 4 / 9) / 3 + 0.3) / 2)
    # DA-RNN on dataset 4: one candidate per target (the diagonal is not modelled)
    assert math.isnan(table["r2", "beta_topk"])
    reasons = correctness_table(runs, attention, truth).set_index(["run_key", "measure"])
    assert reasons.loc[("r2", "beta_topk"), "undefined_reason"].startswith("true by construction")
    assert ("r2", "alpha_lag_topk") not in table.index  # encoder-state alpha: no lag measure


def test_rating_table_uses_tsrate_ratings_per_metric_and_variant():
    scores = pd.DataFrame(
        [
            ("s", "test_mse", "d4", "imv_tensor", 0.1),
            ("s", "test_mse", "d4", "tcdf", 0.3),
            ("s", "test_mse", "d4", "darnn", 0.2),
            ("s", "beta_spearman_margin", "d4", "imv_tensor", 0.9),
            ("s", "beta_spearman_margin", "d4", "tcdf", float("nan")),
        ],
        columns=["suite_run_id", "metric", "variant_id", "model_id", "raw_score"],
    )
    rated = rating_table(scores, 3).set_index(["metric", "model_id"])
    assert rated.loc[("test_mse", "imv_tensor"), "rating"] == 1
    assert rated.loc[("test_mse", "darnn"), "rating"] == 2
    assert rated.loc[("test_mse", "tcdf"), "rating"] == 3
    # a lone margin: the margin has no fixed ideal (seed), so no rating, and the reason
    # says so; the undefined one is listed, not rated, with the reason
    lone = rated.loc[("beta_spearman_margin", "imv_tensor")]
    assert pd.isna(lone["rating"]) and lone["rating_reason"] == REASON_LONE_NO_IDEAL
    assert bool(lone["higher_is_better"])
    undefined = rated.loc[("beta_spearman_margin", "tcdf")]
    assert pd.isna(undefined["rating"]) and pd.isna(undefined["raw_score"])
    assert undefined["rating_reason"].startswith("not rated: ")
    assert rating_table(scores.iloc[0:0], 3).empty
    with pytest.raises(ValueError, match="no rating direction"):
        rating_table(scores.assign(metric="unknown"), 3)


def test_near_uniform_attention_is_left_out_of_the_comparison_and_says_why():
    """rating_scores marks the margins and beta_std of a flat beta (mean entropy >= 0.99);
    rating_table rates the others among themselves and keeps the flat one unrated."""
    keys = {"suite_run_id": "s", "variant_id": "d5", "in_main_study": True}
    entropy = {"imv_tensor": 0.40, "tcdf": 0.60, "seq2graph": 0.995}
    margin = {"imv_tensor": 0.30, "tcdf": 0.10, "seq2graph": 0.50}  # flat one scores best
    prediction = pd.DataFrame(
        [
            {**keys, "model_id": m, "test_mse_mean": 0.1 * (i + 1), "test_mse_cv": 0.1}
            for i, m in enumerate(entropy)
        ]
    )
    correctness = pd.DataFrame(
        [
            {**keys, "model_id": m, "measure": "beta_entropy", "mean_value": e, "mean_margin": None}
            for m, e in entropy.items()
        ]
        + [
            {**keys, "model_id": m, "measure": "beta_spearman", "mean_value": 0.0, "mean_margin": v}
            for m, v in margin.items()
        ]
    )
    stability = pd.DataFrame(
        [{**keys, "model_id": m, "attention": "beta", "mean_std": 0.01} for m in entropy]
    )
    scores = rating_scores(prediction, correctness, stability)
    flagged = scores.set_index(["metric", "model_id"])["unrated_reason"]
    assert flagged[("beta_spearman_margin", "seq2graph")].startswith("near-uniform attention")
    assert flagged[("beta_std", "seq2graph")].startswith("near-uniform attention")
    assert pd.isna(flagged[("test_mse", "seq2graph")])  # prediction is rated whatever beta is
    assert pd.isna(flagged[("beta_spearman_margin", "imv_tensor")])
    rated = rating_table(scores, 2).set_index(["metric", "model_id"])
    # without the flat model the two peaked ones split 1 / 2 by their margins
    assert rated.loc[("beta_spearman_margin", "tcdf"), "rating"] == 1
    assert rated.loc[("beta_spearman_margin", "imv_tensor"), "rating"] == 2
    flat = rated.loc[("beta_spearman_margin", "seq2graph")]
    assert pd.isna(flat["rating"]) and pd.isna(flat["rank"]) and flat["raw_score"] == 0.5
    assert "0.995" in flat["rating_reason"]
    # beta_std: the two peaked models tie away from the ideal 0, and beta_std has no worst
    # value: no scale to rate them on -> unrated, and the reason says so (issue 25 item 4)
    assert pd.isna(rated.loc[("beta_std", "imv_tensor"), "rating"])
    assert "no known worst value" in rated.loc[("beta_std", "imv_tensor"), "rating_reason"]
    assert pd.isna(rated.loc[("beta_std", "seq2graph"), "rating"])
    assert rated.loc[("test_mse", "seq2graph"), "rating"] == 2


def test_heatmap_spec_has_one_cell_per_entry_and_greys_missing_ones():
    from tsrate.html.charts import page_specs, spec_rows
    from tsrate.suites.interpretability.report import heatmap_figure, heatmap_spec

    spec = heatmap_spec(np.array([[0.0, 1.0], [np.nan, 0.5]]), "d4 <beta>", top=1.0)
    cells = list(spec_rows(spec))
    assert len(cells) == 4
    values = {(c["row"], c["col"]): c.get("value") for c in cells}
    assert values[(0, 1)] == 1.0 and values[(1, 1)] == 0.5 and values[(1, 0)] is None
    assert [c["missing"] for c in cells] == [False, False, True, False]
    assert spec["encoding"]["color"]["condition"]["value"] == "#eeeeee"
    assert spec["encoding"]["color"]["scale"]["domain"] == [0, 1.0]
    # the title survives the page's escaping (a spec inside <script>)
    html = heatmap_figure(np.eye(2), "d4 </script> beta")
    assert list(page_specs(html).values())[0]["title"]["text"] == "d4 </script> beta"
    with pytest.raises(ValueError, match="2-D"):
        heatmap_spec(np.zeros(3), "bad")


def _truths():
    """Ground truths of datasets 2-8 and 10 (their generators' edges) at window 10."""
    out = {}
    for dataset_id in (2, 3, 4, 5, 6, 7, 8, 10):
        data = generate(dataset_id, length=300, burn_in=20, seed=1)
        out[dataset_id] = (data.interaction_matrix(), data.lag_tensor(10))
    return out


@pytest.mark.parametrize("dataset_id", [2, 3, 4, 5, 6, 7, 8, 10])
@pytest.mark.parametrize("masked_diagonal", [False, True])
def test_uniform_attention_scores_exactly_at_chance_on_every_measure(dataset_id, masked_diagonal):
    """Uniform beta and alpha, and all-or-nothing picks, have margin 0 over chance on every
    correctness measure (value = chance), with or without DA-RNN's masked diagonal."""
    truth, lags = _truths()[dataset_id]
    n = truth.shape[0]
    if masked_diagonal and n == 2:
        pytest.skip("one candidate per target: every beta measure is undefined or certain")
    beta = np.full((n, n), 1.0 / n)
    if masked_diagonal:
        beta = np.full((n, n), 1.0 / (n - 1))
        np.fill_diagonal(beta, np.nan)
    alpha = np.full((n, n, 10), 0.1)
    # TCDF's picks come with an unmasked beta (it attends to every series)
    all_picks = [None] if masked_diagonal else [np.ones((n, n)), np.zeros((n, n))]
    for picks in all_picks:
        records = correctness_with_chance(beta, alpha, picks, truth, lags)
        for record in records:
            if record["measure"] in ("beta_entropy", "alpha_entropy"):
                assert record["value"] == pytest.approx(1.0)  # uniform
                continue
            if np.isfinite(record["value"]):
                assert record["margin"] == pytest.approx(0.0, abs=1e-12), record
    # the chance levels of the ranking measures, independently: AUROC 1/2, Spearman 0,
    # top-k the share of true cells among candidates
    values = correctness(beta, alpha, None, truth, lags)
    if masked_diagonal and (truth[np.isfinite(beta)] == 0).all():
        # datasets 2, 3: only self-edges, all masked: nothing to rank (the paper: "cannot
        # evaluate DA-RNN on datasets 2 and 3"); undefined, with a reason
        assert np.isnan(values["beta_auroc"]) and np.isnan(values["beta_topk"])
        assert undefined_reason("beta_auroc", beta, truth) is not None
        return
    assert values["beta_auroc"] == 0.5 and values["beta_spearman"] == 0.0
    candidates = np.isfinite(beta)
    k = (truth > 0) & candidates
    rows = [i for i in range(n) if 0 < k[i].sum() < candidates[i].sum()]
    shares = [k[i].sum() / candidates[i].sum() for i in rows]
    if shares:
        assert values["beta_topk"] == pytest.approx(np.mean(shares))
    else:  # every target's true sources fill its candidates: certain by construction
        assert np.isnan(values["beta_topk"])
    assert values["alpha_lag_topk"] == pytest.approx(
        np.mean(
            [(lags[t, s] > 0).sum() / 10 for t in range(n) for s in range(n) if lags[t, s].any()]
        )
    )


def test_correct_attention_beats_chance_and_a_positional_bias_does_not_hide():
    """The true structure as attention has a large positive margin; a near-uniform beta
    leaning on the first series (seq2graph's bias) scores well on dataset 5 (whose only
    driver is series 0), which the chance level cannot see -- its entropy (~1) can."""
    truth, lags = _truths()[5]
    records = {r["measure"]: r for r in correctness_with_chance(truth, None, None, truth, lags)}
    assert records["beta_auroc"]["margin"] > 0.4 and records["beta_spearman"]["margin"] > 0.5
    biased = np.full((5, 5), 0.198)
    biased[:, 0] = 0.208
    records = {r["measure"]: r for r in correctness_with_chance(biased, None, None, truth, lags)}
    assert records["beta_auroc"]["value"] > 0.9
    assert records["beta_entropy"]["value"] > 0.999


def test_expected_topk_hits_and_entropy_by_hand():
    # top 2 of (3, 1, 1, 1): 3 is in, one slot among three tied 1s of which one is relevant
    hits = expected_topk_hits(np.array([3.0, 1.0, 1.0, 1.0]), np.array([1, 1, 0, 0], bool), 2)
    assert hits == pytest.approx(1 + 1 / 3)
    assert normalised_entropy(np.array([[0.5, 0.5], [1.0, 0.0]])) == pytest.approx(0.5)
    p = np.array([0.7, 0.2, 0.1])
    assert normalised_entropy(p) == pytest.approx(-(p * np.log(p)).sum() / np.log(3))
    assert normalised_entropy(np.array([[np.nan, 1.0]])) != normalised_entropy(
        np.array([[np.nan, 1.0]])
    )


def test_chance_level_of_auroc_is_one_half_when_every_target_has_the_same_share():
    """Permuting the truth's sources within each target: the expected AUROC of a fixed beta
    is exactly 1/2 whatever beta is when every target has the same share of true sources
    (each cell equally likely to be a true edge); with unequal shares (dataset 7: 1 or 2 of
    5) it depends on beta, because cells of different targets are pooled."""
    rng = np.random.default_rng(4)
    beta = rng.dirichlet(np.ones(5), size=5)
    ring = np.roll(np.eye(5), 1, axis=1) + np.roll(np.eye(5), 2, axis=1)  # 2 of 5 per target
    lags = np.zeros((5, 5, 10))
    assert chance_level(beta, None, None, ring, lags)["beta_auroc"] == pytest.approx(0.5, abs=1e-12)
    truth, lags = _truths()[7]
    levels = {
        chance_level(rng.dirichlet(np.ones(5), size=5), None, None, truth, lags)["beta_auroc"]
        for _ in range(5)
    }
    assert len(levels) > 1 and all(abs(level - 0.5) < 0.1 for level in levels)


def test_report_trends_section_says_when_a_sweep_cannot_show_a_trend():
    from tsrate.suites.interpretability.report import trends_section

    def rows(variants):
        return pd.DataFrame(
            [
                dict(
                    variant_id=v,
                    model_id="imv_tensor",
                    measure="beta_auroc",
                    mean_value=0.5 + 0.1 * i,
                    mean_chance=0.5,
                    mean_margin=0.1 * i,
                )
                for i, v in enumerate(variants)
            ]
        )

    small = trends_section(rows(["d9_T2.269", "d10_r3.57"]))
    assert small.count("cannot show the paper's trend") == 2
    paper = trends_section(
        rows(["d9_T2", "d9_T2.269", "d9_T2.75", "d10_r1.5", "d10_r2.5", "d10_r3.55"])
    )
    assert "cannot show" not in paper
    # one row per temperature, in order, with the margin over chance
    assert paper.index(">2.269<") < paper.index(">2.75<")
    assert "Mean margin" in paper  # human column names


def test_rated_scores_leave_near_uniform_attention_unrated():
    """Correctness margins and beta_std are rated only where the mean beta entropy is below
    0.99: a flat attention (seq2graph-like) keeps its MSE ratings and loses the rest (its
    rows stay, with a null rating and the reason)."""
    from tsrate.suites.interpretability.marts import NEAR_UNIFORM_ENTROPY

    keys = dict(suite_run_id="s", variant_id="d5", in_main_study=True)
    prediction = pd.DataFrame(
        [dict(keys, model_id=m, test_mse_mean=0.1, test_mse_cv=0.2) for m in ("imv", "s2g")]
    )
    correctness = pd.DataFrame(
        [
            dict(keys, model_id="imv", measure="beta_entropy", mean_value=0.6, mean_margin=None),
            dict(keys, model_id="s2g", measure="beta_entropy", mean_value=0.9999, mean_margin=None),
            dict(keys, model_id="imv", measure="beta_auroc", mean_value=0.9, mean_margin=0.4),
            dict(keys, model_id="s2g", measure="beta_auroc", mean_value=0.72, mean_margin=0.22),
            dict(keys, model_id="imv", measure="beta_spearman", mean_value=0.8, mean_margin=0.8),
        ]
    )
    stability = pd.DataFrame(
        [dict(keys, model_id=m, attention="beta", mean_std=0.01) for m in ("imv", "s2g")]
    )
    scores = rating_scores(prediction, correctness, stability).set_index(["model_id", "metric"])
    assert scores.loc[("imv", "beta_auroc_margin"), "raw_score"] == 0.4  # the margin, not 0.9
    assert pd.isna(scores.loc[("imv", "beta_std"), "unrated_reason"])
    assert pd.isna(scores.loc[("imv", "beta_spearman_margin"), "unrated_reason"])
    assert pd.notna(scores.loc[("s2g", "beta_auroc_margin"), "unrated_reason"])
    assert pd.notna(scores.loc[("s2g", "beta_std"), "unrated_reason"])
    assert pd.isna(scores.loc[("s2g", "test_mse"), "unrated_reason"])
    rated = rating_table(scores.reset_index(), 3).set_index(["model_id", "metric"])
    assert pd.isna(rated.loc[("s2g", "beta_auroc_margin"), "rating"])
    assert pd.isna(rated.loc[("s2g", "beta_std"), "rating"])
    # test_mse is rated whatever beta is: here both models tie at 0.1, away from the ideal 0
    # of a metric without a worst value, so both are unrated for that reason (not beta's)
    assert "no known worst value" in rated.loc[("s2g", "test_mse"), "rating_reason"]
    assert "no known worst value" in rated.loc[("imv", "beta_std"), "rating_reason"]  # lone
    assert NEAR_UNIFORM_ENTROPY == 0.99
