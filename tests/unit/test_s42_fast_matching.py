"""The bootstrap's effects, made faster, give the same numbers bit for bit.

``_nearest_rows`` gathers through flat indices shared by the outcomes, works out the query
positions only, and takes its sort of the strata from ``matched_effects`` (the treated and
control matchings sort the same present strata by the same score). Each test compares with
a row-by-row loop that does the published arithmetic (prefix sums over the sorted pool,
the left window plus the right one where taken) with no shared index or sort, exactly.

``effect_resamples`` estimates every outcome of a perturbation set in one pass, split into
parts of its distributions on threads; the product's slabs are aligned so that a slab's
values do not depend on its neighbours. Each is compared with the unsplit computation.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import tsrate.methods.stability as methods_stability
import tsrate.robustness.marts.stability as marts_stability
from tests.unit.test_s40_outcome_stability import study, weights_of
from tsrate.methods.causal.matching import _nearest_rows, _rank_rows, matched_effects
from tsrate.methods.ratings import date_multiplicities
from tsrate.methods.stability import effects_resampled
from tsrate.robustness.marts.stability import _distribution_parts, effect_resamples


def _loop_nearest(score, query, pool, pool_sums, pool_counts, tol):
    """One row at a time: sort the present strata by score, prefix-sum the pool's sums and
    counts in that order, find the nearest pool stratum on each side and the run of scores
    tied with it (neighbours within ``tol``), and average the pool over the runs taken."""
    sums3 = pool_sums.reshape((-1,) + score.shape)
    out = np.zeros(sums3.shape)
    rows, width = score.shape
    for r in range(rows):
        key = np.where(query[r] | pool[r], score[r], np.inf)
        order = np.argsort(key, kind="stable")
        s = key[order]
        in_pool = pool[r][order]
        starts = [0]
        for j in range(1, width):  # absent strata sit at +inf: inf - inf is no tie
            with np.errstate(invalid="ignore"):
                tied = abs(s[j] - s[j - 1]) <= tol
            starts.append(starts[-1] if tied else j)
        ends = [0] * width
        for j in range(width - 1, -1, -1):
            ends[j] = ends[j + 1] if j + 1 < width and starts[j + 1] == starts[j] else j
        counts = np.where(in_pool, pool_counts[r][order], 0.0)
        cum_n = np.concatenate([[0.0], np.cumsum(counts)])
        for k in range(sums3.shape[0]):
            cum = np.concatenate([[0.0], np.cumsum(np.where(in_pool, sums3[k, r][order], 0.0))])
            for j in np.flatnonzero(query[r][order]):
                pools = np.flatnonzero(in_pool)
                before, after = pools[pools <= j], pools[pools >= j]
                d_l = s[j] - s[before[-1]] if before.size else np.inf
                d_r = s[after[0]] - s[j] if after.size else np.inf
                d_min = min(d_l, d_r)
                take_l = bool(before.size) and d_l <= d_min + tol
                take_r = bool(after.size) and d_r <= d_min + tol
                l_run = (starts[before[-1]], ends[before[-1]] + 1) if before.size else None
                r_run = (starts[after[0]], ends[after[0]] + 1) if after.size else None
                take_r = take_r and not (take_l and l_run == r_run)  # one run, once
                total = (cum[l_run[1]] - cum[l_run[0]] if take_l else 0.0) + (
                    cum[r_run[1]] - cum[r_run[0]] if take_r else 0.0
                )
                n = (cum_n[l_run[1]] - cum_n[l_run[0]] if take_l else 0.0) + (
                    cum_n[r_run[1]] - cum_n[r_run[0]] if take_r else 0.0
                )
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[k, r, order[j]] = np.float64(total) / np.float64(n)
    return out.reshape(pool_sums.shape)


def _tables(seed: int, rows: int, width: int, outcomes: int):
    """Dyadic scores (exact distances: ties, and queries midway between two pool strata),
    query and pool masks, counts and (outcomes x rows x width) sums of mixed signs."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 9, (rows, width)) / 8.0
    query = rng.random((rows, width)) < 0.6
    pool = rng.random((rows, width)) < 0.5
    pool[:, 0] |= ~pool.any(axis=1)  # every row holds a pool stratum
    counts = rng.integers(1, 5, (rows, width)).astype(float)
    sums = rng.normal(0.0, 3.0, (outcomes, rows, width)) * counts
    return score, query, pool, sums, counts


