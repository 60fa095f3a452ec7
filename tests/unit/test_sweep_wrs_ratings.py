"""Tests written for what the mutation sweep of tsrate.methods.wrs, tsrate.methods.noise and
tsrate.methods.ratings let through (tests/planted/sweep_wrs_ratings.json).

Every expected value is computed independently of the product: SciPy's Student t-test, the
floating-noise rule and the rating rule written out from their definitions, or small
examples worked by hand (the derivation in a comment).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tsrate.methods.noise import snap_rows_to_zero, snap_to_zero
from tsrate.methods.ratings import (
    absolute_rating,
    assign_ratings,
    block_bootstrap_ratings,
    bootstrap_summary,
    date_multiplicities,
    moving_block_indices,
    partial_order,
    rate_matrix,
    ratings_frame,
    separability,
)
from tsrate.methods.wrs import (
    WRS_TABLE_COLUMNS,
    student_t_test,
    student_t_test_from_summary,
    validate_confidence_levels,
    weighted_rejection_pairs,
    weighted_rejection_scores,
    wrs_pair_table,
    wrs_table,
)

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})

# --------------------------------------------------------------------------- floating noise


def test_snap_to_zero_scale_is_the_largest_finite_value_even_beside_nan() -> None:
    # scale = 1000 (the NaN is ignored), bound = 1e-12 * 1000 = 1e-9: 5e-11 -> 0, 5e-9 kept
    out = snap_to_zero([np.nan, 1e3, 5e-11, 5e-9])
    assert np.isnan(out[0])
    assert out[1:].tolist() == [1e3, 0.0, 5e-9]


def test_a_value_exactly_at_the_noise_bound_is_zero() -> None:
    # |x| <= NOISE * max(1, scale): with scale 0.5 the bound is exactly 1e-12, inclusive
    assert snap_to_zero([1e-12, 0.5]).tolist() == [0.0, 0.5]
    assert snap_to_zero([-1e-12, 0.5]).tolist() == [0.0, 0.5]
    assert snap_rows_to_zero(np.array([[1e-12, 0.5]])).tolist() == [[0.0, 0.5]]


def test_snap_rows_uses_each_rows_scale_floored_at_one() -> None:
    values = np.array(
        [
            [1.5e-12, 0.25],  # bound 1e-12 * max(1, 0.25) = 1e-12: kept
            [3e-12, 2.0],  # bound 2e-12: kept
            [3e-12, 4.0],  # bound 4e-12: snapped
            [np.nan, 1e-13],  # bound 1e-12 (NaN ignored): snapped
        ]
    )
    out = snap_rows_to_zero(values)
    assert out[:3].tolist() == [[1.5e-12, 0.25], [3e-12, 2.0], [0.0, 4.0]]
    assert np.isnan(out[3, 0]) and out[3, 1] == 0.0


def test_snap_rows_of_a_single_value_and_leaves_its_input_alone() -> None:
    assert snap_rows_to_zero(np.array([[1e-13]])).tolist() == [[0.0]]
    values = np.array([[1e-13, 1.0]])
    assert snap_rows_to_zero(values).tolist() == [[0.0, 1.0]]
    assert values.tolist() == [[1e-13, 1.0]]  # a pure function: the caller's array unchanged
    assert snap_rows_to_zero(np.zeros((0, 3))).shape == (0, 3)


# --------------------------------------------------------------------------- Student t-test


@pytest.mark.parametrize(("n_a", "n_b"), [(1, 5), (5, 1), (1, 1)], ids=["first", "second", "both"])
def test_a_group_of_one_value_is_refused(n_a: int, n_b: int) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        student_t_test_from_summary(n_a, 1.0, 1.0, n_b, 2.0, 1.0)
    with pytest.raises(ValueError, match="at least 2"):
        student_t_test(np.arange(n_a, dtype=float), np.arange(n_b, dtype=float) + 0.5)


def test_two_values_per_group_are_enough() -> None:
    a, b = [1.0, 2.0], [4.0, 7.0]
    ref = sps.ttest_ind(a, b, equal_var=True)
    got = student_t_test(a, b)
    assert got.t == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p == pytest.approx(ref.pvalue, rel=1e-12)
    assert got.dof == 2
    got = student_t_test_from_summary(2, 1.5, 0.5, 2, 5.5, 4.5)
    assert got.t == pytest.approx(ref.statistic, rel=1e-12)


@pytest.mark.parametrize("swap", [False, True])
def test_a_group_with_sample_variance_one_keeps_its_mean(swap: bool) -> None:
    # [1, 2, 3]: mean 2, sample variance exactly 1 -- an ordinary group, not a constant one
    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 7.0, 8.0]
    if swap:
        a, b = b, a
    ref = sps.ttest_ind(a, b, equal_var=True)
    got = student_t_test(a, b)
    assert (got.mean_a, got.mean_b) == (np.mean(a), np.mean(b))
    assert got.t == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("swap", [False, True])
def test_constant_groups_are_recognised_exactly_despite_rounding(swap: bool) -> None:
    # np.mean([0.1] * 3) is 0.10000000000000002 and np.var(ddof=1) 2.9e-34: a group read as
    # "not constant" would give t != 0. Two constant groups with the same value: t = 0, p = 1.
    a, b = [0.1] * 3, [0.1] * 2
    if swap:
        a, b = b, a
    got = student_t_test(a, b)
    assert (got.t, got.p) == (0.0, 1.0)
    assert (got.mean_a, got.mean_b) == (0.1, 0.1)


# --------------------------------------------------------------------------- confidence levels


@pytest.mark.parametrize(
    ("confidence", "weight", "message"),
    [
        ([0.95, 0.0], [1.0, 0.5], "between 0 and 1"),
        ([0.95, 1.0], [1.0, 0.5], "between 0 and 1"),
        ([0.95, 1.5], [1.0, 0.5], "between 0 and 1"),
        ([0.95, 0.75], [1.0, np.nan], "finite"),
        ([0.95, 0.75], [1.0, np.inf], "finite"),
        ([0.95, 0.75, 0.95], [1.0, 0.8, 0.6], "distinct"),
    ],
)
def test_bad_confidence_levels_are_refused(confidence, weight, message) -> None:  # noqa: ANN001
    levels = pd.DataFrame({"confidence": confidence, "weight": weight})
    with pytest.raises(ValueError, match=message):
        validate_confidence_levels(levels)


def test_confidence_levels_come_back_highest_first_with_only_their_columns() -> None:
    seed = pd.DataFrame(
        {"confidence": [0.60, 0.95, 0.75], "weight": [0.6, 1.0, 0.8], "note": ["a", "b", "c"]}
    )
    expected = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})
    pd.testing.assert_frame_equal(validate_confidence_levels(seed), expected)


# --------------------------------------------------------------------------- WRS pairs


def _frame(
    groups: dict[object, list[float]], within: dict[object, str] | None = None
) -> pd.DataFrame:
    rows = []
    for group, values in groups.items():
        for value in values:
            row = {"system_id": "s", "perturbation_id": "P0", "g": group, "y": value}
            if within is not None:
                row["w"] = within[group]
            rows.append(row)
    return pd.DataFrame(rows)


def test_rows_come_per_pair_with_the_levels_highest_first_whatever_the_seed_order() -> None:
    groups = {"A": [1.0, 2.0, 4.0], "B": [3.0, 5.0, 6.0, 9.0]}
    shuffled = LEVELS.iloc[[2, 0, 1]].reset_index(drop=True)
    pairs = weighted_rejection_pairs(_frame(groups), "g", shuffled, outcome="y")
    assert pairs["confidence"].tolist() == [0.95, 0.75, 0.60]
    assert pairs["weight"].tolist() == [1.0, 0.8, 0.6]


def test_a_missing_group_value_is_refused() -> None:
    # windows without an industry are no group of Algorithm 1: refused, not paired as one
    groups = {"A": [1.0, 2.0, 4.0], "B": [3.0, 5.0, 6.0], None: [2.0, 9.0, 7.0]}
    with pytest.raises(ValueError, match="3 rows have a null 'g'"):
        weighted_rejection_pairs(_frame(groups), "g", LEVELS.iloc[[0]], outcome="y")


def test_a_ticker_under_two_industries_is_refused() -> None:
    groups = {"T1": [1.0, 2.0], "T2": [3.0, 4.0], "T3": [5.0, 6.0]}
    frame = _frame(groups, {"T1": "Bank", "T2": "Bank", "T3": "Tech"})
    frame.loc[frame.index[-1], "w"] = "Bank"  # T3 is now under Tech and Bank
    with pytest.raises(ValueError, match="more than one"):
        weighted_rejection_pairs(frame, "g", LEVELS, within_column="w", outcome="y")


@pytest.mark.parametrize("small", ["A", "C"], ids=["first-in-every-pair", "second-in-every-pair"])
def test_a_pair_with_one_window_on_either_side_is_refused(small: str) -> None:
    # A sorts first, so it is group a of each of its pairs; C sorts last, so it is group b.
    # One of the three pairs (B's with the other) is well formed: one bad pair is enough.
    groups = {"A": [1.0, 2.0, 4.0], "B": [3.0, 5.0, 6.0], "C": [2.0, 8.0]}
    groups[small] = groups[small][:1]
    with pytest.raises(ValueError, match="at least 2"):
        weighted_rejection_pairs(_frame(groups), "g", LEVELS, outcome="y")


def test_pairs_of_two_windows_each_are_tested() -> None:
    groups = {"A": [1.0, 2.0], "B": [4.0, 7.0]}
    pairs = weighted_rejection_pairs(_frame(groups), "g", LEVELS, outcome="y")
    ref = sps.ttest_ind(groups["A"], groups["B"], equal_var=True)
    np.testing.assert_allclose(pairs["t_statistic"], ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(pairs["p_value"], ref.pvalue, rtol=1e-12)
    assert pairs["dof"].tolist() == [2, 2, 2]


def test_one_group_has_no_pair_to_compare() -> None:
    pairs = weighted_rejection_pairs(_frame({"A": [1.0, 2.0, 4.0]}), "g", LEVELS, outcome="y")
    assert pairs.empty


def test_default_within_group_is_none_not_a_string_na() -> None:
    groups = {"A": [1.0, 2.0, 4.0], "B": [3.0, 5.0, 6.0]}
    pairs = weighted_rejection_pairs(_frame(groups), "g", LEVELS, outcome="y")
    # without within_column the column holds Python None (string_columns=True gives <NA>)
    assert pairs["within_group"].dtype == object
    assert all(value is None for value in pairs["within_group"])


def test_a_p_value_exactly_at_alpha_is_not_rejected() -> None:
    # the rule is p < 1 - confidence, strictly: a level whose alpha IS the pair's p-value
    # (p >= 0.5, so 1 - (1 - p) == p exactly) does not reject
    groups = {"A": [1.0, 2.0, 4.0], "B": [1.5, 2.5, 3.5]}
    p = sps.ttest_ind(groups["A"], groups["B"], equal_var=True).pvalue
    assert 0.5 <= p < 1
    first = weighted_rejection_pairs(_frame(groups), "g", LEVELS, outcome="y")
    p_product = float(first["p_value"].iloc[0])
    assert p_product == pytest.approx(p, rel=1e-12)
    level = pd.DataFrame({"confidence": [1.0 - p_product], "weight": [1.0]})
    assert 1.0 - level["confidence"].iloc[0] == p_product
    at = weighted_rejection_pairs(_frame(groups), "g", level, outcome="y")
    assert at["rejected"].tolist() == [False]
    assert at["weighted_rejection"].tolist() == [0.0]


# --------------------------------------------------------------------------- WRS scores


def _long(rows: list[tuple[str, str, float, float, bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(s, pert, conf, w, w if rej else 0.0) for s, pert, conf, w, rej in rows],
        columns=["system_id", "perturbation_id", "confidence", "weight", "weighted_rejection"],
    )


def test_scores_are_listed_by_system_and_perturbation_whatever_the_input_order() -> None:
    # system b's rows come first; b/P1: one pair rejected at 0.95 and 0.75 -> 1.0 + 0.8;
    # a/P0: two pairs, one rejected at 0.75 only -> 0.8; max = 2 pairs x (1.0 + 0.8) = 3.6
    long = _long(
        [
            ("b", "P1", 0.95, 1.0, True),
            ("b", "P1", 0.75, 0.8, True),
            ("a", "P0", 0.95, 1.0, False),
            ("a", "P0", 0.75, 0.8, True),
            ("a", "P0", 0.95, 1.0, False),
            ("a", "P0", 0.75, 0.8, False),
        ]
    )
    out = weighted_rejection_scores(long)
    assert out["system_id"].tolist() == ["a", "b"]
    assert out["raw_score"].tolist() == [0.8, 1.8]
    assert out["n_pairs"].tolist() == [2, 1]
    assert out["max_score"].tolist() == [3.6, 1.8]
    wide = pd.DataFrame(
        {"system_id": ["b", "a", "a"], "perturbation_id": ["P1", "P0", "P0"]}
    ).assign(weighted_rejections=[1.8, 0.8, 0.0])
    out = weighted_rejection_scores(wide)
    assert out["system_id"].tolist() == ["a", "b"]
    assert out["raw_score"].tolist() == [0.8, 1.8]
    assert out["n_pairs"].tolist() == [2, 1]


def test_scores_keep_ten_decimals_of_the_weights() -> None:
    # rounding removes summation residue only: 10 decimals of a 13-decimal weight remain
    weight = 0.1234567891234
    out = weighted_rejection_scores(_long([("a", "P0", 0.95, weight, True)]))
    assert out["raw_score"].iloc[0] == 0.1234567891


# --------------------------------------------------------------------------- the wrs marts


def _run_errors() -> pd.DataFrame:
    """Two runs (r2 listed first), one system, one perturbation, two industries x two
    tickers x four windows; every ticker has its own level so some pairs reject."""
    rng = np.random.default_rng(11)
    level = {"T1": 0.0, "T2": 0.4, "T3": 1.5, "T4": 1.6}
    industry = {"T1": "Bank", "T2": "Bank", "T3": "Tech", "T4": "Tech"}
    rows = []
    for run, shift in (("r2", 0.7), ("r1", 0.0)):
        for ticker, base in level.items():
            for k, noise in enumerate(rng.normal(0.0, 0.3, 4)):
                rows.append((run, "s", "P0", ticker, industry[ticker], k, base + shift * k + noise))
    return pd.DataFrame(
        rows,
        columns=["run_id", "system_id", "perturbation_id", "ticker", "industry", "k", "y"],
    )


def _scipy_wrs(values: pd.DataFrame, group: str, within: str | None) -> tuple[float, int]:
    """WRS = sum over pairs (inside each `within` value) and levels of weight * (p < 1 - c)."""
    blocks = [values] if within is None else [b for _, b in values.groupby(within)]
    score, n_pairs = 0.0, 0
    for block in blocks:
        names = sorted(block[group].unique())
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                p = sps.ttest_ind(
                    block.loc[block[group] == a, "y"], block.loc[block[group] == b, "y"]
                ).pvalue
                score += sum(w for c, w in LEVELS.itertuples(index=False) if p < 1 - c)
                n_pairs += 1
    return score, n_pairs


def test_wrs_table_scores_every_run_and_analysis_against_scipy() -> None:
    errors = _run_errors()
    pairs = wrs_pair_table(errors, LEVELS, ["y"])
    # the pair table is stacked run by run in run order (r2 came first in the input)
    runs = pairs["run_id"].tolist()
    assert runs == sorted(runs) and runs[0] == "r1"
    out = wrs_table(pairs)
    assert list(out.columns) == WRS_TABLE_COLUMNS
    assert isinstance(out.index, pd.RangeIndex) and out.index.tolist() == [0, 1, 2, 3]
    assert out[["run_id", "analysis"]].values.tolist() == [
        ["r1", "company"],
        ["r1", "industry"],
        ["r2", "company"],
        ["r2", "industry"],
    ]
    assert out["metric"].tolist() == ["wrs_company", "wrs_industry"] * 2
    assert set(out["outcome"]) == {"y"} and set(out["system_id"]) == {"s"}
    raw = []
    for run, analysis in out[["run_id", "analysis"]].itertuples(index=False):
        values = errors[errors["run_id"] == run]
        if analysis == "company":
            score, n_pairs = _scipy_wrs(values, "ticker", "industry")
        else:
            score, n_pairs = _scipy_wrs(values, "industry", None)
        raw.append((score, n_pairs, n_pairs * 2.4))
    np.testing.assert_allclose(out["raw_score"], [r[0] for r in raw], atol=1e-9)
    assert out["n_pairs"].tolist() == [r[1] for r in raw]
    np.testing.assert_allclose(out["max_score"], [r[2] for r in raw], atol=1e-9)
    # the example separates the runs and the analyses (else the check above proves little)
    assert len({round(r[0], 6) for r in raw}) >= 3


def test_wrs_table_of_no_pairs_is_empty_with_its_columns() -> None:
    empty = wrs_table(wrs_pair_table(_run_errors().iloc[:0], LEVELS, ["y"]))
    assert empty.empty and list(empty.columns) == WRS_TABLE_COLUMNS


# --------------------------------------------------------------------------- ratings: levels


@pytest.mark.parametrize("levels", [2.5, True, 0])
def test_levels_must_be_a_positive_integer(levels) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="levels must be an integer"):
        assign_ratings({"a": 1.0, "b": 2.0}, levels)


# --------------------------------------------------------------------------- absolute rating

# (value, ideal, worst, expected level on L = 3, lower is better). The rule: at the ideal
# (|value - ideal| <= 1e-12 * max(1, |ideal|)) -> 1; else with a finite worst value other
# than the ideal: ceil(3 * |value - ideal| / |worst - ideal|) clipped to 1..3; else None.
ABSOLUTE_CASES = [
    (1e-12, 0.0, None, 1),  # exactly at the noise bound: the ideal
    (1.5e-12, 0.0, None, None),  # above the bound (1e-12 * max(1, 0)), no scale
    (100.0 + 5e-11, 100.0, None, 1),  # bound 1e-12 * 100 = 1e-10: the ideal
    (100.0 + 5e-9, 100.0, None, None),
    (0.5, 1.0, 1.0, None),  # worst == ideal: no scale
    (0.5, 0.0, np.inf, None),  # an infinite worst value is no scale either
    (2.0, 1.0, 3.0, 2),  # |2 - 1| / |3 - 1| = 0.5 -> ceil(1.5) = 2
    (1.0, 0.0, 3.0, 1),  # 3 * 1 / 3 = 1 exactly: slice 1 (its upper end)
    (1.0 + 1.5e-9, 0.0, 3.0, 2),  # 1 + 1.5e-9: just past the end of slice 1 -> ceil = 2
    (1e-11, 0.0, 1.0, 1),  # above the noise, far below the first slice's end: 1, never 0
    (7.0, 0.0, 3.0, 3),  # beyond the worst value: clipped to 3
]


@pytest.mark.parametrize(("value", "ideal", "worst", "expected"), ABSOLUTE_CASES)
def test_absolute_rating_by_hand(value, ideal, worst, expected) -> None:  # noqa: ANN001
    assert absolute_rating(value, 3, ideal, worst) == expected
    mirrored = None if expected is None else 4 - expected
    assert absolute_rating(value, 3, ideal, worst, higher_is_better=True) == mirrored
    # a lone system, and three tied systems, are rated the same way
    assert assign_ratings({"a": value}, 3, ideal=ideal, maximum=worst) == {"a": expected}
    tied = assign_ratings(dict.fromkeys("abc", value), 3, ideal=ideal, maximum=worst)
    assert tied == dict.fromkeys("abc", expected)


@pytest.mark.parametrize(("value", "ideal", "worst", "expected"), ABSOLUTE_CASES)
def test_rate_matrix_rates_a_lone_value_by_hand(value, ideal, worst, expected) -> None:  # noqa: ANN001
    # the lone value sits in the last column, a NaN (left out) in the first: the known worst
    # values are per column, so they must follow the values when they are sorted
    row = np.array([[np.nan, value]])
    maximum = np.array([1e6, np.nan if worst is None else worst])
    got = rate_matrix(row, 3, ideal=ideal, maximum=maximum)
    assert got.tolist() == [[0, 0 if expected is None else expected]]
    # higher is better: the mirrored level 4 - expected; not rated stays 0
    got = rate_matrix(row, 3, ideal=ideal, maximum=maximum, higher_is_better=True)
    assert got.tolist() == [[0, 0 if expected is None else 4 - expected]]


# --------------------------------------------------------------------------- ranks and reasons


def test_separability_names_the_closest_inseparable_system() -> None:
    # a = 0 +- 1: b (0.1 away) and c (0.3 away) are both inside the spread; b is the closest
    flags, reasons = separability(["c", "a", "b"], [0.3, 0.0, 0.1], [1.0, 1.0, 1.0])
    assert flags == [False, False, False]
    assert reasons[1] == (
        "not separable from b: the scores differ by 0.1, less than their spread 1"
    )
    assert reasons[0].startswith("not separable from b: the scores differ by 0.2,")


def test_partial_order_lists_ties_in_system_order() -> None:
    assert partial_order({"c": 2.0, "b": 1.0, "a": 1.0}) == [
        ("a", 1.0, 1),
        ("b", 1.0, 1),
        ("c", 2.0, 3),
    ]


def _scores(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(
        rows, columns=["metric", "perturbation_id", "system_id", "raw_score", "max_score"]
    )


def test_ratings_frame_refuses_one_duplicate_among_many() -> None:
    scores = _scores(
        [("wrs", "P0", "a", 1.0, 7.2), ("wrs", "P0", "b", 2.0, 7.2), ("wrs", "P0", "a", 1.0, 7.2)]
    )
    with pytest.raises(ValueError, match="one row per"):
        ratings_frame(scores, 3, {"wrs": False})


def test_ratings_frame_is_sorted_by_metric_and_perturbation() -> None:
    scores = _scores(
        [
            ("wrs", "P1", "a", 1.0, 7.2),
            ("wrs", "P1", "b", 2.0, 7.2),
            ("ape", "P0", "a", 3.0, np.nan),
            ("ape", "P0", "b", 0.5, np.nan),
            ("wrs", "P0", "a", 1.0, 7.2),
            ("wrs", "P0", "b", 0.2, 7.2),
        ]
    )
    out = ratings_frame(scores, 3, {"wrs": False, "ape": False})
    assert out[["metric", "perturbation_id", "system_id"]].values.tolist() == [
        ["ape", "P0", "b"],
        ["ape", "P0", "a"],
        ["wrs", "P0", "b"],
        ["wrs", "P0", "a"],
        ["wrs", "P1", "a"],
        ["wrs", "P1", "b"],
    ]
    # two distinct scores on 3 levels: ratings 1 and 2
    assert out["rating"].tolist() == [1, 2, 1, 2, 1, 2]


def test_tied_systems_are_rated_against_the_largest_known_worst_value() -> None:
    # all tied at 2.4; the worst values known are 6.0, 7.2 and NaN: the scale is [0, 7.2],
    # ceil(3 * 2.4 / 7.2) = 1 (on [0, 6.0] it would be ceil(1.2) = 2)
    scores = _scores(
        [
            ("wrs", "P0", "a", 2.4, 6.0),
            ("wrs", "P0", "b", 2.4, 7.2),
            ("wrs", "P0", "c", 2.4, np.nan),
        ]
    )
    out = ratings_frame(scores, 3, {"wrs": False}, ideal={"wrs": 0.0}, maximum_column="max_score")
    assert out["rating"].tolist() == [1, 1, 1]
    # the NaN row first: the largest KNOWN worst value is still 7.2
    out = ratings_frame(
        scores.iloc[::-1].reset_index(drop=True),
        3,
        {"wrs": False},
        ideal={"wrs": 0.0},
        maximum_column="max_score",
    )
    assert out["rating"].tolist() == [1, 1, 1]
    # with 6.0 alone known: 2
    only = scores.assign(max_score=[6.0, np.nan, np.nan])
    out = ratings_frame(only, 3, {"wrs": False}, ideal={"wrs": 0.0}, maximum_column="max_score")
    assert out["rating"].tolist() == [2, 2, 2]


# --------------------------------------------------------------------------- the block bootstrap


def _reference_multiplicities(n: int, length: int, resamples: int, seed: int) -> np.ndarray:
    """Counts of each date per resample, from the definition of the circular block
    bootstrap: ceil(n / length) blocks of dates consecutive on the circle of n dates
    (positions modulo n) whose starts are uniform on 0 .. n - 1, drawn as one
    (resamples x blocks) integer matrix from numpy's default generator, cut to n dates."""
    starts = np.random.default_rng(seed).integers(0, n, size=(resamples, math.ceil(n / length)))
    counts = np.zeros((resamples, n))
    for r in range(resamples):
        drawn = [(start + k) % n for start in starts[r] for k in range(length)][:n]
        for date in drawn:
            counts[r, date] += 1
    return counts


