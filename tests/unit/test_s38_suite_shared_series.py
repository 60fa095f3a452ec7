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
