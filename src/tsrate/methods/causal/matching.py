"""Propensity-score matching on a discrete confounder (paper section 3.2, eq. 2: APE_m).

The one matching implementation of tsrate: :func:`matched_effects` is what
:func:`tsrate.methods.causal.estimators.perturbation_effects` (one row) and the
block-bootstrap resampling of :func:`tsrate.methods.stability.effects_resampled` (one row per
system x treatment x resample) evaluate.

Conventions
-----------
* Matching is 1-nearest-neighbour on the propensity score, with replacement, AVERAGING TIES
  (every pool unit at the minimal distance, within ``tol``, is a match).
* The propensity of a discrete confounder is computed in closed form by default: the
  unpenalised one-hot logistic regression's maximum-likelihood fit IS the stratum's treated
  share (:func:`stratum_propensity`), so matching reduces to per-stratum counts and sums
  (:func:`matched_effects`). :func:`propensity_scores` keeps the scikit-learn fit and
  :func:`matched_logistic` the unit-level matching as the reference.
* Effects are ``treated minus control``; the estimand is ``"ATE"`` (every unit matched) or
  ``"ATT"`` (treated units only).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "check_method",
    "matched_effects",
    "matched_logistic",
    "nearest_neighbour_means",
    "nearest_weighted_means",
    "propensity_scores",
    "stratum_propensity",
]


def propensity_scores(
    strata: np.ndarray, treated: np.ndarray, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Logistic propensity P(treated | stratum) for a discrete confounder.

    ``strata`` are integer codes 0..S-1 per unit, ``treated`` booleans. The model is
    scikit-learn ``LogisticRegression`` on the one-hot stratum (one column per stratum, no
    intercept, so the model is identified) and UNPENALISED (``C=np.inf``, lbfgs): its maximum
    likelihood fit is the stratum's treated share. It is fitted on the 2S distinct
    (stratum, arm) rows with the arm counts as sample weights -- the same likelihood as
    fitting every unit, at a fraction of the cost. A stratum with only one arm has no finite
    MLE; lbfgs then stops with the propensity close to 0 or 1 (the convergence warning is
    silenced; :func:`tsrate.methods.causal.estimators.perturbation_effects` reports such strata).

    Returns ``(per_stratum, per_unit)`` propensities. Units of one stratum get bit-identical
    scores, which makes the tie handling of the matching exact. :func:`stratum_propensity`
    is the closed form of the same maximum-likelihood fit (used by default).
    """
    # imported here: sklearn costs about a second to import, and the study check imports
    # this module (distribution_problems) before every run
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    strata = np.asarray(strata, dtype=np.int64)
    treated = np.asarray(treated, dtype=bool)
    n_strata = int(strata.max()) + 1 if strata.size else 0
    counts = np.zeros((n_strata, 2))
    np.add.at(counts, (strata, treated.astype(np.int64)), 1.0)
    rows_s, rows_t = np.nonzero(counts)
    x = np.zeros((rows_s.size, n_strata))
    x[np.arange(rows_s.size), rows_s] = 1.0
    model = LogisticRegression(
        C=np.inf, fit_intercept=False, solver="lbfgs", max_iter=1000, tol=1e-10, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, rows_t, sample_weight=counts[rows_s, rows_t])
    per_stratum = model.predict_proba(np.eye(n_strata))[:, 1]
    return per_stratum, per_stratum[strata]


def stratum_propensity(n_treated: np.ndarray, n_control: np.ndarray) -> np.ndarray:
    """Closed-form propensity of a discrete confounder: the stratum's treated share.

    The unpenalised logistic regression of :func:`propensity_scores` (one-hot stratum, no
    intercept) has one free coefficient per stratum, so its likelihood factorises by stratum
    and each stratum's maximum-likelihood propensity is ``n_T,s / (n_T,s + n_C,s)`` -- the
    value lbfgs converges to (to its tolerance, about 1e-8). A stratum with one arm gets
    exactly 1 or 0 (lbfgs stops close to it). Strata of equal share get bit-identical scores
    (``n / d`` is correctly rounded), so the tie rule of the matching sees them as tied.
    """
    n_treated = np.asarray(n_treated, dtype=float)
    n_control = np.asarray(n_control, dtype=float)
    return n_treated / (n_treated + n_control)