@pytest.mark.parametrize(("n", "length"), [(7, 3), (5, 5), (4, 1), (1, 1)])
def test_date_multiplicities_count_each_drawn_date_once(n: int, length: int) -> None:
    got = date_multiplicities(n, length, 6, seed=3)
    np.testing.assert_array_equal(got, _reference_multiplicities(n, length, 6, 3))
    assert (got.sum(axis=1) == n).all()


@pytest.mark.parametrize(
    ("n", "length", "resamples", "message"),
    [
        (0, 1, 5, "at least one date"),
        (5, 0, 5, "block_length"),
        (5, 6, 5, "block_length"),
        (5, 2, 0, "n_resamples"),
    ],
)
def test_moving_block_bootstrap_refuses_what_it_cannot_draw(n, length, resamples, message) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=message):
        moving_block_indices(n, length, resamples, np.random.default_rng(0))


def test_moving_block_bootstrap_accepts_its_edge_cases() -> None:
    rng = np.random.default_rng(0)
    assert moving_block_indices(1, 1, 3, rng).tolist() == [[0], [0], [0]]
    # blocks as long as the series: every resample is a rotation of the series
    rotations = [[(start + k) % 4 for k in range(4)] for start in range(4)]
    assert all(row in rotations for row in moving_block_indices(4, 4, 20, rng).tolist())
    assert moving_block_indices(4, 1, 1, rng).shape == (1, 4)


