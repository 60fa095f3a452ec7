"""The circular block bootstrap over ordered window dates, and when it may not be used.

Every bootstrap of tsrate's core resamples the ordered window dates of a run with
:func:`date_multiplicities` (one seed for every metric, so every metric sees the same
alternative histories). It is the circular block bootstrap (Politis & Romano 1992): the
dates are wrapped on a circle, each block starts at a date drawn uniformly from all n and
runs ``block_length`` consecutive positions modulo n, and the blocks are concatenated and
truncated to n. Every date is then drawn once per resample on average, the first and last
ones included (the moving-block bootstrap, starts on ``0 .. n - block_length`` only, draws
the ends far less and centres the resampled statistic on a middle-weighted mean).

With fewer than two blocks' worth of dates a resample is (nearly) a rotation of the
original series and says nothing about how firm a score is: :func:`too_few_dates` gives the
reason, and :func:`withhold_bootstrap` publishes the point score and rating only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "moving_block_indices",
    "date_multiplicities",
    "too_few_dates",
    "withhold_bootstrap",
]


def moving_block_indices(
    n: int, block_length: int, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Circular block bootstrap: (n_resamples x n) indices into an ordered series of length n.

    Each resample concatenates ``ceil(n / block_length)`` blocks; a block's start is uniform
    on ``0 .. n - 1`` and its positions are ``(start + j) % n`` for j in
    ``0 .. block_length - 1``; the concatenation is truncated to n.
    """
    if n < 1:
        raise ValueError("need at least one date to resample")
    if not 1 <= block_length <= n:
        raise ValueError(f"block_length must be between 1 and the number of dates ({n})")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    n_blocks = -(-n // block_length)
    starts = rng.integers(0, n, size=(n_resamples, n_blocks))
    idx = (starts[:, :, None] + np.arange(block_length)[None, None, :]) % n
    return idx.reshape(n_resamples, n_blocks * block_length)[:, :n]


def date_multiplicities(n_dates: int, block_length: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples x n_dates) counts: how often each ordered date is drawn in each resample
    of :func:`moving_block_indices` (seeded by ``seed``). Every bootstrap of tsrate weights
    its per-date sums with this matrix, so all metrics of a run share the same histories."""
    rng = np.random.default_rng(seed)
    idx = moving_block_indices(n_dates, int(block_length), int(n_resamples), rng)
    mult = np.zeros((idx.shape[0], n_dates))
    np.add.at(mult, (np.repeat(np.arange(idx.shape[0]), n_dates), idx.ravel()), 1.0)
    return mult


def too_few_dates(n_dates: int, block_length: int) -> str | None:
    """Why the block bootstrap is not used for ``n_dates`` window dates (fewer than two
    blocks of ``block_length``), or None when it is."""
    block_length = int(block_length)
    if block_length < 1:
        raise ValueError("block_length must be >= 1")
    if n_dates >= 2 * block_length:
        return None
    noun = "window date" if n_dates == 1 else "window dates"
    return (
        f"{n_dates} {noun}: too few for blocks of {block_length}"
        f" (the bootstrap needs at least {2 * block_length})"
    )


def withhold_bootstrap(frame: pd.DataFrame, reason: str) -> pd.DataFrame:
    """A bootstrap frame (the columns of tsrate.methods.ratings.BOOTSTRAP_COLUMNS) with its
    point score and rating kept and everything the resamples would say withheld: null
    interval, share and separable, no resample drawn or valid, ``reason`` as the
    separation_reason."""
    out = frame.copy()
    out[["ci_low", "ci_high", "share"]] = np.nan
    out["separable"] = pd.Series([None] * len(out), index=out.index, dtype=object)
    out["separation_reason"] = reason
    out["n_resamples"] = 0
    out["n_valid"] = 0
    return out