def nearest_weighted_means(
    query: np.ndarray,
    pool_scores: np.ndarray,
    pool_sums: np.ndarray,
    pool_counts: np.ndarray,
    tol: float,
) -> np.ndarray:
    """:func:`nearest_neighbour_means` with pool entries that stand for several units: entry
    j holds ``pool_counts[j]`` units whose outcomes sum to ``pool_sums[j]`` (all at score
    ``pool_scores[j]``). Result: mean outcome of all units at the minimal distance."""
    if pool_scores.size == 0:
        raise ValueError("cannot match: the other arm is empty")
    uniq, inv = np.unique(pool_scores, return_inverse=True)
    sums = np.bincount(inv, weights=pool_sums, minlength=uniq.size)
    cnts = np.bincount(inv, weights=pool_counts, minlength=uniq.size)
    csum = np.concatenate([[0.0], np.cumsum(sums)])
    ccnt = np.concatenate([[0.0], np.cumsum(cnts)])
    pos = np.searchsorted(uniq, query)
    left = np.clip(pos - 1, 0, uniq.size - 1)
    right = np.clip(pos, 0, uniq.size - 1)
    d_left = np.where(pos > 0, np.abs(query - uniq[left]), np.inf)
    d_right = np.where(pos < uniq.size, np.abs(uniq[right] - query), np.inf)
    d_min = np.minimum(d_left, d_right)
    lo = np.searchsorted(uniq, query - d_min - tol, side="left")
    hi = np.searchsorted(uniq, query + d_min + tol, side="right")
    return (csum[hi] - csum[lo]) / (ccnt[hi] - ccnt[lo])


def nearest_neighbour_means(
    query: np.ndarray, pool_scores: np.ndarray, pool_values: np.ndarray, *, tol: float = 1e-12
) -> np.ndarray:
    """1-nearest-neighbour matching on a score, with replacement, AVERAGING TIES.

    For each query score, the pool units at the minimal absolute distance (within ``tol``)
    are all matches and the result is the mean of their values. With a discrete confounder
    a whole stratum shares one score, so this returns the stratum's mean instead of the
    value of whichever unit happens to come first. Vectorised over distinct pool scores
    (sort + prefix sums), O((n_query + n_pool) log n_pool).
    """
    pool_values = np.asarray(pool_values, dtype=float)
    return nearest_weighted_means(
        np.asarray(query, dtype=float),
        np.asarray(pool_scores, dtype=float),
        pool_values,
        np.ones(pool_values.shape),
        tol,
    )


def matched_logistic(
    y: np.ndarray, t: np.ndarray, strata: np.ndarray, estimand: str, tol: float, seed: int
) -> float:
    """APE_m with the fitted logistic propensity and unit-level matching (the reference
    implementation behind ``propensity="logistic"``)."""
    _, codes = np.unique(strata, return_inverse=True)
    _, e = propensity_scores(codes, t, seed=seed)
    y0_for_treated = nearest_neighbour_means(e[t], e[~t], y[~t], tol=tol)
    effect_treated = y[t] - y0_for_treated
    if estimand == "ATT":
        return float(effect_treated.mean())
    y1_for_control = nearest_neighbour_means(e[~t], e[t], y[t], tol=tol)
    return float((effect_treated.sum() + (y1_for_control - y[~t]).sum()) / y.size)


def check_method(estimand: str, propensity: str) -> str:
    """The estimand in upper case (``"ATE"`` or ``"ATT"``); raises on an unknown one or an
    unknown ``propensity`` (``"share"`` or ``"logistic"``)."""
    estimand = estimand.upper()
    if estimand not in {"ATE", "ATT"}:
        raise ValueError(f"estimand must be 'ATE' or 'ATT' (got {estimand!r})")
    if propensity not in {"share", "logistic"}:
        raise ValueError(f"propensity must be 'share' or 'logistic' (got {propensity!r})")
    return estimand