GROUPS = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_bootstrap_summary_refuses_a_confidence_outside_0_1(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_summary(GROUPS, np.array([1.0, 2.0]), np.ones((3, 2)), 3, confidence)


@pytest.mark.parametrize(
    ("point", "boot"),
    [
        (np.array([1.0, 2.0, 3.0]), np.ones((3, 2))),  # point of the wrong length only
        (np.array([1.0, 2.0]), np.ones((3, 3))),  # resamples of the wrong width only
        (np.array([1.0, 2.0]), np.ones(2)),  # resamples not a matrix
    ],
)
def test_bootstrap_summary_refuses_mismatched_shapes(point, boot) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="point must be"):
        bootstrap_summary(GROUPS, point, boot, 3, 0.9)


def test_bootstrap_summary_rates_against_the_ideal_zero_by_default() -> None:
    # one system: rated by its absolute value; ideal 0, no worst value -> 1.0 is not rated
    # (in no resample either, so no share: NaN), 0.0 is rated 1
    one = GROUPS.iloc[:1]
    out = bootstrap_summary(one, np.array([1.0]), np.ones((4, 1)), 3, 0.9)
    assert out["rating"].tolist() == [0, 0, 0] and out["share"].isna().all()
    out = bootstrap_summary(one, np.array([0.0]), np.zeros((4, 1)), 3, 0.9)
    assert out["rating"].tolist() == [1, 1, 1] and out["share"].tolist() == [1.0, 0.0, 0.0]


