"""Unit tests for tsrate.methods.wrs (Student t-test, WRS: Algorithm 1) and the user-study
statistics of tsrate.methods.user_study."""

from __future__ import annotations

import itertools
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
)
from tsrate.methods.wrs import (
    PAIR_COLUMNS,
    WRS_COLUMNS,
    student_t_test,
    weighted_rejection_pairs,
    weighted_rejection_scores,
)

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})

COMPANIES = {
    "META": "Tech",
    "GOOG": "Tech",
    "PFE": "Pharma",
    "MRK": "Pharma",
    "WFC": "Finance",
    "C": "Finance",
}


def make_window_errors(
    offsets: dict[str, float],
    noise: float,
    n_windows: int = 40,
    systems: tuple[str, ...] = ("S1",),
    perturbations: tuple[str, ...] = ("P0", "P1"),
    seed: int = 0,
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2023-03-28", periods=n_windows)
    rows = []
    for system, pert, ticker in itertools.product(systems, perturbations, COMPANIES):
        values = offsets[ticker] + noise * rng.standard_normal(n_windows)
        for date, value in zip(dates, values, strict=True):
            rows.append((system, ticker, COMPANIES[ticker], date, pert, value, 0.1, 1.0, 50.0))
    return pd.DataFrame(
        rows,
        columns=[
            "system_id",
            "ticker",
            "industry",
            "window_end_date",
            "perturbation_id",
            "max_abs_residual",
            "smape",
            "mase",
            "sign_accuracy",
        ],
    )


# --------------------------------------------------------------------------- t-test


@pytest.mark.parametrize("n_a,n_b,shift", [(2, 2, 0.3), (5, 9, 1.0), (40, 25, 0.0), (200, 3, -2)])
def test_student_t_matches_scipy(n_a: int, n_b: int, shift: float) -> None:
    rng = np.random.default_rng(n_a * 100 + n_b)
    a = rng.normal(size=n_a)
    b = rng.normal(loc=shift, scale=2.0, size=n_b)
    res = student_t_test(a, b)
    ref = sps.ttest_ind(a, b, equal_var=True)
    assert res.t == pytest.approx(float(ref.statistic), rel=1e-12, abs=1e-12)
    assert res.p == pytest.approx(float(ref.pvalue), rel=1e-10, abs=1e-15)
    assert res.dof == n_a + n_b - 2
    assert (res.n_a, res.n_b) == (n_a, n_b)
    assert res.mean_a == pytest.approx(a.mean()) and res.mean_b == pytest.approx(b.mean())


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")
def test_student_t_one_constant_group_is_ordinary() -> None:
    a = np.array([1.0, 1.0, 1.0])
    b = np.array([0.5, 1.5, 2.5, 0.0])
    res = student_t_test(a, b)
    ref = sps.ttest_ind(a, b)
    assert res.t == pytest.approx(float(ref.statistic))
    assert res.p == pytest.approx(float(ref.pvalue))


def test_student_t_degenerate_cases() -> None:
    equal = student_t_test([0.1] * 5, [0.1] * 7)  # float residue must not matter
    assert (equal.t, equal.p) == (0.0, 1.0)
    higher = student_t_test([200.0] * 4, [0.0] * 4)
    assert higher.t == math.inf and higher.p == 0.0
    lower = student_t_test([0.0, 0.0], [3.0, 3.0, 3.0])
    assert lower.t == -math.inf and lower.p == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        student_t_test([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2"):
        student_t_test([1.0, 2.0], [])
    with pytest.raises(ValueError, match="NaN"):
        student_t_test([1.0, np.nan, 2.0], [1.0, 2.0])


# --------------------------------------------------------------------------- WRS pairs


def test_pairs_industry_long_format_and_values() -> None:
    offsets = {"META": 10, "GOOG": 10.5, "PFE": 11, "MRK": 10.2, "WFC": 10, "C": 10.1}
    we = make_window_errors(offsets, noise=1.0, systems=("S1", "S2"))
    pairs = weighted_rejection_pairs(we, "industry", LEVELS)
    assert list(pairs.columns) == PAIR_COLUMNS
    # 2 systems x 2 perturbations x C(3,2) pairs x 3 levels
    assert len(pairs) == 2 * 2 * 3 * 3
    assert pairs["within_group"].isna().all()
    assert (pairs["group_a"] < pairs["group_b"]).all()
    # each test equals scipy on the pooled windows of the two industries
    for row in pairs.drop_duplicates(
        ["system_id", "perturbation_id", "group_a", "group_b"]
    ).itertuples():
        sel = we[(we.system_id == row.system_id) & (we.perturbation_id == row.perturbation_id)]
        a = sel.loc[sel.industry == row.group_a, "max_abs_residual"]
        b = sel.loc[sel.industry == row.group_b, "max_abs_residual"]
        ref = sps.ttest_ind(a, b)
        assert row.t_statistic == pytest.approx(float(ref.statistic), rel=1e-9)
        assert row.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)
        assert (row.n_a, row.n_b) == (len(a), len(b)) == (80, 80)
    # rejection rule and contributions
    assert (pairs["rejected"] == (pairs["p_value"] < 1 - pairs["confidence"])).all()
    expected = np.where(pairs["rejected"], pairs["weight"], 0.0)
    np.testing.assert_allclose(pairs["weighted_rejection"], expected)
    crit = sps.t.ppf(1 - (1 - pairs["confidence"]) / 2, pairs["dof"])
    np.testing.assert_allclose(pairs["t_critical"], crit)
    assert (pairs["rejected"] == (pairs["t_statistic"].abs() > pairs["t_critical"])).all()


def test_rejections_are_nested_across_levels() -> None:
    offsets = {"META": 10, "GOOG": 10.4, "PFE": 10.8, "MRK": 10.2, "WFC": 10.6, "C": 10.1}
    we = make_window_errors(offsets, noise=1.0, perturbations=tuple(f"P{i}" for i in range(7)))
    pairs = weighted_rejection_pairs(we, "industry", LEVELS)
    wide = pairs.pivot_table(
        index=["perturbation_id", "group_a", "group_b"], columns="confidence", values="rejected"
    )
    assert (wide[0.95] <= wide[0.75]).all() and (wide[0.75] <= wide[0.60]).all()


def test_company_pairs_only_within_industry() -> None:
    offsets = {"META": 0, "GOOG": 200, "PFE": 300, "MRK": 400, "WFC": 500, "C": 600}
    we = make_window_errors(offsets, noise=1.0)
    pairs = weighted_rejection_pairs(we, "ticker", LEVELS, within_column="industry")
    one = pairs[(pairs.perturbation_id == "P0") & (pairs.confidence == 0.95)]
    got = set(zip(one.within_group, one.group_a, one.group_b, strict=True))
    assert got == {("Tech", "GOOG", "META"), ("Pharma", "MRK", "PFE"), ("Finance", "C", "WFC")}


def test_biased_system_rejects_everything_and_scores_sum() -> None:
    """A Biased-like system (constant residual per company, different per company) rejects
    every pair at every level, so its WRS is n_pairs * sum(weights): 3 x 2.4 = 7.2 with the
    seed's weights 1/0.8/0.6, and 3 x 2.3 = 6.9 -- the paper's Biased WRS in every row of
    Table 5 -- with weights 1/0.7/0.6."""
    offsets = {"META": 0, "GOOG": 200, "PFE": 300, "MRK": 400, "WFC": 500, "C": 600}
    we = make_window_errors(offsets, noise=0.0)
    for group, within in (("industry", None), ("ticker", "industry")):
        pairs = weighted_rejection_pairs(we, group, LEVELS, within_column=within)
        assert pairs["rejected"].all()
        scores = weighted_rejection_scores(pairs)
        assert list(scores.columns) == WRS_COLUMNS
        assert scores["raw_score"].tolist() == pytest.approx([7.2, 7.2])
        assert scores["n_pairs"].tolist() == [3, 3]
        assert scores["max_score"].tolist() == pytest.approx([7.2, 7.2])
    paper_levels = pd.DataFrame({"confidence": [0.95, 0.70, 0.60], "weight": [1.0, 0.7, 0.6]})
    pairs = weighted_rejection_pairs(we, "industry", paper_levels)
    assert weighted_rejection_scores(pairs)["raw_score"].tolist() == pytest.approx([6.9, 6.9])


def test_wrs_is_sum_of_rejected_weights_and_zero_when_nothing_rejected() -> None:
    rng = np.random.default_rng(3)
    offsets = {"META": 10, "GOOG": 10.3, "PFE": 10.9, "MRK": 10.1, "WFC": 10.5, "C": 10.2}
    we = make_window_errors(offsets, noise=1.0, systems=("S1", "S2", "S3"), seed=11)
    # S3: identical outcome everywhere -> no rejection at all
    we.loc[we.system_id == "S3", "max_abs_residual"] = 5.0
    we = we.sample(frac=1.0, random_state=int(rng.integers(1000)))  # row order must not matter
    pairs = weighted_rejection_pairs(we, "industry", LEVELS)
    scores = weighted_rejection_scores(pairs).set_index(["system_id", "perturbation_id"])
    for (system, pert), row in scores.iterrows():
        sel = pairs[(pairs.system_id == system) & (pairs.perturbation_id == pert)]
        manual = sum(w for w, r in zip(sel.weight, sel.rejected, strict=True) if r)
        assert row.raw_score == pytest.approx(manual)
    assert scores.loc[("S3", "P0"), "raw_score"] == 0.0
    assert len(scores) == 6


def test_wide_pairs_accepted_by_scores() -> None:
    wide = pd.DataFrame(
        {
            "system_id": ["S1", "S1", "S2"],
            "perturbation_id": ["P0", "P0", "P0"],
            "weighted_rejections": [2.4, 1.4, 0.0],
        }
    )
    out = weighted_rejection_scores(wide)
    assert out["raw_score"].tolist() == pytest.approx([3.8, 0.0])
    assert out["n_pairs"].tolist() == [2, 1]


def test_paper_wrs_values_are_three_pair_sums_with_weights_1_07_06() -> None:
    """Evidence for the WRS aggregation (see weighted_rejection_scores' docstring).

    Both of the paper's WRS analyses compare 3 pairs. Per pair, rejections are nested, so a
    pair contributes 0, w60, w60+w75 or w60+w75+w95. Summing 3 pairs:
    * weights 1/0.8/0.6 can never give 5.9 or 6.9 (all sums are multiples of 0.2), and a
      mean over pairs could never exceed 2.4;
    * weights 1/0.7/0.6 give every WRS value printed in Table 5 except one 5.6 (WRSC P0, S_c,
      a row that also lists S_r twice with two different scores).
    """
    table5_values = {0.6, 2.6, 4.6, 5.2, 5.9, 6.9}

    def reachable(w95: float, w75: float, w60: float) -> set[float]:
        per_pair = [0.0, w60, w60 + w75, w60 + w75 + w95]
        return {round(sum(c), 6) for c in itertools.product(per_pair, repeat=3)}

    paper = reachable(1.0, 0.7, 0.6)
    assert table5_values <= paper
    assert 5.6 not in paper
    seed = reachable(1.0, 0.8, 0.6)
    assert {5.9, 6.9} & seed == set()
    assert max(seed) == pytest.approx(7.2)


def test_vectorised_pairs_equal_one_test_per_pair() -> None:
    """weighted_rejection_pairs computes every pair's test at once from group summaries; it
    must equal student_t_test on the raw values of each pair (and scipy's t quantile), for
    plain and categorical keys, including constant groups (both degenerate branches)."""
    offsets = {"META": 10, "GOOG": 10.4, "PFE": 11, "MRK": 10.2, "WFC": 10, "C": 10.1}
    we = make_window_errors(offsets, noise=1.0, systems=("S1", "S2"), n_windows=25, seed=5)
    constant = we["system_id"] == "S2"
    we.loc[constant, "max_abs_residual"] = we.loc[constant, "ticker"].map(
        {"META": 1.0, "GOOG": 1.0, "PFE": 2.0, "MRK": 3.0, "WFC": 4.0, "C": 4.0}
    )
    keys = ["system_id", "perturbation_id", "ticker", "industry"]
    categorical = we.astype(dict.fromkeys(keys, "category"))
    for col in keys:  # category order must not matter
        cats = list(categorical[col].cat.categories)[::-1]
        categorical[col] = categorical[col].cat.reorder_categories(cats)
    for group, within in (("industry", None), ("ticker", "industry")):
        pairs = weighted_rejection_pairs(we, group, LEVELS, within_column=within)
        pd.testing.assert_frame_equal(
            pairs, weighted_rejection_pairs(categorical, group, LEVELS, within_column=within)
        )
        first = pairs.drop_duplicates(["system_id", "perturbation_id", "group_a", "group_b"])
        for row in first.itertuples(index=False):
            sel = we[(we.system_id == row.system_id) & (we.perturbation_id == row.perturbation_id)]
            test = student_t_test(
                sel.loc[sel[group] == row.group_a, "max_abs_residual"],
                sel.loc[sel[group] == row.group_b, "max_abs_residual"],
            )
            assert (row.t_statistic, row.p_value, row.dof) == pytest.approx(
                (test.t, test.p, test.dof), rel=1e-12, abs=1e-15
            )
            assert row.group_a < row.group_b
        s2 = pairs[pairs.system_id == "S2"]
        if group == "ticker":  # constant companies: equal (t = 0) or different (t = inf)
            assert set(s2["t_statistic"].abs()) == {0.0, math.inf}
        expected = sps.t.ppf(1 - pairs["alpha"] / 2, pairs["dof"])
        np.testing.assert_array_equal(pairs["t_critical"].to_numpy(), expected)


def test_pairs_nan_and_small_group_handling() -> None:
    offsets = dict.fromkeys(COMPANIES, 1.0)
    we = make_window_errors(offsets, noise=1.0, n_windows=5)
    we.loc[we.index[0], "max_abs_residual"] = np.nan
    with pytest.raises(ValueError, match="dropna"):
        weighted_rejection_pairs(we, "industry", LEVELS)
    pairs = weighted_rejection_pairs(we, "industry", LEVELS, dropna=True)
    first = we.iloc[0]
    row = pairs[
        (pairs.perturbation_id == first.perturbation_id)
        & ((pairs.group_a == first.industry) | (pairs.group_b == first.industry))
    ].iloc[0]
    counts = {row.group_a: row.n_a, row.group_b: row.n_b}
    assert counts[first.industry] == 9
    tiny = we.dropna().groupby(["perturbation_id", "ticker"]).head(1)
    with pytest.raises(ValueError, match=r"groups 'C' vs 'WFC'.*at least 2"):
        weighted_rejection_pairs(tiny, "ticker", LEVELS, within_column="industry")
    with pytest.raises(ValueError, match="lacks columns"):
        weighted_rejection_pairs(we.drop(columns="industry"), "industry", LEVELS)
    with pytest.raises(ValueError, match="between 0 and 1"):
        weighted_rejection_pairs(
            we.dropna(), "industry", pd.DataFrame({"confidence": [95], "weight": [1]})
        )


# --------------------------------------------------------------------------- user study

TABLE3 = {
    # question: (mean, sd, t, right-tailed p) -- paper Table 3, n = 26, H0 mean <= 2
    "Q1": (3.1923, 1.2335, 4.9287, 0.0000),
    "Q2": (2.8077, 1.3570, 3.0349, 0.0028),
    "Q4": (2.5385, 1.3336, 2.0588, 0.0250),
    "Q5": (2.7692, 1.1767, 3.3333, 0.0013),
    "Q6": (2.9231, 1.3834, 3.4023, 0.0011),
    "Q8": (2.6923, 1.0870, 3.2476, 0.0017),
    "Q9": (2.9231, 1.2625, 3.7282, 0.0005),
    "Q10": (3.2308, 1.4507, 4.3259, 0.0001),
    "Q12": (2.6538, 1.1981, 2.7828, 0.0051),
    "Q13": (2.8077, 1.3570, 3.0349, 0.0028),
    "Q14": (3.0769, 1.4676, 3.7417, 0.0005),
}


@pytest.mark.parametrize("question", sorted(TABLE3))
def test_table3_reproduced_from_summary(question: str) -> None:
    """Table 3 is reproducible: t = (mean - 2) / (sd / sqrt(26)) with the sample sd, dof 25.
    The printed mean and sd are rounded to 4 decimals, so t agrees to ~3e-4; the p-values
    agree to the 4 printed decimals."""
    mean, sd, t_paper, p_paper = TABLE3[question]
    res = one_sample_t_right_from_summary(mean, sd, 26, 2.0)
    assert res.dof == 25
    assert res.t == pytest.approx(t_paper, abs=5e-4)
    assert round(res.p, 4) == pytest.approx(p_paper, abs=1e-12)


def test_one_sample_right_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(1, 6, size=26).astype(float)
    res = one_sample_t_right(x, 2.0)
    ref = sps.ttest_1samp(x, 2.0, alternative="greater")
    assert res.t == pytest.approx(float(ref.statistic), rel=1e-12)
    assert res.p == pytest.approx(float(ref.pvalue), rel=1e-10)
    assert (res.n, res.dof) == (26, 25)
    assert res.sd == pytest.approx(np.std(x, ddof=1))
    const = one_sample_t_right([3.0, 3.0, 3.0], 2.0)
    assert const.t == math.inf and const.p == 0.0
    with pytest.raises(ValueError):
        one_sample_t_right([1.0], 2.0)


def test_paired_matches_scipy() -> None:
    rng = np.random.default_rng(6)
    before = rng.integers(1, 6, size=26).astype(float)
    after = np.clip(before + rng.integers(-1, 3, size=26), 1, 5).astype(float)
    res = paired_t(before, after)
    for alternative, p in (
        ("two-sided", res.p_two_sided),
        ("less", res.p_less),
        ("greater", res.p_greater),
    ):
        ref = sps.ttest_rel(before, after, alternative=alternative)
        assert res.t == pytest.approx(float(ref.statistic), rel=1e-12)
        assert p == pytest.approx(float(ref.pvalue), rel=1e-10)
    assert res.dof == 25
    with pytest.raises(ValueError, match="same length"):
        paired_t([1.0, 2.0], [1.0, 2.0, 3.0])
    zero = paired_t([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (zero.t, zero.p_two_sided, zero.p_less, zero.p_greater) == (0.0, 1.0, 1.0, 1.0)


def test_paired_from_summary_table4() -> None:
    """Table 4 / section 5.4 give only t and p for the paired tests (the sd of the paired
    differences is not printed), so t itself cannot be recomputed. Taking the printed t
    (n = 26, dof 25; the paper writes "t(26)") the one-sided p (alternative: before < after)
    reproduces 0.12 (fairness, Q4 vs Q6) and 0.059 (P2, Q12 vs Q14), but NOT 0.030 for P1
    (Q8 vs Q10): t = -1.89 gives p = 0.035 (0.0346..0.0357 for any t rounding to -1.89);
    0.030 is not reproducible.
    """
    cases = {
        "fairness": (2.5385 - 2.9231, -1.18, 0.12, 2),
        "P2": (2.6538 - 3.0769, -1.62, 0.059, 3),
    }
    for mean_diff, t, p_paper, digits in cases.values():
        sd_diff = mean_diff * math.sqrt(26) / t
        res = paired_t_from_summary(mean_diff, sd_diff, 26)
        assert res.t == pytest.approx(t)
        assert round(res.p_less, digits) == pytest.approx(p_paper)
        assert res.p_two_sided == pytest.approx(2 * res.p_less)
    p1_mean = 2.6923 - 3.2308
    res = paired_t_from_summary(p1_mean, p1_mean * math.sqrt(26) / -1.89, 26)
    assert res.p_less == pytest.approx(0.0352, abs=5e-4)
    assert round(res.p_less, 3) != 0.030


def test_spearman_matches_scipy() -> None:
    a = [1, 2, 3, 4, 5, 6]
    b = [2, 1, 4, 3, 6, 5]
    res = spearman(a, b)
    ref = sps.spearmanr(a, b)
    assert res.rho == pytest.approx(float(ref.statistic))
    assert res.p == pytest.approx(float(ref.pvalue))
    assert res.n == 6
    ties = spearman([1, 1, 2, 3], [4, 3, 2, 2])
    assert ties.rho == pytest.approx(float(sps.spearmanr([1, 1, 2, 3], [4, 3, 2, 2]).statistic))
    with pytest.raises(ValueError, match="constant"):
        spearman([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2, 3], [1, 2])


def test_wrs_scores_do_not_depend_on_summation_order() -> None:
    # (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1 in floating point; the scores must still tie
    rows = [
        dict(system_id=system, perturbation_id="P0", confidence=weight, weight=weight,
             weighted_rejection=weight)
        for system, weights in [("s0", (0.1, 0.2, 0.3)), ("s1", (0.3, 0.2, 0.1))]
        for weight in weights
    ]  # fmt: skip
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    scores = weighted_rejection_scores(pd.DataFrame(rows)).set_index("system_id")["raw_score"]
    assert scores["s0"] == scores["s1"]


def test_user_study_tests_recompute_against_scipy() -> None:
    """tsrate.methods.user_study (the user_study_tests mart): one-sample right-tailed t from the
    seed's summaries equals scipy's t distribution; the paired test reproduces its t."""
    from tsrate.config import project_dir
    from tsrate.methods.user_study import user_study_tests

    summary = pd.read_csv(project_dir() / "seeds" / "user_study_summary.csv")
    out = user_study_tests(summary).set_index("test_id")
    one = summary[summary.test_kind == "one_sample_t_right"].iloc[0]
    t = (one["mean"] - one["hypothesised_mean"]) / (one["sd"] / math.sqrt(one["n"]))
    row = out.loc[one["test_id"]]
    assert row["t_statistic"] == pytest.approx(t, rel=1e-12)
    assert row["p_value"] == pytest.approx(sps.t.sf(t, one["n"] - 1), rel=1e-9)
    assert bool(row["rejected"]) == (sps.t.sf(t, one["n"] - 1) < one["alpha"])
    paired = summary[(summary.test_kind == "paired_t") & (summary.reported_t.fillna(0) != 0)]
    for test in paired.to_dict("records"):
        assert out.loc[test["test_id"], "t_statistic"] == pytest.approx(
            math.copysign(abs(test["reported_t"]), test["mean"] - test["mean_after"]), rel=1e-9
        )


def test_the_t_distribution_functions_equal_scipy_stats_everywhere():
    """tsrate.methods.wrs computes t tails and quantiles with scipy.special (scipy.stats' import
    is paid by every dbt build): the values must be scipy.stats.t's, bit for bit, edges
    included (infinite and missing arguments, invalid degrees of freedom, q = 0 and 1)."""
    import itertools

    from scipy import stats as scipy_stats

    from tsrate.methods.wrs import t_cdf as _t_cdf
    from tsrate.methods.wrs import t_ppf as _t_ppf
    from tsrate.methods.wrs import t_sf as _t_sf

    def same(a, b):
        return (np.isnan(a) and np.isnan(b)) or a == b

    dofs = [0, -1, np.nan, np.inf, 0.5, 1, 2, 3, 7.5, 29, 30, 31, 120, 1e9]
    xs = [-np.inf, -40.0, -3.0, -1e-9, 0.0, 0.7, 2.5, 12.0, np.inf, np.nan]
    qs = [0.0, 1e-12, 0.025, 0.3, 0.5, 0.9, 0.975, 0.995, 1.0, np.nan, -0.1, 1.1]
    for dof, x in itertools.product(dofs, xs):
        assert same(float(_t_sf(x, dof)), float(scipy_stats.t.sf(x, dof))), (dof, x)
        assert same(float(_t_cdf(x, dof)), float(scipy_stats.t.cdf(x, dof))), (dof, x)
    for dof, q in itertools.product(dofs, qs):
        assert same(float(_t_ppf(q, dof)), float(scipy_stats.t.ppf(q, dof))), (dof, q)
    grid = np.linspace(-8, 8, 401)
    assert np.array_equal(_t_sf(grid, 13), scipy_stats.t.sf(grid, 13))
    levels = np.array([0.9, 0.95, 0.99])
    dof_grid = np.arange(1, 300)[:, None]
    assert np.array_equal(
        _t_ppf(1 - (1 - levels[None, :]) / 2, dof_grid),
        scipy_stats.t.ppf(1 - (1 - levels[None, :]) / 2, dof_grid),
    )