@pytest.mark.parametrize("tol", [0.0, 1e-12, 0.2])
def test_nearest_rows_is_the_loop_bit_for_bit(tol):
    """Flat gathers, query positions only, one or several outcomes, with and without the
    caller's sort: every value is the loop's exactly (tol 0.2 chains 1/8 steps into runs)."""
    score, query, pool, sums, counts = _tables(4, 60, 9, 3)
    expected = _loop_nearest(score, query, pool, sums, counts, tol)
    got = _nearest_rows(score, query, pool, sums, counts, tol)
    assert np.array_equal(got, expected, equal_nan=True)
    ranked = _rank_rows(score, query | pool, tol)
    assert np.array_equal(
        _nearest_rows(score, query, pool, sums, counts, tol, ranked), expected, equal_nan=True
    )
    one = _nearest_rows(score, query, pool, sums[1], counts, tol)
    assert np.array_equal(one, expected[1], equal_nan=True)
    assert np.all(got[:, ~query] == 0.0)  # only query strata are matched


def test_nearest_rows_takes_both_sides_when_equidistant():
    """A query midway between two pool runs averages both (the right window is added only
    where it is taken): the loop and the fast path agree, and the value is the hand one."""
    score = np.array([[0.25, 0.5, 0.75, 0.25]])
    query = np.array([[False, True, False, False]])
    pool = np.array([[True, False, True, True]])
    sums = np.array([[2.0, 0.0, 12.0, 4.0]])
    counts = np.array([[1.0, 1.0, 3.0, 2.0]])
    got = _nearest_rows(score, query, pool, sums, counts, 1e-12)
    assert got[0, 1] == (2.0 + 4.0 + 12.0) / (1.0 + 2.0 + 3.0)
    assert np.array_equal(got, _loop_nearest(score, query, pool, sums, counts, 1e-12))


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_matched_effects_batched_rows_equal_single_rows_bit_for_bit(estimand):
    """Rows where every stratum holds both arms, rows with an empty arm and rows with
    one-arm strata in one table (the matched rows picked by index), and a table of matched
    rows only (taken as views): each row's APE_m is its one-row call's, exactly."""
    rng = np.random.default_rng(11)
    rows, width, outcomes = 90, 12, 2
    n_t = rng.integers(0, 3, (rows, width)).astype(float)
    n_c = rng.integers(0, 3, (rows, width)).astype(float)
    n_t[:30] += 1.0
    n_c[:30] += 1.0  # overlap rows
    n_c[30:40] = 0.0  # an empty control arm
    n_t[40:, 0], n_c[40:, 1] = 1.0, 1.0
    s_t = rng.normal(0.0, 2.0, (outcomes, rows, width)) * n_t
    s_c = rng.normal(0.0, 2.0, (outcomes, rows, width)) * n_c
    for lo in (0, 40):  # mixed rows, then matched rows only
        got = matched_effects(n_t[lo:], s_t[:, lo:], n_c[lo:], s_c[:, lo:], estimand, 1e-12)
        for r in range(lo, rows):
            one = matched_effects(
                n_t[r : r + 1], s_t[:, r : r + 1], n_c[r : r + 1], s_c[:, r : r + 1],
                estimand, 1e-12,
            )  # fmt: skip
            assert np.array_equal(got[:, r - lo], one[:, 0], equal_nan=True)
    mixed = matched_effects(n_t, s_t, n_c, s_c, estimand, 1e-12)
    assert np.isnan(mixed[:, 30:40]).all() and np.isfinite(mixed[:, 40:]).all()


def _effect_inputs(seed: int, n_systems: int):
    """A direct effects_resampled study: 7 strata x 40 dates of units, 3 labels drawn per
    unit in 4 rows (distributions x draws), 200 block-bootstrap resamples of the dates."""
    rng = np.random.default_rng(seed)
    n_strata, n_dates = 7, 40
    stratum = np.repeat(np.arange(n_strata), n_dates)
    day = np.tile(np.arange(n_dates), n_strata)
    assigned = rng.integers(0, 3, (4, stratum.size))
    assigned[:, :3] = [0, 1, 2]  # every row holds every label
    grids = [rng.normal(1.0, 0.5, (stratum.size, 3)) ** 2 for _ in range(n_systems)]
    weights = date_multiplicities(n_dates, 5, 200, seed)
    return grids, assigned, [stratum] * 4, day, weights