def test_bootstrap_summary_leaves_the_resamples_it_was_given_alone() -> None:
    boot = np.array([[4e-15, 2.0], [1.0, 3.0]])
    bootstrap_summary(GROUPS, np.array([0.0, 2.0]), boot, 3, 0.9)
    assert boot.tolist() == [[4e-15, 2.0], [1.0, 3.0]]


def test_block_bootstrap_refuses_a_categorical_key_with_a_missing_value() -> None:
    values = pd.DataFrame(
        {
            "system_id": pd.Categorical(["a", "b", None, "a"]),
            "perturbation_id": "P0",
            "window_end_date": [1, 1, 2, 2],
            "value": [1.0, 2.0, 3.0, 4.0],
        }
    )
    with pytest.raises(ValueError, match="missing values"):
        block_bootstrap_ratings(values, 3, 5, 1, seed=0)


def _reference_rating(scores: dict[str, float], levels: int) -> dict[str, int]:
    """Algorithm 5 from its definition (ideal 0, no worst value, lower is better): the
    distinct finite scores ascending, cut into `levels` runs like numpy.array_split (the first
    D % L runs one longer); a lone distinct score: 1 at 0, else not rated (0)."""
    finite = {k: v for k, v in scores.items() if np.isfinite(v)}
    distinct = sorted(set(finite.values()))
    if len(distinct) == 1:
        return {k: (1 if abs(v) <= 1e-12 else 0) for k, v in finite.items()}
    q, r = divmod(len(distinct), levels)
    sizes = [q + 1] * r + [q] * (levels - r)
    level_of, start = {}, 0
    for level, size in enumerate(sizes, start=1):
        for value in distinct[start : start + size]:
            level_of[value] = level
        start += size
    return {k: level_of[v] for k, v in finite.items()}


