"""`intervals.one_proportion_p` at its edges (mutation sweep: tests/planted/s45_sweep.json):
one prompt is enough for the z test (statsmodels'), and a level of 0 leaves only a share
of 0 possible, as scipy's exact binomial test says."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportions_ztest

from tsrate.suites.intervals import one_proportion_p


@pytest.mark.parametrize(("k", "n"), [(1, 1), (0, 1), (0.6, 1.0)])
def test_a_single_prompt_is_tested_not_undefined(k, n):
    _, expected = proportions_ztest(k, n, value=0.5, prop_var=0.5)
    assert one_proportion_p(k, n, 0.5) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("k", "n", "level"), [(0, 10, 0.0), (1, 10, 0.0), (10, 10, 1.0)])
def test_a_level_of_0_or_1_is_the_exact_binomial_p(k, n, level):
    """With a level of 0 (or 1) every draw is 0 (or n): the exact two-sided p is 1 for that
    count and 0 for any other."""
    assert one_proportion_p(k, n, level) == binomtest(k, n, level).pvalue
