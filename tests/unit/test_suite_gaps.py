"""Suite parameters no test pinned, each against its stated value.

The understanding suite's stationarity break (``structural_breaks``, kind
``stationarity_change``) turns white noise (sd 1) into a random walk whose steps are
N(0, 1.5^2), starting from the last value before the break: a value the paper does not give
(Appendix B.1), stated in the generator's docstring. The test reads the steps back as the
differences of the stored values and checks their sd against a chi-square interval.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from tsrate.suites.understanding import generators as g

#: the walk's step sd after a stationarity break (structural_breaks' docstring)
STEP_SD = 1.5


def _steps(seeds=range(1000), n: int = 150):
    """Each series' values before the break, the walk's first steps (from the last value
    before the break) and all its steps, pooled."""
    before, first, after = [], [], []
    for seed in seeds:
        values, cls, labels, _, _ = g.structural_breaks(
            np.random.default_rng(seed), n, "stationarity_change"
        )
        assert cls == "regime_shift"
        k = labels["break_index"]
        before.append(values[:k])
        # values[k] - values[k - 1] is the walk's first step: it starts at the last value
        after.append(np.diff(values[k - 1 :]))
        first.append(after[-1][0])
    return before, np.array(first), np.concatenate(after)


def sd_interval(x: np.ndarray, level: float = 1e-6) -> tuple[float, float]:
    """The chi-square interval of the sd of normal ``x`` (mean 0 known) at ``level``."""
    chi = stats.chi2.ppf([1 - level / 2, level / 2], len(x))
    low, high = np.sqrt((x**2).sum() / chi)
    return low, high


def test_stationarity_break_walks_with_step_sd_one_and_a_half():
    before, first, steps = _steps()
    assert len(steps) > 50_000
    # a step sd of 1.45 or 1.55 (or 1, or the noise's sd) lies outside the interval
    low, high = sd_interval(steps)
    assert low < STEP_SD < high and high - low < 0.05, (low, high)
    # no drift: the steps' mean is 0 (z test at the same level)
    assert abs(steps.mean()) < stats.norm.ppf(1 - 1e-6 / 2) * STEP_SD / np.sqrt(len(steps))
    # the first step too: the walk starts at the last value before the break (from any
    # other pre-break value the first difference would add the noise's variance, sd 2.1)
    low, high = sd_interval(first)
    assert low < STEP_SD < high < 1.8, (low, high)
    # before the break: white noise of sd 1 around the level (each series its own level)
    noise = np.concatenate([x - x.mean() for x in before])
    assert abs(noise.std() - 1.0) < 0.05