def _bootstrap_values() -> pd.DataFrame:
    """Two perturbations x three systems over 8 dates; some dates have two rows (two
    tickers); system c has 2 values under P0 and 1 under P1 (std undefined there)."""
    rng = np.random.default_rng(21)
    rows = []
    for pert in ("P0", "P1"):
        for offset, system in enumerate(("a", "b", "c")):
            dates = range(8) if system != "c" else ([2, 5] if pert == "P0" else [1])
            for date in dates:
                for _ in range(1 if date % 3 else 2):
                    rows.append((system, pert, date, 2.0 + offset + rng.normal(0.0, 1.5)))
    return pd.DataFrame(rows, columns=["system_id", "perturbation_id", "window_end_date", "value"])


@pytest.mark.parametrize("statistic", ["mean", "std"])
def test_block_bootstrap_ratings_equal_a_direct_resampling(statistic: str) -> None:
    values = _bootstrap_values()
    levels, resamples, length, seed, confidence = 2, 5, 3, 7, 0.8
    out = block_bootstrap_ratings(
        values, levels, resamples, length, seed, statistic, confidence=confidence
    )
    mult = _reference_multiplicities(8, length, resamples, seed)

    def statistic_of(rows: pd.DataFrame, weights: np.ndarray) -> float:
        # every row repeated as often as its date was drawn
        drawn = np.repeat(rows["value"].to_numpy(), weights[rows["window_end_date"]].astype(int))
        if statistic == "mean":
            return float(np.mean(drawn)) if drawn.size else np.nan
        return float(np.std(drawn, ddof=1)) if drawn.size > 1 else np.nan

    expected = []
    for pert, block in values.groupby("perturbation_id"):
        systems = sorted(block["system_id"].unique())
        rows = {s: block[block["system_id"] == s] for s in systems}
        point = {s: statistic_of(rows[s], np.ones(8)) for s in systems}
        boot = np.array([[statistic_of(rows[s], m) for s in systems] for m in mult])
        point_rating = _reference_rating(point, levels)
        boot_rating = [_reference_rating(dict(zip(systems, b, strict=True)), levels) for b in boot]
        for i, s in enumerate(systems):
            valid = boot[np.isfinite(boot[:, i]), i]
            low, high = np.quantile(valid, [0.1, 0.9]) if valid.size else (np.nan, np.nan)
            if np.isfinite(point[s]) and valid.size:
                low, high = min(low, point[s]), max(high, point[s])  # widened to the point
            # the share counts the resamples that rated s (rating > 0)
            rated = sum(1 for b in boot_rating if b.get(s, 0) > 0)
            for level in range(1, levels + 1):
                hits = sum(1 for b in boot_rating if b.get(s) == level)
                expected.append(
                    (
                        s,
                        pert,
                        point[s],
                        point_rating.get(s, 0),
                        low,
                        high,
                        level,
                        hits / rated if rated else np.nan,
                        levels,
                        resamples,
                        valid.size,
                    )
                )
    # separable / separation_reason: tests/unit/test_bootstrap_separation.py
    expected = pd.DataFrame(expected, columns=out.columns.drop(["separable", "separation_reason"]))
    pd.testing.assert_frame_equal(
        out[expected.columns].reset_index(drop=True),
        expected,
        check_dtype=False,
        rtol=1e-9,
        atol=1e-12,
    )
    # the example exercises what it should: some resamples lack system c under P1
    assert expected["n_valid"].min() < resamples