def test_a_slab_of_the_product_is_the_same_whatever_its_neighbours(monkeypatch):
    """One system's APE_m and PIE % resampled alone and after one or two other systems (its
    slabs then sit further along the product's columns, 7 strata a slab): bit for bit the same,
    with the slabs aligned. Unaligned (SLAB_ALIGN 1), OpenBLAS's column blocks give some
    of them other last bits: so the alignment is what makes a pass's parts and outcomes
    independent of one another."""
    grids, assigned, strata, day, weights = _effect_inputs(5, 3)
    labels = ["P0", "P1", "P2"]

    def resampled(chosen):
        _, ape, pie = effects_resampled(
            [grids[i] for i in chosen], labels, assigned, strata, day, weights
        )
        return ape[-1], pie[-1]

    placed = [resampled(list(range(k, 3))) for k in (2, 1, 0)]  # alone, after 1, after 2
    for other in placed[1:]:
        assert np.array_equal(placed[0][0], other[0], equal_nan=True)
        assert np.array_equal(placed[0][1], other[1], equal_nan=True)
    monkeypatch.setattr(methods_stability, "SLAB_ALIGN", 1)
    unaligned = [resampled(list(range(k, 3))) for k in (2, 1, 0)]
    assert any(not np.array_equal(unaligned[0][0], other[0]) for other in unaligned[1:])


def test_distribution_parts_cover_the_work_once_in_order():
    """Parts are contiguous runs of the distributions with selected entries, each holding
    some, about equal in work; one part without threads."""
    rng = np.random.default_rng(2)
    n_jobs, n_draws, n_dist, n_treat = 3, 4, 10, 2
    selected = rng.random((n_jobs, n_draws * n_dist, n_treat)) < 0.3
    selected[:, np.arange(n_draws)[:, None] * n_dist + 4] = False  # distribution 4: no work
    work = selected.reshape(n_jobs, n_draws, n_dist, n_treat).sum(axis=(0, 1, 3))
    for workers in (1, 2, 3, 16):
        parts = _distribution_parts(selected, n_dist, n_draws, workers)
        joined = np.concatenate(parts)
        assert joined.tolist() == np.flatnonzero(work).tolist()  # each once, in order
        assert all(work[p].sum() > 0 for p in parts)
        most = 1 if workers == 1 else min(2 * workers, np.count_nonzero(work))
        assert 1 <= len(parts) <= most and (workers == 1 or len(parts) > 1)
        if workers > 1:  # no part holds more than its share plus one distribution's work
            assert max(work[p].sum() for p in parts) <= work.sum() / len(parts) + work.max()
    assert _distribution_parts(np.zeros_like(selected), n_dist, n_draws, 2) == []


@pytest.mark.parametrize("top_k", [0, 1])
def test_effect_resamples_in_parts_on_threads_equal_one_pass_bit_for_bit(monkeypatch, top_k):
    """The effect study's outcomes in one pass, split into parts of the distributions on a
    pool of threads, and each outcome resampled alone without a pool: the same resamples,
    bit for bit (top_k 1: each outcome's own worst distributions)."""
    errors, _, effects, sets, distributions, settings = study()
    dates, weights = weights_of(errors)
    args = (sets, distributions, "r1", dates, weights)
    single = effect_resamples(errors, effects, top_k, *args, settings)
    monkeypatch.setattr(marts_stability, "WORKERS", 3)
    with ThreadPoolExecutor(3) as pool:
        parted = effect_resamples(errors, effects, top_k, *args, settings, pool)
    assert single.keys() == parted.keys() and len(single) >= 4
    for metric, (keys, boot) in single.items():
        pd.testing.assert_frame_equal(parted[metric][0], keys)
        assert np.array_equal(parted[metric][1], boot, equal_nan=True), metric
    for outcome in ("max_abs_residual", "other"):
        alone = effect_resamples(
            errors.assign(max_abs_residual=errors[outcome]),
            effects.loc[effects["outcome"] == outcome].assign(outcome="max_abs_residual"),
            top_k,
            *args,
            settings | {"robustness_outcomes": "max_abs_residual"},
        )
        for metric, (keys, boot) in single.items():
            at = (keys["outcome"] == outcome).to_numpy()
            assert np.array_equal(boot[:, at], alone[metric][1], equal_nan=True), metric
