"""Where one series was still counted as independent units: the position-bias test with a
series asked inside and outside a quadrant (it sits in both groups), checked against
statsmodels' cluster-robust variances; and data whose series were already independent
(one prompt per series per cell, each series in one group) keeps the plain numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from tsrate.suites.understanding.marts import position_bias_table, score_table
from tsrate.suites.understanding.shared_series import shared_cell_correlations


def scored(answers: list[tuple[int, int, bool]], fmt: str = "csv") -> pd.DataFrame:
    """Retrieval answers (series, quadrant of the queried date, right) of system 'a'."""
    return score_table(
        pd.DataFrame(
            [
                {"suite_run_id": "run", "prompt_key": f"s{s:02d}-q{q}-{i}-{fmt}",
                 "series_key": f"s{s:02d}", "system_id": "a", "dataset": "brownian",
                 "task": "retrieval", "feature": "brownian", "format": fmt, "decimals": 2,
                 "expected": '{"value": 100.0}', "quadrant": q, "series_length": 40,
                 "parse_ok": True, "parse_error": None, "answer": None,
                 "answer_value": 100.0 if ok else 150.0, "answer_date": None}
                for i, (s, q, ok) in enumerate(answers)
            ]
        )
    )  # fmt: skip


def robust_variance(y: np.ndarray, design: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """statsmodels' cluster-robust (CR0: no small-sample factor) covariance of OLS."""
    fit = sm.OLS(y, design).fit(
        cov_type="cluster",
        cov_kwds={"groups": pd.factorize(groups)[0], "use_correction": False},
    )
    return np.asarray(fit.cov_params())


