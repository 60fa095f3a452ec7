"""Statistics leftovers: the rating-stability bootstrap against the published rating rule,
and the resampled WRS t-tests of a group that one resample makes constant.

Expected values are worked by hand from the rules in ``tsrate.methods.ratings`` (Algorithm
5 and the absolute rating of a lone or tied group) or computed with scipy on physically
replicated windows, never read back from the code."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsrate.methods.ratings import bootstrap_summary, ratings_frame
from tsrate.methods.stability import wrs_resampled


def _point_ratings(out: pd.DataFrame) -> dict[str, int]:
    first = out.drop_duplicates("system_id")
    return dict(zip(first["system_id"], first["rating"].astype(int), strict=True))


def test_bootstrap_rates_a_tied_group_against_its_largest_max_score() -> None:
    # a and b tie at WRS 1.2; their max_score differ (2.4 and 4.8). The published rating
    # (ratings_frame) takes one worst value for the group, the largest: 1.2 / 4.8 = 0.25 of
    # [0, 4.8] -> the first of 3 equal slices -> rating 1 for both. Against a's own 2.4,
    # 1.2 is half-way -> slice 2: the bootstrap's point rating disagreed with the mart's.
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})
    point = np.array([1.2, 1.2])
    boot = np.array([[1.2, 1.2]] * 4)
    out = bootstrap_summary(groups, point, boot, 3, 0.9, ideal=0.0, maximum=np.array([2.4, 4.8]))
    assert _point_ratings(out) == {"a": 1, "b": 1}
    # every resample is the tied group again: all of its share on level 1
    shares = out.pivot(index="system_id", columns="rating_level", values="share")
    assert shares.loc["a"].tolist() == [1.0, 0.0, 0.0]
    assert shares.loc["b"].tolist() == [1.0, 0.0, 0.0]
    published = ratings_frame(
        pd.DataFrame(
            {
                "metric": "wrs_company",
                "perturbation_id": "P1",
                "system_id": ["a", "b"],
                "raw_score": point,
                "max_score": [2.4, 4.8],
            }
        ),
        3,
        {"wrs_company": False},
        ideal={"wrs_company": 0.0},
        maximum_column="max_score",
    )
    assert dict(zip(published["system_id"], published["rating"], strict=True)) == {"a": 1, "b": 1}


def test_bootstrap_point_rating_snaps_noise_of_zero_as_the_published_rating() -> None:
    # Scores -2e-11, 2e-11 and 30 (one perturbation): the published rule stores
    # |x| <= 1e-12 x max(1, 30) = 3e-11 as 0, so the distinct scores are 0 and 30, split
    # into 3 levels as numpy.array_split ([0], [30], []): ratings 1, 1, 2. Unsnapped, the
    # two noise values are 4e-11 apart (more than the 3e-11 of a tie): 1, 2, 3.
    groups = pd.DataFrame({"system_id": ["a", "b", "c"], "perturbation_id": "P1"})
    point = np.array([-2e-11, 2e-11, 30.0])
    boot = np.array([[0.0, 0.0, 30.0]] * 3)
    out = bootstrap_summary(groups, point, boot, 3, 0.9, ideal=0.0)
    assert _point_ratings(out) == {"a": 1, "b": 1, "c": 2}
    # the raw score published beside the rating stays the one given
    assert out.drop_duplicates("system_id")["raw_score"].tolist() == [-2e-11, 2e-11, 30.0]


LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})


def _wrs_by_scipy(a: np.ndarray, b: np.ndarray) -> float:
    """The WRS of one pair from scipy's pooled two-sided t-test: the weights of the levels
    whose 1 - confidence exceeds p. Two constant groups: scipy gives NaN, so the
    convention of tsrate.methods.wrs decides by hand (equal: no rejection; else all)."""
    if np.all(a == a[0]) and np.all(b == b[0]):
        return 0.0 if a[0] == b[0] else 2.4
    p = stats.ttest_ind(a, b, equal_var=True).pvalue
    return sum(w for c, w in zip(LEVELS["confidence"], LEVELS["weight"], strict=True) if p < 1 - c)


def test_a_resample_that_draws_one_value_per_group_tests_them_as_constants() -> None:
    # Company analysis, one pair (A, B of industry X), four dates. Neither group is
    # constant in the data, but resample 0 draws date 0 four times: A and B are both
    # [0.1] x 4, equal constants: no evidence of different means (scipy: t = NaN; the
    # published test: t = 0, p = 1), so WRS 0 -- the floating residue of the weighted sums
    # made them differ and rejected them at every level (2.4). Resample 1 draws date 1:
    # 0.1 vs 0.5, different constants, rejected at every level: 1.0 + 0.8 + 0.6 = 2.4.
    dates = np.arange(4).astype("datetime64[D]")
    a = np.array([0.1, 0.1, 0.7, 0.3])
    b = np.array([0.1, 0.5, 0.1, 0.9])
    errors = pd.DataFrame(
        [
            {
                "system_id": "s",
                "perturbation_id": "P1",
                "window_end_date": day,
                "ticker": ticker,
                "industry": "X",
                "max_abs_residual": value,
            }
            for ticker, values in (("A", a), ("B", b))
            for day, value in zip(dates, values, strict=True)
        ]
    )
    weights = np.array([[4, 0, 0, 0], [0, 4, 0, 0], [2, 0, 0, 2], [1, 1, 1, 1]], dtype=float)
    keys, point, boot = wrs_resampled(errors, "ticker", LEVELS, "industry", dates, weights)
    assert keys.to_dict("records") == [{"system_id": "s", "perturbation_id": "P1"}]
    assert boot[0, 0] == 0.0
    assert boot[1, 0] == 2.4
    # the other resamples as scipy tests the windows copied as often as they are drawn
    for row in (2, 3):
        counts = weights[row].astype(int)
        expected = _wrs_by_scipy(np.repeat(a, counts), np.repeat(b, counts))
        assert boot[row, 0] == pytest.approx(expected)
    # (resample 2: p = 0.254, rejected at 60 % only: 0.6; the data: p = 0.689: 0)
    assert point[0] == pytest.approx(_wrs_by_scipy(a, b))
