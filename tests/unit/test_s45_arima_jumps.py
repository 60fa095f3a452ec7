"""ARIMA's jump rule: a warm fit of a window whose newest step jumps (a P1 zero or a P2 half
just entered) is checked against a cold fit and the better log-likelihood kept. The rule's
trigger, worked by hand; its effect on real prices is in test_arima_warm.py (MSFT P1)."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.systems.arima import JUMP_FACTOR, newest_is_jump


def steady(last_step: float) -> np.ndarray:
    """Steps of +1, -1, +1, ... (mean absolute size 1), then ``last_step``."""
    steps = np.array([1.0, -1.0] * 5 + [last_step])
    return 100.0 + np.concatenate([[0.0], np.cumsum(steps)])


def test_the_factor_is_five():
    assert JUMP_FACTOR == 5.0


@pytest.mark.parametrize(
    ("last_step", "jump"),
    [(5.0, False), (-5.0, False), (5.001, True), (-5.001, True), (0.0, False), (80.0, True)],
)
def test_a_jump_is_over_five_times_the_other_steps_mean_size(last_step, jump):
    assert newest_is_jump(steady(last_step)) is jump


def test_a_zeroed_or_halved_newest_price_is_a_jump_and_the_return_from_it_too():
    prices = 100.0 + np.cumsum(np.tile([1.0, -0.5], 20))
    zeroed = prices.copy()
    zeroed[-1] = 0.0
    halved = prices.copy()
    halved[-1] /= 2.0
    assert not newest_is_jump(prices)
    assert newest_is_jump(zeroed) and newest_is_jump(halved)
    back = zeroed.copy()
    back[-2], back[-1] = 0.0, prices[-1]  # the zero one step back: the newest step returns
    assert newest_is_jump(back)


def test_missing_values_are_skipped_and_short_or_flat_windows_are_no_jump():
    with_gaps = steady(6.0)
    with_gaps[[2, 5]] = np.nan  # the steps over a gap join the observed values around it:
    # observed 100 101 101 100 100 101 100 101 100 106, steps 1 0 1 0 1 1 1 1 | 6: the others'
    # mean 6 / 8 = 0.75, and 6 > 5 x 0.75 = 3.75: a jump (with NaN steps kept it would be none)
    assert newest_is_jump(with_gaps)
    with_gaps[-1] = 103.6  # a step of 3.6 < 3.75: none
    assert not newest_is_jump(with_gaps)
    ends_missing = steady(80.0)
    ends_missing[-1] = np.nan  # the newest observed step is then an ordinary one
    assert not newest_is_jump(ends_missing)
    assert not newest_is_jump(np.array([1.0, 50.0]))  # fewer than 3 values
    assert not newest_is_jump(np.array([3.0, 3.0, 3.0, 9.0]))  # no other step to compare