def effective(y: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """Rao-Scott effective (successes, trials): the items over the design effect, the
    cluster-robust variance of the mean over the binomial one (at least 1)."""
    p, n = y.mean(), len(y)
    if p in (0.0, 1.0):
        m = float(len(set(groups)))
        return p * m, m
    deff = max(robust_variance(y, np.ones((n, 1)), groups)[0, 0] / (p * (1 - p) / n), 1.0)
    return p * n / deff, n / deff


def expected_p(y: np.ndarray, inside: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """(p respecting series in both groups, p of the groups taken independent): the pooled
    z test on the effective counts, its variance times Var(p1 - p2) / (Var p1 + Var p2)
    (all cluster-robust: the difference is the slope of the answers on `inside`)."""
    e1, e2 = effective(y[inside], groups[inside]), effective(y[~inside], groups[~inside])
    z, p_independent = proportions_ztest([e1[0], e2[0]], [e1[1], e2[1]])
    design = np.column_stack([np.ones(len(y)), inside.astype(float)])
    v_diff = robust_variance(y, design, groups)[1, 1]
    v1 = robust_variance(y[inside], np.ones((inside.sum(), 1)), groups[inside])[0, 0]
    v2 = robust_variance(y[~inside], np.ones(((~inside).sum(), 1)), groups[~inside])[0, 0]
    return float(2 * stats.norm.sf(abs(z) / np.sqrt(v_diff / (v1 + v2)))), float(p_independent)


def shared_series_answers(seed: int) -> list[tuple[int, int, bool]]:
    """40 series, each asked about one date in every quadrant (so in both groups of every
    test), answered alike within a series (its own skill) and better in quadrant 1."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.05, 0.95, 40)
    return [
        (s, q, bool(rng.random() < min(1.0, skill[s] + (0.15 if q == 1 else 0.0))))
        for s in range(40)
        for q in (1, 2, 3, 4)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_series_in_both_groups_is_tested_with_its_covariance(seed):
    answers = shared_series_answers(seed)
    table = position_bias_table(scored(answers)).set_index("quadrant")
    y = np.array([ok for _, _, ok in answers], dtype=float)
    groups = np.array([f"s{s}" for s, _, _ in answers])
    quadrants = np.array([q for _, q, _ in answers])
    for q in (1, 2, 3, 4):
        inside = quadrants == q
        p, p_independent = expected_p(y, inside, groups)
        row = table.loc[q]
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
        # the groups taken as independent give another p (answers alike within a series)
        assert abs(row["p_value"] - p_independent) > 1e-3
        # point estimates unchanged: the shares over prompts
        assert row["accuracy"] == pytest.approx(y[inside].mean())
        assert row["accuracy_elsewhere"] == pytest.approx(y[~inside].mean())


def test_agreeing_answers_across_groups_make_the_comparison_surer():
    """Every series answered alike in all four quadrants except a few right only in
    quadrant 1: a paired comparison, far surer than two independent groups."""
    answers = [(s, q, s < 20 or (q == 1 and s < 26)) for s in range(40) for q in (1, 2, 3, 4)]
    row = position_bias_table(scored(answers)).set_index("quadrant").loc[1]
    y = np.array([ok for _, _, ok in answers], dtype=float)
    groups = np.array([str(s) for s, _, _ in answers])
    inside = np.array([q == 1 for _, q, _ in answers])
    p, p_independent = expected_p(y, inside, groups)
    assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert p_independent > 0.1 and row["p_value"] < 0.01


@pytest.mark.parametrize("formats", [["csv"], ["csv", "plain", "json"]])
def test_series_in_one_group_each_keep_the_plain_test(formats):
    """One prompt per series per cell, each series about one quadrant: the groups were
    independent, and the p-value is the plain pooled z test over the series (statsmodels),
    however many formats ask about each series."""
    rng = np.random.default_rng(9)
    right = rng.random(60) < np.where(np.arange(60) % 4 == 0, 0.8, 0.5)
    answers = [(s, 1 + s % 4, bool(right[s])) for s in range(60)]
    table = pd.concat([scored(answers, fmt) for fmt in formats])
    table = position_bias_table(table).set_index("quadrant")
    for q in (1, 2, 3, 4):
        inside = np.arange(60) % 4 == q - 1
        _, p = proportions_ztest(
            [right[inside].sum(), right[~inside].sum()], [inside.sum(), (~inside).sum()]
        )
        assert table.loc[q, "p_value"] == pytest.approx(p, rel=1e-12)
        assert table.loc[q, "n_prompts"] == inside.sum() * len(formats)


NO_OPTIONS = pd.DataFrame(columns=["prompt_key", "options"])


def detection_rows(series: list[str], feature: str, truth, said) -> list[dict]:
    return [
        {"suite_run_id": "run", "prompt_key": f"{s}-{feature}", "series_key": s,
         "system_id": "a", "dataset": "statistical_properties", "task": "detection",
         "feature": feature, "format": "csv", "decimals": 2,
         "expected": '{"answer": "%s"}' % ("yes" if t else "no"), "quadrant": None,
         "series_length": 40, "parse_ok": True, "parse_error": None,
         "answer": "yes" if p else "no", "answer_value": None, "answer_date": None}
        for s, t, p in zip(series, truth, said, strict=True)
    ]  # fmt: skip


def test_two_cells_asking_alike_about_one_series_correlate_fully():
    """Both detection questions of 30 series with the same truth and the same answers: the
    two cells' F1 are one score, drawn with the same series in every resample."""
    rng = np.random.default_rng(3)
    names = [f"s{i}" for i in range(30)]
    truth = rng.random(30) < 0.5
    said = np.where(rng.random(30) < 0.7, truth, ~truth)
    rows = detection_rows(names, "fat_tails", truth, said)
    rows += detection_rows(names, "stationarity", truth, said)
    table = shared_cell_correlations(score_table(pd.DataFrame(rows)), NO_OPTIONS)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["feature"], row["other_feature"]) == ("fat_tails", "stationarity")
    assert row["correlation"] == pytest.approx(1.0)
    assert row["n_shared_series"] == row["n_series"] == 30


def test_shared_series_correlate_as_their_cluster_robust_covariance_says():
    """Accuracy cells (retrieval) about 60 shared series, answered alike within a series:
    the bootstrap correlation of the two accuracies is statsmodels' cluster-robust one
    (the two shares as the coefficients of their cells' indicators, clustered by series)
    up to the resampling error (200 resamples: about 0.05)."""
    rng = np.random.default_rng(12)
    skill = rng.choice([0.1, 0.9], 60)
    rows = []
    for feature in ("fat_tails", "stationarity"):
        ok = rng.random(60) < skill
        rows += [
            {"suite_run_id": "run", "prompt_key": f"s{s}-{feature}", "series_key": f"s{s}",
             "system_id": "a", "dataset": "statistical_properties", "task": "retrieval",
             "feature": feature, "format": "csv", "decimals": 2,
             "expected": '{"value": 100.0}', "quadrant": None, "series_length": 40,
             "parse_ok": True, "parse_error": None, "answer": None,
             "answer_value": 100.0 if ok[s] else 150.0, "answer_date": None}
            for s in range(60)
        ]  # fmt: skip
    frame = pd.DataFrame(rows)
    row = shared_cell_correlations(score_table(frame), NO_OPTIONS).iloc[0]
    y = (frame["answer_value"] == 100.0).astype(float).to_numpy()
    design = np.column_stack([frame["feature"] == f for f in ("fat_tails", "stationarity")])
    cov = robust_variance(y, design.astype(float), frame["series_key"].to_numpy())
    expected = cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
    assert expected > 0.3  # answers alike within a series: the cells move together
    assert row["correlation"] == pytest.approx(expected, abs=0.12)


def test_cells_with_their_own_series_give_no_pair():
    """Generated feature datasets: every detection cell asks about its own series, so no
    pair correlates and the format table combines the cells as before (independent)."""
    rng = np.random.default_rng(5)
    truth, said = rng.random(20) < 0.5, rng.random(20) < 0.5
    rows = detection_rows([f"t{i}" for i in range(20)], "trend", truth, said)
    rows += detection_rows([f"v{i}" for i in range(20)], "seasonality", truth, said)
    table = shared_cell_correlations(score_table(pd.DataFrame(rows)), NO_OPTIONS)
    assert table.empty and list(table.columns)[-4:] == [
        "n_series", "correlation", "n_resamples", "n_resamples_undefined"
    ]  # fmt: skip
