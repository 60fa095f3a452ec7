"""The mutation sweep of tsrate.methods.block_bootstrap (tests/planted/s44_sweep.json): the
edges of what the circular block bootstrap accepts. Each edge is checked on both sides: the
smallest valid input gives the written-out answer, the next smaller one is refused with
its own one-line message."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.methods.block_bootstrap import moving_block_indices, too_few_dates


def test_one_date_is_the_fewest_a_resample_can_draw():
    """n = 1, blocks of 1: every resample is that date (index 0); n = 0 is refused as such
    (not as a block length out of range)."""
    idx = moving_block_indices(1, 1, 3, np.random.default_rng(0))
    assert idx.tolist() == [[0], [0], [0]]
    with pytest.raises(ValueError, match="at least one date"):
        moving_block_indices(0, 1, 3, np.random.default_rng(0))


def test_block_length_one_is_allowed_and_zero_refused():
    """Blocks of 1 over 4 dates: 4 blocks, each one uniform date (a plain i.i.d. draw of
    positions 0..3); blocks of 0 are refused with the range in the message."""
    idx = moving_block_indices(4, 1, 500, np.random.default_rng(1))
    assert idx.shape == (500, 4)
    assert set(idx.ravel().tolist()) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match=r"block_length must be between 1 and .*\(4\)"):
        moving_block_indices(4, 0, 3, np.random.default_rng(0))


def test_one_resample_is_allowed_and_none_refused():
    idx = moving_block_indices(5, 2, 1, np.random.default_rng(2))
    assert idx.shape == (1, 5)
    with pytest.raises(ValueError, match="n_resamples must be >= 1"):
        moving_block_indices(5, 2, 0, np.random.default_rng(2))


def test_too_few_dates_takes_blocks_of_one_and_refuses_zero():
    """Blocks of 1 need 2 dates: 2 are enough, 1 is not (the reason in words); a block
    length of 0 is refused rather than read as needing 0 dates."""
    assert too_few_dates(2, 1) is None
    assert too_few_dates(1, 1) == (
        "1 window date: too few for blocks of 1 (the bootstrap needs at least 2)"
    )
    with pytest.raises(ValueError, match="block_length must be >= 1"):
        too_few_dates(5, 0)
