"""Tests written for the mutation sweep of the user-study code
(tests/planted/sweep_stability_marts.json): the t-tests and Spearman's rho of
``tsrate.methods.user_study`` and the tests it recomputes from a seed.

Every expectation is computed independently of the product: SciPy's t-tests and rank
correlation, or small examples worked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tsrate.methods.user_study import (
    one_sample_t_right,
    one_sample_t_right_from_summary,
    paired_t,
    paired_t_from_summary,
    spearman,
    user_study_tests,
)

# --------------------------------------------------------------------------- user study


def test_t_tests_need_two_values_and_finite_non_negative_summaries():
    """n = 2 is the smallest sample (dof 1); n = 1, a NaN or infinite mean or sd and a
    negative sd are errors, whichever of them is wrong."""
    one = one_sample_t_right_from_summary(3.0, 1.0, 2, 2.0)
    # t = (3 - 2) / (1 / sqrt 2) = sqrt 2, p = P(T_1 >= sqrt 2)
    assert (one.t, one.dof) == (pytest.approx(math.sqrt(2)), 1)
    assert one.p == pytest.approx(sps.t.sf(math.sqrt(2), 1))
    pair = paired_t_from_summary(1.0, 1.0, 2)
    assert (pair.t, pair.dof) == (pytest.approx(math.sqrt(2)), 1)
    assert one_sample_t_right([1.0, 3.0], 1.0).t == pytest.approx(1.0)  # mean 2, sd sqrt 2
    assert paired_t([3.0, 5.0], [2.0, 2.0]).t == pytest.approx(2.0)  # d = [1, 3]: 2 / 1
    for call in (
        lambda: one_sample_t_right_from_summary(3.0, 1.0, 1, 2.0),
        lambda: paired_t_from_summary(1.0, 1.0, 1),
        lambda: one_sample_t_right([1.0], 0.0),
        lambda: paired_t([1.0], [0.0]),
    ):
        with pytest.raises(ValueError, match="n >= 2"):
            call()
    bad = [(math.nan, 1.0), (3.0, math.nan), (math.inf, 1.0), (3.0, math.inf), (3.0, -1.0)]
    for mean, sd in bad:
        with pytest.raises(ValueError, match="finite"):
            one_sample_t_right_from_summary(mean, sd, 10, 2.0)
        with pytest.raises(ValueError, match="finite"):
            paired_t_from_summary(mean, sd, 10)


@pytest.mark.filterwarnings(
    "ignore:Precision loss occurred:RuntimeWarning"
)  # SciPy on near-constant data
def test_t_tests_of_constant_samples_follow_the_documented_convention():
    """sd 0: the mean at the hypothesised value -> t = 0 and every p = 1 (H0 kept); above it
    -> t = +inf, p = 0 (right tail; paired: p_greater 0, p_less 1, two-sided 0); below it
    -> t = -inf (one-sample p = 1; paired: p_less 0, p_greater 1, two-sided 0). The raw-value
    forms agree, also for a constant 0.1 whose float mean is not exactly 0.1."""
    at = one_sample_t_right_from_summary(2.0, 0.0, 5, 2.0)
    assert (at.t, at.p) == (0.0, 1.0)
    above = one_sample_t_right_from_summary(2.5, 0.0, 5, 2.0)
    assert (above.t, above.p) == (math.inf, 0.0)
    below = one_sample_t_right_from_summary(1.5, 0.0, 5, 2.0)
    assert (below.t, below.p) == (-math.inf, 1.0)
    zero = paired_t_from_summary(0.0, 0.0, 5)
    assert (zero.t, zero.p_two_sided, zero.p_less, zero.p_greater) == (0.0, 1.0, 1.0, 1.0)
    up = paired_t_from_summary(0.5, 0.0, 5)  # 0 < mean < 1: still "above 0"
    assert (up.t, up.p_two_sided, up.p_less, up.p_greater) == (math.inf, 0.0, 1.0, 0.0)
    down = paired_t_from_summary(-0.5, 0.0, 5)
    assert (down.t, down.p_two_sided, down.p_less, down.p_greater) == (-math.inf, 0.0, 0.0, 1.0)
    const = one_sample_t_right([0.1] * 3, 0.1)
    assert (const.t, const.p, const.mean) == (0.0, 1.0, 0.1)
    same = paired_t([0.3, 0.4, 1.1], [0.2, 0.3, 1.0])  # d = 0.1 in exact arithmetic only
    d = np.array([0.3, 0.4, 1.1]) - np.array([0.2, 0.3, 1.0])
    assert same.t == pytest.approx(sps.ttest_rel([0.3, 0.4, 1.1], [0.2, 0.3, 1.0]).statistic)
    assert same.sd_diff == pytest.approx(np.std(d, ddof=1))
    flat = paired_t([0.1] * 3, [0.0] * 3)
    assert (flat.t, flat.sd_diff, flat.mean_diff, flat.p_two_sided) == (math.inf, 0.0, 0.1, 0.0)


def test_spearman_needs_three_pairs_and_two_varying_inputs():
    got = spearman([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    # ranks (1, 2, 3) vs (1, 3, 2): rho = 1 - 6 * (0 + 1 + 1) / (3 * 8) = 0.5
    assert (got.rho, got.n) == (pytest.approx(0.5), 3)
    with pytest.raises(ValueError, match="at least 3 pairs"):
        spearman([1.0, 2.0], [2.0, 1.0])
    for a, b in (([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])):
        with pytest.raises(ValueError, match="constant"):
            spearman(a, b)


def user_study_row(test_id: str, kind: str, **values) -> dict:
    base = dict(
        test_id=test_id,
        source_table="Table 4",
        test_kind=kind,
        question="Q8",
        question_after="Q10",
        hypothesis="h",
        n=10,
        mean=3.0,
        sd=1.0,
        mean_after=3.5,
        sd_after=1.0,
        hypothesised_mean=np.nan,
        alpha=0.05,
        reported_t=np.nan,
        reported_p=np.nan,
        reported_rho=np.nan,
    )
    return base | values


def test_user_study_tests_recompute_only_what_the_seed_allows():
    """Hand-made seed rows:
    * P1: paired, printed t 1.0 (its sign is not used), n 10, means 3.0 -> 3.5: mean_diff
      -0.5, sd_diff = 0.5 * sqrt(10) / 1.0 = 1.581, t = -1.0, p = P(T_9 <= -1) = 0.1717,
      two-sided 0.3434, not rejected at 0.05;
    * P2: paired, printed t 0 (no sd can be backed out of it) and P3 without a printed t
      (None), P4 with NaN: not recomputed (no t, no p, rejected null);
    * S1: a Spearman row: not recomputed;
    * O1: one-sample, mean 3.0, sd 1.0, n 10 against 2: t = sqrt(10) = 3.162, p = 0.0058,
      rejected."""
    summary = pd.DataFrame(
        [
            user_study_row("P1", "paired_t", reported_t=1.0),
            user_study_row("P2", "paired_t", reported_t=0.0),
            user_study_row("P3", "paired_t", reported_t=None),
            user_study_row("P4", "paired_t"),
            user_study_row("S1", "spearman", reported_rho=0.4),
            user_study_row("O1", "one_sample_t_right", hypothesised_mean=2.0),
        ]
    )
    out = user_study_tests(summary).set_index("test_id")
    p1 = out.loc["P1"]
    assert p1["mean_diff"] == pytest.approx(-0.5)
    assert p1["sd_diff"] == pytest.approx(0.5 * math.sqrt(10))
    assert p1["t_statistic"] == pytest.approx(-1.0)
    assert p1["p_value"] == pytest.approx(sps.t.cdf(-1.0, 9))
    assert p1["p_two_sided"] == pytest.approx(2 * sps.t.cdf(-1.0, 9))
    assert (p1["dof"], bool(p1["rejected"]), bool(p1["is_recomputed"])) == (9, False, True)
    for test_id in ("P2", "P3", "P4", "S1"):
        row = out.loc[test_id]
        assert not row["is_recomputed"], test_id
        assert pd.isna(row["t_statistic"]) and pd.isna(row["p_value"]), test_id
        assert pd.isna(row["rejected"]), test_id
    o1 = out.loc["O1"]
    assert o1["t_statistic"] == pytest.approx(math.sqrt(10))
    assert o1["p_value"] == pytest.approx(sps.t.sf(math.sqrt(10), 9))
    assert bool(o1["rejected"]) and bool(o1["is_recomputed"])


def test_user_study_rejects_only_below_alpha():
    """A one-sample row whose p equals alpha exactly is not rejected (p < alpha): the mean
    is chosen so that t is the 95 % quantile of T_9, p = 0.05 up to rounding, and alpha is
    set to that very p."""
    t95 = sps.t.ppf(0.95, 9)
    mean = 2.0 + t95 / math.sqrt(10)  # sd 1, n 10
    p = one_sample_t_right_from_summary(mean, 1.0, 10, 2.0).p
    assert p == pytest.approx(0.05, rel=1e-9)
    rows = [
        user_study_row("A", "one_sample_t_right", mean=mean, hypothesised_mean=2.0, alpha=p),
        user_study_row("B", "one_sample_t_right", mean=mean, hypothesised_mean=2.0, alpha=0.06),
    ]
    out = user_study_tests(pd.DataFrame(rows)).set_index("test_id")
    assert not out.loc["A", "rejected"] and out.loc["B", "rejected"]