def test_an_interval_end_within_noise_of_the_perturbations_scale_is_zero() -> None:
    # each resample row is snapped on its own scale (1): 5e-11 stays in the resamples, but
    # the perturbation's scale is 1000 (b's point), so a's interval end 5e-11 is noise -> 0
    out = bootstrap_summary(
        GROUPS, np.array([0.0, 1000.0]), np.array([[5e-11, 1.0], [5e-11, 1.0]]), 3, 0.9
    ).drop_duplicates("system_id")
    assert out["ci_low"].tolist() == [0.0, 1.0]
    assert out["ci_high"].tolist() == [0.0, 1000.0]


def test_a_system_without_valid_resamples_leaves_the_others_intervals() -> None:
    boot = np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan], [4.0, np.nan]])
    out = bootstrap_summary(GROUPS, np.array([2.5, 1.0]), boot, 3, 0.5).drop_duplicates("system_id")
    # a: the 25 % and 75 % quantiles of 1..4 (linear): 1.75 and 3.25; b: none
    assert out["ci_low"].iloc[0] == 1.75 and out["ci_high"].iloc[0] == 3.25
    assert np.isnan(out["ci_low"].iloc[1]) and np.isnan(out["ci_high"].iloc[1])
    assert out["n_valid"].tolist() == [4, 0] and out["n_resamples"].tolist() == [4, 4]


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_block_bootstrap_refuses_a_confidence_outside_0_1(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        block_bootstrap_ratings(_bootstrap_values(), 3, 5, 2, seed=0, confidence=confidence)


def test_block_bootstrap_defaults_rate_against_the_ideal_zero_lower_is_better() -> None:
    # one system, every value 0: at the ideal 0 -> rating 1 (lower is better), every resample
    values = pd.DataFrame(
        {"system_id": "a", "perturbation_id": "P0", "window_end_date": range(6), "value": 0.0}
    )
    out = block_bootstrap_ratings(values, 3, 4, 2, seed=1)
    assert out["rating"].tolist() == [1, 1, 1]
    assert out["share"].tolist() == [1.0, 0.0, 0.0]