def matched_effects(
    n_t: np.ndarray,
    sum_t: np.ndarray,
    n_c: np.ndarray,
    sum_c: np.ndarray,
    estimand: str,
    tol: float,
) -> np.ndarray:
    """APE_m from per-stratum counts and outcome sums of the two arms, one estimate per row.

    ``n_t``, ``sum_t``, ``n_c``, ``sum_c``: (rows x strata) unit counts (or frequency
    weights) and outcome sums of the treated and control arm. The sums may also carry a
    leading axis of outcomes that share the counts -- ``sum_t``, ``sum_c`` (outcomes x rows x
    strata) with ``n_t``, ``n_c`` (rows x strata) -- and the result is then (outcomes x rows),
    each entry the same, bit for bit, as the two-dimensional call on that outcome's rows:
    what depends on the counts alone (overlap, propensity order, nearest strata) is
    worked out once for all outcomes.

    The propensity is the closed
    form of :func:`stratum_propensity`: every unit of a stratum has the stratum's score, so
    matching a treated unit means taking the mean control outcome of the strata at the
    nearest score (its own stratum, at distance 0, when it has controls; with every stratum
    of EQUAL score, which changes nothing: pooling strata of equal propensity gives the same
    sum as stratifying them, for ATE and ATT alike) -- and likewise for control units. So
    the per-unit sums of the matching collapse to per-stratum sums. A row where every
    present stratum holds both arms is exact stratification, computed directly; the other
    rows match across strata to the nearest propensity (:func:`_nearest_rows`, ties
    averaged within ``tol``). Vectorised over rows. NaN where an arm is empty."""
    n_t, n_c = np.asarray(n_t), np.asarray(n_c)
    sum_t, sum_c = np.asarray(sum_t), np.asarray(sum_c)
    if n_t.ndim != 2 or n_c.shape != n_t.shape:
        raise ValueError("n_t and n_c must be (rows x strata) arrays of one shape")
    if sum_t.shape != sum_c.shape or sum_t.shape[-2:] != n_t.shape or sum_t.ndim not in (2, 3):
        raise ValueError("sum_t and sum_c must be ([outcomes x] rows x strata) like n_t")
    has_t, has_c = n_t > 0, n_c > 0
    present = has_t | has_c
    empty_arm = ~has_t.any(axis=1) | ~has_c.any(axis=1)
    overlap = np.all(~present | (has_t & has_c), axis=1)
    both = has_t & has_c
    with np.errstate(invalid="ignore", divide="ignore"):
        y0 = np.where(both, sum_c / n_c, 0.0)
        y1 = np.where(both, sum_t / n_t, 0.0)
        rest = np.flatnonzero(~overlap & ~empty_arm)
        if rest.size:
            # every row (usual where strata are small): views, not copies of the rows
            pick = slice(None) if rest.size == n_t.shape[0] else rest
            score = n_t[pick] / (n_t[pick] + n_c[pick])
            # both matchings sort the same present strata by the same score: sorted once
            ranked = _rank_rows(score, present[pick], tol)
            y0[..., pick, :] = _nearest_rows(
                score, has_t[pick], has_c[pick], sum_c[..., pick, :], n_c[pick], tol, ranked
            )
            y1[..., pick, :] = _nearest_rows(
                score, has_c[pick], has_t[pick], sum_t[..., pick, :], n_t[pick], tol, ranked
            )
        treated_total = np.where(has_t, sum_t - n_t * y0, 0.0).sum(axis=-1)
        if estimand == "ATT":
            result = treated_total / n_t.sum(axis=1)
        else:
            control_total = np.where(has_c, n_c * y1 - sum_c, 0.0).sum(axis=-1)
            result = (treated_total + control_total) / (n_t.sum(axis=1) + n_c.sum(axis=1))
    return np.where(empty_arm, np.nan, result)


