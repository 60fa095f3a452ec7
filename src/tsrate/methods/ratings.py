"""Partial orders and ratings (paper Algorithms 4-5) and their block-bootstrap stability.

Rating rule (DESIGN.md "Method decisions", Algorithm 5)
-------------------------------------------------------
Within one metric x perturbation: sort the DISTINCT raw scores best first, split them with
``numpy.array_split`` into ``L`` contiguous groups; a lower-is-better score's rating is the
1-based index of its group, a higher-is-better one's (rating L = best) its mirror
``L + 1 - index``: ``rating(s, higher) == L + 1 - rating(-s, lower)``. Consequences:

* equal scores always share a rating;
* rating 1 holds the LOWEST score, L the highest; fewer distinct scores than levels leave
  the levels at the WORST end empty (2 distinct scores, L = 3: MAE 1 and 2, accuracy 3, 2);
* a single system, or a group where every system has the same score, is rated by its
  absolute value where the metric has an IDEAL value (0 for WRS, APE, PIE): at the ideal ->
  the best level; when the metric's maximum is also known (WRS: ``max_score``), the level
  of the equal-width slice of [ideal, maximum] holding the value; otherwise (no known
  worst value) any other value has no scale and is not rated (null, with a
  ``rating_reason``). Where the metric has no ideal (e.g. MAE in the core) such a group
  cannot be rated either: rating null, with a ``rating_reason``;
* raw scores within floating noise of 0 are stored as 0: |x| <= ``NOISE`` (1e-12) x
  max(1, largest |x| of the metric x perturbation) (:func:`tsrate.methods.noise.snap_to_zero`,
  the one rule for every mart, resamples and interval ends included), and scores within
  that noise of each other are one score (:func:`tsrate.methods.noise.snap_ties`; in every
  resample too), so one model's forecasts rated under two ids share a rating;
* ``higher_is_better`` (core: sign accuracy only) says which end is best: rating L there,
  rating 1 for every other metric.

The paper's Tables 5-6 confirm the DISTINCT-score rule where it differs from splitting all
scores (e.g. WRSC P4 and SMAPE P1; see ``tests/unit/test_ratings.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

# the floating-noise rule lives in tsrate.methods.noise; re-exported here for its users
from tsrate.methods import noise
from tsrate.methods.block_bootstrap import (
    date_multiplicities,
    moving_block_indices,
    too_few_dates,
    withhold_bootstrap,
)
from tsrate.methods.noise import NOISE, snap_rows_to_zero, snap_to_zero  # noqa: F401
from tsrate.methods.separation import bootstrap_separation, separability

__all__ = [
    "NOISE",
    "snap_to_zero",
    "absolute_rating",
    "separability",
    "RATING_COLUMNS",
    "BOOTSTRAP_COLUMNS",
    "assign_ratings",
    "partial_order",
    "ratings_frame",
    "rate_matrix",
    "moving_block_indices",
    "date_multiplicities",
    "too_few_dates",
    "withhold_bootstrap",
    "bootstrap_summary",
    "block_bootstrap_ratings",
]

#: Output columns of :func:`ratings_frame`.
RATING_COLUMNS: list[str] = [
    "metric",
    "perturbation_id",
    "system_id",
    "raw_score",
    "rating",
    "rating_levels",
    "higher_is_better",
    "rank",
    "rating_reason",
]


#: ``rating_reason`` texts (the rating is null, or rated by its absolute value).
REASON_LONE_NO_IDEAL = "only one system rated and the metric has no ideal value: nothing to compare"
REASON_TIED_NO_IDEAL = (
    "all systems tied and the metric has no ideal value: the score does not separate them"
)
REASON_LONE_IDEAL = "only one system rated: rated by its distance from the ideal value"
REASON_TIED_IDEAL = "all systems tied: rated by their distance from the ideal value"
REASON_LONE_NO_SCALE = (
    "only one system rated, away from the ideal value, and the metric has no known worst value:"
    " no scale to rate on"
)
REASON_TIED_NO_SCALE = (
    "all systems tied, away from the ideal value, and the metric has no known worst value:"
    " no scale to rate on"
)

#: Output columns of :func:`block_bootstrap_ratings` (one row per system x perturbation x level).
BOOTSTRAP_COLUMNS: list[str] = [
    "system_id",
    "perturbation_id",
    "raw_score",
    "rating",
    "ci_low",
    "ci_high",
    "rating_level",
    "share",
    "rating_levels",
    "n_resamples",
    "n_valid",
    "separable",
    "separation_reason",
]


def _check_levels(levels: int) -> int:
    if isinstance(levels, bool) or int(levels) != levels or levels < 1:
        raise ValueError(f"levels must be an integer >= 1 (got {levels!r})")
    return int(levels)


def _finite_scores(scores: Mapping[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for system, score in scores.items():
        try:
            value = float(score)
        except (TypeError, ValueError) as err:
            raise ValueError(f"score of system {system!r} is not a number: {score!r}") from err
        if not math.isfinite(value):
            raise ValueError(f"score of system {system!r} is not finite ({score!r})")
        out[system] = value
    return out


def _group_of_distinct_index(d: np.ndarray, n_distinct: np.ndarray, levels: int) -> np.ndarray:
    """0-based ``array_split`` group of the d-th (0-based) of ``n_distinct`` items.

    ``np.array_split(x, L)`` makes the first ``r = D % L`` groups of size ``q + 1`` and the
    rest of size ``q`` (``q = D // L``). Vectorised over arrays of d and D.
    """
    q, r = np.divmod(n_distinct, levels)
    big = r * (q + 1)
    safe_q = np.where(q > 0, q, 1)
    return np.where(d < big, d // (q + 1), r + (d - big) // safe_q)


def _negated(value):  # -value (a number or an array); None stays None
    return None if value is None else -np.asarray(value, dtype=float)


def interval_holding_the_point(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """(2 x n) interval ends: the percentile interval ``[low, high]`` of the resampled
    published estimator, extended to the published ``point`` where it lies outside.

    Why: a worst case over distributions (APE = max |APE_m|, PIE = max PIE %) near 0 is
    biased upward in the bootstrap (a maximum of noisy absolute values grows with the
    noise), so every resample can exceed the published score and the percentile interval
    miss its own number. It is widened to the number, never shifted (an end equal to the
    point shows where); NaN ends (no valid resample) stay NaN."""
    point = np.asarray(point, dtype=float)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    known = np.isfinite(point) & np.isfinite(low) & np.isfinite(high)
    return np.vstack(
        [np.where(known, np.fmin(low, point), low), np.where(known, np.fmax(high, point), high)]
    )


def absolute_rating(
    value: float,
    levels: int,
    ideal: float,
    maximum: float | None = None,
    *,
    higher_is_better: bool = False,
) -> int | None:
    """The rating a score earns by its absolute value (lone system, or all systems tied).

    ``maximum`` is the known WORST value of the metric (WRS: ``max_score``), if any.
    Lower-is-better metrics (rating 1 = best): at the ideal (within :data:`NOISE`) -> 1; with
    a known worst value: the index (1-based) of the equal-width slice of [ideal, worst] holding
    the value, ``ceil(L * |value - ideal| / |worst - ideal|)`` clipped to 1..L (the worst value
    earns L); without one (MAE, MSE, CRPS, ...), a value away from the ideal has no scale to be
    rated on -> ``None``. Higher-is-better metrics (rating L = best) get ``L + 1 - that``.
    """
    levels = _check_levels(levels)
    distance = abs(float(value) - float(ideal))
    if distance <= NOISE * max(1.0, abs(float(ideal))):
        level = 1
    elif maximum is None or not math.isfinite(float(maximum)) or float(maximum) == float(ideal):
        return None
    else:
        fraction = distance / abs(float(maximum) - float(ideal))
        level = int(min(levels, max(1, math.ceil(levels * fraction - 1e-9))))
    return levels + 1 - level if higher_is_better else level


def assign_ratings(
    scores: Mapping[str, float],
    levels: int = 3,
    *,
    ideal: float | None = 0.0,
    maximum: float | None = None,
    higher_is_better: bool = False,
) -> dict[str, int | None]:
    """Rate systems on ``levels`` levels from their raw scores (Algorithm 5).

    Distinct scores are sorted ascending and split with ``numpy.array_split`` into ``levels``
    contiguous groups; rating = group index + 1 (1 = lowest score = best). With
    ``higher_is_better``: ``L + 1 -`` the rating of the negated scores (ideal and maximum
    negated too), so the best fill level L. Equal scores share a rating. A single system, or systems that all share one score (one distinct value), are
    rated by their absolute value (:func:`absolute_rating`) when the metric has an ``ideal``
    (default 0): 1 at the ideal; with a known ``maximum`` the slice of [ideal, maximum]
    holding it; otherwise ``None`` (no scale to rate on) -- never "1 = best" merely because
    nobody differs. With ``ideal=None``
    (a metric without an ideal value) such systems get ``None``. An empty mapping gives
    ``{}``. Raises ``ValueError`` for ``levels < 1`` or a non-finite score (naming the
    system). Keys keep the input order.
    """
    levels = _check_levels(levels)
    values = _finite_scores(scores)
    if higher_is_better:  # the mirror of the lower-is-better rule, never a copy of it
        bounds = {"ideal": _negated(ideal), "maximum": _negated(maximum)}
        low = assign_ratings({s: -v for s, v in values.items()}, levels, **bounds)
        return {s: None if r is None else levels + 1 - r for s, r in low.items()}
    if not values:
        return {}
    distinct = np.unique(np.fromiter(values.values(), dtype=float))
    if len(distinct) == 1:
        if ideal is None:
            return dict.fromkeys(values, None)
        return {
            system: absolute_rating(
                score, levels, ideal, maximum, higher_is_better=higher_is_better
            )
            for system, score in values.items()
        }
    groups = np.array_split(distinct, levels)
    rating_of: dict[float, int] = {}
    for index, group in enumerate(groups):
        for value in group:
            rating_of[float(value)] = index + 1
    return {system: rating_of[score] for system, score in values.items()}


def partial_order(scores: Mapping[str, float]) -> list[tuple[str, float, int]]:
    """Systems sorted by score ascending (Algorithm 4), with 1-based ranks.

    Ties share the smallest rank of the tie ("min" method: 1, 2, 2, 4) and are listed in
    system-id order. Non-finite scores raise ``ValueError``.
    """
    values = _finite_scores(scores)
    ordered = sorted(values.items(), key=lambda item: (item[1], str(item[0])))
    out: list[tuple[str, float, int]] = []
    previous: float | None = None
    rank = 0
    for position, (system, score) in enumerate(ordered, start=1):
        if previous is None or score != previous:
            rank = position
            previous = score
        out.append((system, score, rank))
    return out


def ratings_frame(
    scores: pd.DataFrame,
    levels: int,
    higher_is_better: Mapping[str, bool],
    *,
    ideal: Mapping[str, float | None] | None = None,
    maximum_column: str | None = None,
    spread_column: str | None = None,
) -> pd.DataFrame:
    """Ratings for every metric x perturbation of a long score table.

    ``scores`` has one row per (metric, perturbation_id, system_id) with ``raw_score``.
    Each (metric, perturbation_id) is rated independently with :func:`assign_ratings`;
    ``rank`` is the :func:`partial_order` rank (1 = lowest score, ties share the min rank).
    ``higher_is_better`` must name every metric present (``ValueError`` otherwise): it is
    copied into the output and picks the best end (rating L where higher is better).

    Raw scores within floating noise of 0 are stored as 0 first (:func:`snap_to_zero`, per
    metric x perturbation), and scores within that noise of each other as one (snap_ties).

    ``ideal``: metric -> its ideal raw score (e.g. 0 for WRS, APE, PIE), or None / absent
    when the metric has none (the default, None: no metric has one). A lone system, or an
    all-tied group, is rated by its absolute value where the metric has an ideal
    (:func:`absolute_rating`, ``maximum_column`` the known maximum, e.g. WRS's ``max_score``),
    else gets a null rating; ``rating_reason`` then says why (null for ordinary ratings).

    ``spread_column``: per-score spreads (e.g. over treatment draws); adds ``separable`` /
    ``separation_reason`` (:func:`separability`; null where the spread is unknown).

    Returns :data:`RATING_COLUMNS` (``rating`` is a nullable Int64), sorted by metric,
    perturbation_id, rank, system_id, plus ``separable``, ``separation_reason`` with a spread.
    """
    levels = _check_levels(levels)
    missing = {"metric", "perturbation_id", "system_id", "raw_score"} - set(scores.columns)
    for extra in (maximum_column, spread_column):
        if extra is not None and extra not in scores.columns:
            missing.add(extra)
    if missing:
        raise ValueError(f"scores lacks columns {sorted(missing)}")
    if scores.duplicated(["metric", "perturbation_id", "system_id"]).any():
        raise ValueError("scores must have one row per (metric, perturbation_id, system_id)")
    unknown = sorted(set(scores["metric"]) - set(higher_is_better))
    if unknown:
        raise ValueError(f"higher_is_better does not say how to read metrics {unknown}")
    ideals = dict(ideal or {})
    records: list[dict[str, object]] = []
    for (metric, perturbation), block in scores.groupby(["metric", "perturbation_id"], sort=True):
        snapped = noise.snap_ties(snap_to_zero(block["raw_score"].to_numpy(dtype=float)))
        mapping = dict(zip(block["system_id"], snapped, strict=True))
        metric_ideal = ideals.get(metric)
        maximum = None
        if maximum_column is not None:
            maxima = block[maximum_column].astype(float)
            maximum = float(maxima.max()) if maxima.notna().any() else None
        try:
            rating = assign_ratings(
                mapping,
                levels,
                ideal=metric_ideal,
                maximum=maximum,
                higher_is_better=bool(higher_is_better[metric]),
            )
            order = partial_order(mapping)
        except ValueError as err:
            raise ValueError(f"metric {metric!r}, perturbation {perturbation!r}: {err}") from err
        reason = None
        if len(set(mapping.values())) == 1:
            lone = len(mapping) == 1
            if metric_ideal is None:
                reason = REASON_LONE_NO_IDEAL if lone else REASON_TIED_NO_IDEAL
            elif any(value is None for value in rating.values()):
                reason = REASON_LONE_NO_SCALE if lone else REASON_TIED_NO_SCALE
            else:
                reason = REASON_LONE_IDEAL if lone else REASON_TIED_IDEAL
        separable: dict[str, object] = {}
        why: dict[str, object] = {}
        if spread_column is not None:
            flags, texts = separability(
                list(block["system_id"]), snapped, block[spread_column].to_numpy(dtype=float)
            )
            separable = dict(zip(block["system_id"], flags, strict=True))
            why = dict(zip(block["system_id"], texts, strict=True))
        for system, score, rank in order:
            record = {
                "metric": metric,
                "perturbation_id": perturbation,
                "system_id": system,
                "raw_score": score,
                "rating": rating[system],
                "rating_levels": levels,
                "higher_is_better": bool(higher_is_better[metric]),
                "rank": rank,
                "rating_reason": reason,
            }
            if spread_column is not None:
                record["separable"] = separable[system]
                record["separation_reason"] = why[system]
            records.append(record)
    columns = list(RATING_COLUMNS)
    types: dict[str, str] = {
        "raw_score": "float64",
        "rating": "Int64",
        "rating_levels": "int64",
        "higher_is_better": "bool",
        "rank": "int64",
        "rating_reason": "object",
    }
    if spread_column is not None:
        columns += ["separable", "separation_reason"]
        types.update({"separable": "boolean", "separation_reason": "object"})
    out = pd.DataFrame.from_records(records, columns=columns)
    return out.astype(types)


# --------------------------------------------------------------------------------------
# Vectorised rating and the circular block bootstrap
# --------------------------------------------------------------------------------------


def rate_matrix(
    values: np.ndarray,
    levels: int,
    *,
    ideal: float | None = 0.0,
    maximum: np.ndarray | None = None,
    higher_is_better: bool = False,
) -> np.ndarray:
    """:func:`assign_ratings` applied to every row of a (rows x systems) matrix at once.

    NaN entries are left out of their row's rating and get rating 0. Rows with exactly one
    distinct finite value (a lone system, or all tied) follow :func:`absolute_rating` with
    ``ideal`` and the per-column known worst value ``maximum`` (NaN / None: unknown); with
    ``ideal=None`` they get 0 (not rated), as the null rating of :func:`ratings_frame`.
    ``higher_is_better``: the mirrored rule, as :func:`assign_ratings`. Returns int64.
    """
    levels = _check_levels(levels)
    x = np.asarray(values, dtype=float)
    if x.ndim != 2:
        raise ValueError("values must be a 2-D array (rows x systems)")
    n_rows, n_sys = x.shape
    ratings = np.zeros((n_rows, n_sys), dtype=np.int64)
    if n_sys == 0:
        return ratings
    # scores within floating noise of each other are one score (snap_ties), as published
    x = noise.snap_row_ties(x)
    if higher_is_better:  # the mirror of the lower-is-better rule (undone at the end)
        x, ideal, maximum = -x, _negated(ideal), _negated(maximum)
    order = np.argsort(x, axis=1, kind="stable")  # NaN last
    xs = np.take_along_axis(x, order, axis=1)
    finite = np.isfinite(xs)
    new = np.ones_like(finite)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]
    new &= finite
    distinct_index = np.cumsum(new, axis=1) - 1
    n_distinct = new.sum(axis=1, keepdims=True)
    group = _group_of_distinct_index(distinct_index, n_distinct, levels) + 1
    if ideal is None:
        single = np.zeros_like(group)
    else:
        worst = np.full(n_sys, np.nan) if maximum is None else np.asarray(maximum, dtype=float)
        worst = np.broadcast_to(worst[order], xs.shape) if worst.ndim == 1 else worst
        distance = np.abs(xs - float(ideal))
        span = np.abs(worst - float(ideal))
        with np.errstate(invalid="ignore", divide="ignore"):
            sliced = np.clip(np.ceil(levels * distance / span - 1e-9), 1, levels)
        known = np.isfinite(span) & (span > 0)
        single = np.where(known, np.nan_to_num(sliced, nan=levels), 0).astype(np.int64)
        single = np.where(distance <= NOISE * max(1.0, abs(float(ideal))), 1, single)
    sorted_ratings = np.where(n_distinct == 1, single, group)
    sorted_ratings = np.where(finite, sorted_ratings, 0)
    np.put_along_axis(ratings, order, sorted_ratings, axis=1)
    return np.where(ratings > 0, levels + 1 - ratings, 0) if higher_is_better else ratings


def _dense_codes(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for integer codes in ``0..size-1``, by
    counting instead of sorting (the same arrays)."""
    present = np.flatnonzero(np.bincount(codes, minlength=size))
    rank = np.zeros(size, dtype=np.int64)
    rank[present] = np.arange(present.size)
    return present, rank[codes]


def _sorted_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, code of every row): ``np.unique(..., return_inverse=True)``
    computed by hashing (and, for a categorical, on its categories only), so millions of
    rows of strings or dates cost one pass."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = np.asarray(values.cat.categories, dtype=object)
        codes = values.cat.codes.to_numpy().astype(np.int64)
        if (codes < 0).any():
            raise ValueError(f"{values.name} has missing values")
        used, _ = _dense_codes(codes, categories.size)
        order = used[np.argsort(categories[used], kind="stable")]
        position = np.full(categories.size, -1, dtype=np.int64)
        position[order] = np.arange(order.size)
        return categories[order], position[codes]
    codes, uniques = pd.factorize(values, sort=True)
    return np.asarray(uniques, dtype=object), codes.astype(np.int64)


def bootstrap_summary(
    groups: pd.DataFrame,
    point: np.ndarray,
    boot: np.ndarray,
    levels: int,
    confidence: float,
    *,
    ideal: float | None = 0.0,
    maximum: np.ndarray | None = None,
    higher_is_better: bool = False,
    metric: str = "score",
) -> pd.DataFrame:
    """The long :data:`BOOTSTRAP_COLUMNS` frame from point scores and resampled scores.

    ``groups`` has ``system_id`` and ``perturbation_id`` per column of ``point`` (G,) and
    ``boot`` (resamples x G; NaN = undefined in that resample). Systems are rated per
    perturbation with :func:`rate_matrix` on the point scores and on every resample;
    ``ci_low``/``ci_high`` are percentile bounds at ``confidence``, extended to the point
    score where it lies outside them (:func:`interval_holding_the_point`); ``share`` the
    fraction of the resamples that RATED the system giving each rating level (a resample
    leaving it unrated -- lone or all tied with no scale -- is not counted, the suites'
    rule of tsrate.suites.intervals.stability_shares), so shares sum to 1 over levels
    wherever some resample rated it (NaN where none did). As in :func:`ratings_frame`, noise of
    0 is 0 (:func:`snap_to_zero` per perturbation; interval ends on the largest |point|, |end|)
    and a perturbation's worst value is its columns' largest known ``maximum`` (NaN: unknown).
    ``separable``/``separation_reason``: :func:`tsrate.methods.separation.bootstrap_separation`
    on the snapped resamples (the paired bootstrap: one set of dates for every column).
    """
    levels = _check_levels(levels)
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    point = np.asarray(point, dtype=float)
    boot = np.array(boot, dtype=float, copy=True)
    n_groups = len(groups)
    if point.shape != (n_groups,) or boot.ndim != 2 or boot.shape[1] != n_groups:
        raise ValueError("point must be (groups,) and boot (resamples x groups)")
    pert_of_group = groups["perturbation_id"].to_numpy()
    point_rating = np.zeros(n_groups, dtype=np.int64)
    boot_rating = np.zeros(boot.shape, dtype=np.int64)
    maxima = np.full(n_groups, np.nan) if maximum is None else np.asarray(maximum, dtype=float)
    for pert in pd.unique(pert_of_group):
        cols = np.flatnonzero(pert_of_group == pert)
        boot[:, cols] = snap_rows_to_zero(boot[:, cols])
        worst = np.full(cols.size, np.fmax.reduce(maxima[cols]))  # NaN: none known
        rule = {"ideal": ideal, "maximum": worst, "higher_is_better": higher_is_better}
        point_rating[cols] = rate_matrix(snap_to_zero(point[cols])[None, :], levels, **rule)[0]
        boot_rating[:, cols] = rate_matrix(boot[:, cols], levels, **rule)

    valid = np.isfinite(boot)
    n_valid = valid.sum(axis=0)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        ci = np.full((2, n_groups), np.nan)
        ok = n_valid > 0
        if ok.any():
            ci[:, ok] = np.nanquantile(boot[:, ok], [tail, 1.0 - tail], axis=0)
    ci = interval_holding_the_point(point, ci[0], ci[1])
    for pert in pd.unique(pert_of_group):
        cols = np.flatnonzero(pert_of_group == pert)
        ends = np.concatenate([point[cols], ci[:, cols].ravel()])
        scale = float(np.max(np.abs(ends[np.isfinite(ends)]), initial=0.0))
        ci[:, cols] = snap_to_zero(ci[:, cols], scale=scale)
    separable, why = bootstrap_separation(groups, point, boot, confidence, metric)
    level_range = np.arange(1, levels + 1)
    counts = (boot_rating[:, :, None] == level_range[None, None, :]).sum(axis=0)
    rated = (boot_rating > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = counts / rated[:, None]

    out = pd.DataFrame(
        {
            "system_id": np.repeat(groups["system_id"].to_numpy(), levels),
            "perturbation_id": np.repeat(pert_of_group, levels),
            "raw_score": np.repeat(point, levels),
            "rating": np.repeat(point_rating, levels),
            "ci_low": np.repeat(ci[0], levels),
            "ci_high": np.repeat(ci[1], levels),
            "rating_level": np.tile(level_range, n_groups),
            "share": shares.ravel(),
            "rating_levels": levels,
            "n_resamples": int(boot.shape[0]),
            "n_valid": np.repeat(n_valid, levels),
            "separable": np.repeat(np.array(separable, dtype=object), levels),
            "separation_reason": np.repeat(np.array(why, dtype=object), levels),
        }
    )
    out = out.sort_values(["perturbation_id", "system_id", "rating_level"], kind="mergesort")
    return out.reset_index(drop=True)[BOOTSTRAP_COLUMNS]


def block_bootstrap_ratings(
    values: pd.DataFrame,
    levels: int,
    n_resamples: int,
    block_length: int,
    seed: int,
    statistic: str = "mean",
    *,
    confidence: float = 0.95,
    ideal: float | None = 0.0,
    higher_is_better: bool = False,
    metric: str = "score",
) -> pd.DataFrame:
    """Stability of ratings under a circular block bootstrap over window dates.

    ``values`` has columns ``system_id, perturbation_id, window_end_date, value`` (several
    rows per date are fine, e.g. one per ticker; NaN values are ignored). The ordered
    distinct ``window_end_date`` values of the whole frame (rows with a NaN value included) are resampled with
    :func:`moving_block_indices` (circular, seeded by ``seed``); the SAME resampled dates are used for
    every system and perturbation, so each resample is a coherent alternative history. A
    date drawn m times contributes all its rows m times. Per resample the statistic
    (``"mean"`` or ``"std"``, sample std with ddof=1) is recomputed per system x perturbation
    and systems are re-rated per perturbation with the rule of :func:`assign_ratings`
    (a system with no value in a resample is left out of that resample's rating).

    Returns LONG format, :data:`BOOTSTRAP_COLUMNS`, one row per system x perturbation x rating
    level (1..levels): ``raw_score`` (statistic on the original data), ``rating`` (its rating
    on the original data), ``ci_low``/``ci_high`` (percentile interval at ``confidence`` of
    the bootstrap statistic), ``rating_level``, ``share`` (fraction of the resamples rating
    the system that give that rating; shares sum to 1 over levels), ``rating_levels``,
    ``n_resamples`` and ``n_valid`` (resamples where the statistic was defined). Cost: one
    matrix product. With fewer than two blocks of dates (:func:`too_few_dates`) nothing is
    resampled: no resample is drawn or summarised (a 0 x dates multiplicity matrix), so the
    frame holds the point score and rating only, the rest null with the reason as
    ``separation_reason`` (:func:`withhold_bootstrap`).
    """
    levels = _check_levels(levels)
    if statistic not in {"mean", "std"}:
        raise ValueError("statistic must be 'mean' or 'std'")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    missing = {"system_id", "perturbation_id", "window_end_date", "value"} - set(values.columns)
    if missing:
        raise ValueError(f"values lacks columns {sorted(missing)}")
    frame = values[["system_id", "perturbation_id", "window_end_date", "value"]].copy()
    frame["value"] = frame["value"].astype(float)
    # every row's date, valued or not: the run's histories, the same for every metric
    dates, date_idx = _sorted_codes(frame["window_end_date"])
    finite = np.isfinite(frame["value"].to_numpy())
    frame, date_idx = frame.loc[finite], date_idx[finite]
    if frame.empty:
        raise ValueError("values has no finite value to bootstrap")

    pert_values, pert_idx = _sorted_codes(frame["perturbation_id"])
    system_values, system_idx = _sorted_codes(frame["system_id"])
    # Groups: the (perturbation, system) pairs present, sorted by perturbation then system.
    pair = pert_idx * system_values.size + system_idx
    present, group_idx = _dense_codes(pair, pert_values.size * system_values.size)
    groups = pd.DataFrame(
        {
            "perturbation_id": pert_values[present // system_values.size],
            "system_id": system_values[present % system_values.size],
        }
    )
    n_dates, n_groups = dates.size, len(groups)

    v = frame["value"].to_numpy()
    # Accumulate values centred on their group's overall mean: the mean is shifted back
    # afterwards and the variance is shift-invariant, so large offsets (e.g. MASE ~ 1e3)
    # do not cost precision in the sum-of-squares formula.
    centre = np.bincount(group_idx, weights=v, minlength=n_groups) / np.bincount(
        group_idx, minlength=n_groups
    )
    vc = v - centre[group_idx]
    # (date x group) sums: bincount over the flat cell adds in row order, like np.add.at.
    cell = date_idx * n_groups + group_idx
    size = n_dates * n_groups
    s1 = np.bincount(cell, weights=vc, minlength=size).reshape(n_dates, n_groups)
    s2 = np.bincount(cell, weights=vc * vc, minlength=size).reshape(n_dates, n_groups)
    cnt = np.bincount(cell, minlength=size).reshape(n_dates, n_groups).astype(float)

    withheld = too_few_dates(n_dates, block_length)
    if withheld is None:
        mult = date_multiplicities(n_dates, int(block_length), int(n_resamples), seed)
    else:  # no resample drawn (0 x dates): the point score and rating only
        mult = np.zeros((0, n_dates))

    def stat(w: np.ndarray) -> np.ndarray:
        n = w @ cnt
        sum1 = w @ s1
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sum1 / n
            if statistic == "mean":
                return np.where(n > 0, mean + centre, np.nan)
            var = (w @ s2 - n * mean * mean) / (n - 1)
            return np.where(n > 1, np.sqrt(np.maximum(var, 0.0)), np.nan)

    point = stat(np.ones((1, n_dates)))[0]
    boot = stat(mult)  # (resamples x groups)

    rule = {"ideal": ideal, "higher_is_better": higher_is_better, "metric": metric}
    out = bootstrap_summary(groups, point, boot, levels, confidence, **rule)
    return out if withheld is None else withhold_bootstrap(out, withheld)
