"""`intervals.one_proportion_p` is statsmodels' one-sample z test with the variance at the
tested level (`proportions_ztest(..., prop_var=level)`), both sides."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.proportion import proportions_ztest

from tsrate.suites.intervals import one_proportion_p


@pytest.mark.parametrize(("k", "n", "level"), [(63, 100, 0.5), (70, 100, 0.8), (12.5, 40.2, 0.2)])
def test_matches_statsmodels(k, n, level):
    _, expected = proportions_ztest(k, n, value=level, prop_var=level)
    assert one_proportion_p(k, n, level) == pytest.approx(expected, rel=1e-12)


def test_edges():
    assert math.isnan(one_proportion_p(0, 0, 0.5))
    assert one_proportion_p(10, 10, 1.0) == 1.0 and one_proportion_p(9, 10, 1.0) == 0.0