def _nearest_rows(
    score: np.ndarray,
    query: np.ndarray,
    pool: np.ndarray,
    pool_sums: np.ndarray,
    pool_counts: np.ndarray,
    tol: float,
    ranked: tuple[np.ndarray, ...] | None = None,
) -> np.ndarray:
    """Row-wise :func:`nearest_weighted_means`: for every query stratum
    (``query`` mask) of every row, the pooled mean outcome of the row's pool strata whose
    score lies within the minimal distance (+ ``tol``) of its score.

    ``pool_sums`` is (rows x strata) like the other arguments, or (outcomes x rows x
    strata): outcomes sharing the scores and counts, matched to the same strata (the result
    has the shape of ``pool_sums``).

    Each row is sorted by score once; the nearest pool stratum at or left of / right of
    every position comes from running maxima / minima of pool positions, and the pool
    strata tied with it (scores within ``tol`` of their neighbour) from runs of equal
    scores and row-wise prefix sums. Every row must hold a pool stratum.

    A query stratum equally near pool strata on its left and its right is matched to both
    (all pool units at the minimal distance, ties averaged). In :func:`matched_effects` that
    cannot arise: a query stratum holds the pool arm itself (distance 0) or lacks it and
    sits at score 0 or 1, an end of the scale.

    ``ranked``: :func:`_rank_rows` of ``score`` and ``query | pool`` when the caller has it.
    """
    rows, width = score.shape
    if ranked is None:
        ranked = _rank_rows(score, query | pool, tol)
    order, sorted_score, run_start, run_end = ranked
    in_pool = np.take_along_axis(pool, order, axis=1)
    # Gathers along the last axis of (outcomes x) rows x strata arrays go through flat
    # indices shared by the outcomes (take_along_axis builds an index per outcome; the same
    # values, about twice as fast at (11 x 200 x 500))
    gathered = _gather(pool_sums, order)
    sums = np.where(in_pool, gathered, 0.0)
    counts = np.where(in_pool, np.take_along_axis(pool_counts, order, axis=1), 0.0)
    cum_sums, cum_counts = _prefix_sums(sums), _prefix_sums(counts)
    position = np.broadcast_to(np.arange(width), (rows, width))
    # Nearest pool position at or before / at or after each position (-1 / width: none).
    left = np.maximum.accumulate(np.where(in_pool, position, -1), axis=1)
    right = np.minimum.accumulate(np.where(in_pool, position, width)[:, ::-1], axis=1)[:, ::-1]
    row_index = np.arange(rows)[:, None]
    q_sorted = np.take_along_axis(query, order, axis=1)
    has_left, has_right = left >= 0, right < width
    left_c, right_c = np.maximum(left, 0), np.minimum(right, width - 1)
    with np.errstate(invalid="ignore"):
        d_left = np.where(has_left, sorted_score - sorted_score[row_index, left_c], np.inf)
        d_right = np.where(has_right, sorted_score[row_index, right_c] - sorted_score, np.inf)
    d_min = np.minimum(d_left, d_right)
    take_left = has_left & (d_left <= d_min + tol)
    take_right = has_right & (d_right <= d_min + tol)
    l_lo, l_hi = run_start[row_index, left_c], run_end[row_index, left_c] + 1
    r_lo, r_hi = run_start[row_index, right_c], run_end[row_index, right_c] + 1
    same_run = take_left & take_right & (l_lo == r_lo)
    take_right &= ~same_run

    # Only the query positions are worked out (the others stay 0), each as a flat position
    # of the (rows x width + 1) prefix sums: the left window, plus the right one where it
    # is taken (0.0 added elsewhere, as a full-width sum of the two windows would)
    at = np.flatnonzero(q_sorted)
    base = at // width * (width + 1)
    tl, tr = take_left.ravel()[at], take_right.ravel()[at]
    l_lo, l_hi = base + l_lo.ravel()[at], base + l_hi.ravel()[at]
    right_at = np.flatnonzero(tr)
    r_lo, r_hi = (base + r_lo.ravel()[at])[right_at], (base + r_hi.ravel()[at])[right_at]

    def window(cum: np.ndarray) -> np.ndarray:
        flat = cum.reshape(cum.shape[:-2] + (-1,))
        total = np.where(tl, np.take(flat, l_hi, axis=-1) - np.take(flat, l_lo, axis=-1), 0.0)
        right = np.zeros(total.shape)
        right[..., right_at] = np.take(flat, r_hi, axis=-1) - np.take(flat, r_lo, axis=-1)
        return total + right

    total, n = window(cum_sums), window(cum_counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
    out = np.zeros(pool_sums.shape)
    flat = out.reshape(out.shape[:-2] + (-1,))  # a view: written through
    flat[..., (order + np.arange(rows)[:, None] * width).ravel()[at]] = mean
    return out


def _rank_rows(
    score: np.ndarray, present: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each row's present strata sorted by score (absent ones last, at +inf): the order,
    the sorted scores, and the first and last position of the run of tied scores (within
    ``tol`` of their neighbour) that holds each position."""
    rows, width = score.shape
    key = np.where(present, score, np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    sorted_score = np.take_along_axis(key, order, axis=1)
    position = np.broadcast_to(np.arange(width), (rows, width))
    # a run starts where a score is more than tol above the one before it
    with np.errstate(invalid="ignore"):
        new_run = np.ones((rows, width), dtype=bool)
        new_run[:, 1:] = ~(np.abs(sorted_score[:, 1:] - sorted_score[:, :-1]) <= tol)
    run_start = np.maximum.accumulate(np.where(new_run, position, 0), axis=1)
    run_end_flag = np.ones((rows, width), dtype=bool)
    run_end_flag[:, :-1] = new_run[:, 1:]
    run_end = np.minimum.accumulate(np.where(run_end_flag, position, width)[:, ::-1], axis=1)
    run_end = run_end[:, ::-1]
    return order, sorted_score, run_start, run_end


def _prefix_sums(values: np.ndarray) -> np.ndarray:
    """Prefix sums along the last axis with a leading zero (``cum[..., j]``: the sum of the
    first ``j`` values), the cumsum written in place."""
    cum = np.zeros(values.shape[:-1] + (values.shape[-1] + 1,))
    np.cumsum(values, axis=-1, out=cum[..., 1:])
    return cum


def _gather(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[..., r, index[r, j]]`` for every row ``r`` and column ``j``: ``values`` is
    (rows x width) or (outcomes x rows x width), ``index`` (rows x k), the result
    (outcomes x) rows x k."""
    rows, width = values.shape[-2:]
    flat = np.ascontiguousarray(values).reshape(values.shape[:-2] + (rows * width,))
    return np.take(flat, index + np.arange(rows)[:, None] * width, axis=-1)
