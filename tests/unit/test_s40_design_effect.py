"""The Rao-Scott design effect next to a share of 0 or 1: what the formula gives, computed
here independently (the linearised variance of the ratio estimator over the binomial one,
item by item in plain Python), against :func:`tsrate.suites.intervals.clustered_counts`.

One success alone in its series (10 series x 3 formats) gives a design effect under 1, read
as 1: every item counts. One whole series succeeding gives exactly 3: the series count, as
they do at a share of 0 (the convention there). The jump at 0 is the formula's, not the
floor's: which items succeed decides the limit."""

from __future__ import annotations

import pytest

from tsrate.suites.intervals import clustered_counts

SERIES, FORMATS = 10, 3


def labels() -> list[str]:
    return [f"s{i}" for i in range(SERIES) for _ in range(FORMATS)]


def design_effect(y: list[int], clusters: list[str]) -> float:
    """sum_i (y_i - p m_i)^2 / n^2 over p (1 - p) / n, by hand (no numpy)."""
    n = len(y)
    p = sum(y) / n
    totals: dict[str, list[int]] = {}
    for value, label in zip(y, clusters, strict=True):
        totals.setdefault(label, []).append(value)
    linearised = sum((sum(v) - p * len(v)) ** 2 for v in totals.values()) / n**2
    return linearised / (p * (1 - p) / n)


def answers(successes: list[int]) -> list[int]:
    return [1 if i in successes else 0 for i in range(SERIES * FORMATS)]


@pytest.mark.parametrize("flip", [False, True])  # the same next to 0 and next to 1
def test_next_to_a_share_of_0_or_1_the_design_effect_is_the_formulas(flip):
    n = SERIES * FORMATS

    def counts(successes: list[int]) -> tuple[list[int], tuple[float, float]]:
        y = answers(successes)
        y = [1 - v for v in y] if flip else y
        return y, clustered_counts(y, labels())

    y, (k, trials) = counts([])
    assert trials == SERIES and k == (SERIES if flip else 0)  # at 0 / 1: each series once
    # one success alone in its series: d = (1 - 3/30) / (1 - 1/30) < 1, read as 1
    y, (k, trials) = counts([0])
    d = design_effect(y, labels())
    assert d == pytest.approx((1 - FORMATS / n) / (1 - 1 / n)) and d < 1
    assert trials == pytest.approx(n) and k == pytest.approx(sum(y))
    # one whole series: d = 3 exactly, the series count as at 0 (continuous that way)
    y, (k, trials) = counts([0, 1, 2])
    assert design_effect(y, labels()) == pytest.approx(FORMATS)
    assert trials == pytest.approx(SERIES) and k == pytest.approx(sum(y) / FORMATS)
    # two of a series' three: between the two, as the formula says
    y, (k, trials) = counts([0, 1])
    d = design_effect(y, labels())
    assert 1 < d < FORMATS and trials == pytest.approx(n / d)


def test_away_from_0_and_1_the_effective_counts_are_the_formulas():
    # the old values elsewhere: n / max(d, 1) for a few mixed patterns
    for successes in ([0, 1, 2, 3, 4, 5], [0, 3, 6, 9, 12], list(range(0, 30, 2)), [0, 1, 4, 29]):
        y = answers(successes)
        d = design_effect(y, labels())
        k, trials = clustered_counts(y, labels())
        assert trials == pytest.approx(len(y) / max(d, 1.0)), successes
        assert k == pytest.approx(sum(y) / max(d, 1.0)), successes
