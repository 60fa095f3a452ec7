"""Robustness scores recomputed on block-bootstrap resamples of the window dates.

The rating-stability mart (``rating_stability``) asks how firm a rating is when the windows
had been different. Overlapping stride-1 windows are not independent, so whole blocks of
consecutive window dates are resampled (:func:`tsrate.methods.ratings.date_multiplicities`) and
every metric is recomputed on each resample with the date's multiplicity as a frequency
weight: a date drawn m times counts all its windows m times, exactly as if the rows had
been copied m times. This module does that for the robustness metrics:

* :func:`wrs_resampled` -- the Weighted Rejection Score (paper eq. 1) from weighted group
  summaries: per resample the pooled two-sided Student t-test of every pair is recomputed
  from n, mean and variance of the resampled windows, vectorised over resamples and pairs.
* :func:`effects_resampled` -- APE_o, APE_m and PIE % (paper eqs. 2-3) per distribution
  and treatment with the closed-form stratified matching of :func:`tsrate.methods.causal.matching.matched_effects` (the
  confounder's propensity is the stratum's treated share), from weighted per-stratum counts
  and outcome sums; the treatment draws (``treatment_assignments``) stay fixed, only the
  windows are resampled.
* :func:`aggregate_distributions` -- the worst case over the distributions of a confounder,
  per resample, as ``perturbation_effect_scores`` does on the original data.

With all multiplicities equal to one, each function reproduces the published score
(tests compare with :func:`tsrate.methods.wrs.weighted_rejection_pairs` and
:func:`tsrate.methods.causal.estimators.grid_perturbation_effects`, and integer multiplicities with those
functions applied to physically replicated rows).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsrate.methods.causal.matching import check_method, matched_effects
from tsrate.methods.wrs import (
    WRS_DECIMALS,
    pair_indices,
    refuse_null_groups,
    t_ppf,
    validate_confidence_levels,
)

__all__ = ["date_positions", "wrs_resampled", "effects_resampled", "aggregate_distributions"]

#: Resamples processed at once (bounds memory: resamples x pairs arrays).
CHUNK = 32
#: Pairs of groups tested at once per chunk of resamples (whole systems x perturbations; a
#: larger one alone): bounds the (resamples x pairs) temporaries of :func:`wrs_resampled`.
PAIR_SLICE = 16384
#: Most combinations of key values numbered by one int64 key in :func:`wrs_resampled`'s
#: grouping (more: the key texts are grouped as they are).
COMBINED_KEYS = 2.0**62
#: (resample, group) entries checked at once for a resample that draws one value only
#: (bounds memory: entries x dates arrays).
CANDIDATES = 4096
#: Stacked (stratum x label) cells per matrix product of :func:`effects_resampled` (bounds
#: memory: dates x columns and resamples x columns arrays).
CHUNK_COLUMNS = 8192
#: Fewest columns of a product of :func:`effects_resampled` (narrower ones are padded with
#: zero columns): OpenBLAS computes a product of fewer than 8 columns by another kernel,
#: whose dot products can differ in the last bit from those of a wider product.
MIN_COLUMNS = 64
#: Every slab of a product of :func:`effects_resampled` starts at a multiple of this many
#: columns and is padded with zero columns to one: OpenBLAS's kernels work on blocks of
#: columns, and a column's dot product can differ in the last bit with its place in a
#: block. Aligned, a slab's values are those of the slab multiplied alone, whatever its
#: neighbours (other systems, outcomes or distributions of the pass) and BLAS's threads.
SLAB_ALIGN = 16


def date_positions(values: pd.Series | np.ndarray, dates: np.ndarray) -> np.ndarray:
    """Position of every value in the sorted ``dates`` (datetime64[D]); raises if absent."""
    days = pd.to_datetime(np.asarray(values)).to_numpy().astype("datetime64[D]")
    dates = np.asarray(dates).astype("datetime64[D]")
    pos = np.searchsorted(dates, days)
    inside = pos < dates.size
    found = inside & (dates[np.minimum(pos, max(dates.size - 1, 0))] == days)
    if not found.all():
        raise ValueError(f"window date {days[~found][0]} is not among the resampled dates")
    return pos.astype(np.int64)


def wrs_resampled(
    window_errors: pd.DataFrame,
    group_column: str,
    confidence_levels: pd.DataFrame,
    within_column: str | None,
    dates: np.ndarray,
    multiplicities: np.ndarray,
    outcome: str = "max_abs_residual",
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """WRS per system x perturbation on the original windows and on every resample.

    ``window_errors``: rows with ``system_id, perturbation_id, window_end_date``,
    ``group_column`` (and ``within_column``) and a finite ``outcome``; ``dates``: the sorted
    distinct window dates that index the columns of ``multiplicities`` (resamples x dates).
    The analyses are those of :func:`tsrate.methods.wrs.weighted_rejection_pairs` (every pair of
    groups, or pairs sharing ``within_column``), same test (pooled Student, two-sided,
    ``p < 1 - confidence``), same weights; the score is the sum over pairs and levels,
    rounded to :data:`tsrate.methods.wrs.WRS_DECIMALS`.

    A group is constant in a resample when every window drawn holds one value (so it is in
    every resample of a constant group, and can be in some of a group that is not); it is
    then tested as :func:`tsrate.methods.wrs.student_t_test` tests a constant group
    (checked exactly): variance 0 and that value as its mean. Two such groups at the same
    value are not rejected (t = 0, p = 1, where ``scipy.stats.ttest_ind`` returns NaN), at
    different values rejected at every level, and the resample counts as a valid one; the
    floating residue of the weighted sums must not decide it (it rejected equal constants).

    Returns ``(keys, point, boot)``: ``keys`` one row per system x perturbation with at
    least one pair (sorted), ``point`` (keys,) the score on the original data, ``boot``
    (resamples x keys), NaN where a group has fewer than two resampled windows.
    """
    needed = ["system_id", "perturbation_id", "window_end_date", group_column, outcome]
    if within_column is not None:
        needed.append(within_column)
    missing = set(needed) - set(window_errors.columns)
    if missing:
        raise ValueError(f"window_errors lacks columns {sorted(missing)}")
    levels = validate_confidence_levels(confidence_levels)
    y = window_errors[outcome].to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"window_errors has NaN/infinite {outcome!r} values")
    keys = ["system_id", "perturbation_id"]
    if within_column is not None:
        keys.append(within_column)
    group_keys = [*keys, group_column]
    # as weighted_rejection_pairs: a null group is refused (cast to text it would be "None")
    refuse_null_groups(window_errors, [group_column, within_column])
    gid, groups = _group_codes(window_errors, group_keys)
    if within_column is not None:
        spans = groups.groupby(group_column)[within_column].nunique()
        if (spans > 1).any():
            raise ValueError(
                f"{group_column} values {sorted(spans[spans > 1].index)} appear under more "
                f"than one {within_column}"
            )
    n_groups = len(groups)
    day = date_positions(window_errors["window_end_date"], dates)
    n_dates = np.asarray(dates).size

    counts = np.bincount(gid, minlength=n_groups).astype(float)
    centre = np.bincount(gid, weights=y, minlength=n_groups) / counts
    vmin = np.full(n_groups, np.inf)
    vmax = np.full(n_groups, -np.inf)
    np.minimum.at(vmin, gid, y)
    np.maximum.at(vmax, gid, y)
    constant = vmin == vmax
    yc = y - centre[gid]
    cell = day * n_groups + gid
    size = n_dates * n_groups
    cnt = np.bincount(cell, minlength=size).reshape(n_dates, n_groups).astype(float)
    s1 = np.bincount(cell, weights=yc, minlength=size).reshape(n_dates, n_groups)
    s2 = np.bincount(cell, weights=yc * yc, minlength=size).reshape(n_dates, n_groups)
    # (dates x groups) smallest and largest value of every cell (+/-inf: no window), to
    # tell exactly whether a resample draws one value only from a group
    cell_min = np.full(size, np.inf)
    cell_max = np.full(size, -np.inf)
    np.minimum.at(cell_min, cell, y)
    np.maximum.at(cell_max, cell, y)
    cell_min = cell_min.reshape(n_dates, n_groups)
    cell_max = cell_max.reshape(n_dates, n_groups)
    # the largest squared deviation of a group from its mean: a resample whose computed
    # variance is below a millionth of it may be constant (floating residue is ~1e-13 of
    # it) and is checked exactly; above it, it has two values
    deviation = np.zeros(n_groups)
    np.maximum.at(deviation, gid, yc * yc)
    suspect = 1e-6 * deviation

    # Pairs: groups sharing the keys (rows of `groups` are sorted by them).
    block = groups[keys[0]].astype(str)
    for key in keys[1:]:
        block = block + "\x1f" + groups[key].astype(str)
    block = block.to_numpy()
    new_block = np.ones(n_groups, dtype=bool)
    new_block[1:] = block[1:] != block[:-1]
    starts = np.flatnonzero(new_block)
    sizes = np.diff(np.append(starts, n_groups))
    ia, ib = pair_indices(starts, sizes)
    # Each pair belongs to a system x perturbation: score = sum over its pairs.
    sp = groups["system_id"] + "\x1f" + groups["perturbation_id"]
    sp_codes, sp_values = pd.factorize(sp.to_numpy()[ia], sort=True)
    out_keys = pd.DataFrame(
        [v.split("\x1f") for v in sp_values], columns=["system_id", "perturbation_id"]
    )
    alpha = 1.0 - levels["confidence"].to_numpy(dtype=float)
    weight = levels["weight"].to_numpy(dtype=float)
    block_starts = np.flatnonzero(np.diff(sp_codes, prepend=-1))
    # the pairs in slices of whole systems x perturbations, about PAIR_SLICE pairs each, so
    # every (resamples x pairs) temporary of a slice stays small (cache-sized, reused)
    bounds = np.append(block_starts, ia.size)
    slices = []
    k0 = 0
    while k0 < block_starts.size:
        k1 = k0 + 1
        while k1 < block_starts.size and bounds[k1 + 1] - bounds[k0] <= PAIR_SLICE:
            k1 += 1
        slices.append((k0, k1))
        k0 = k1
    w_all = np.asarray(multiplicities, dtype=float)
    if w_all.ndim != 2 or w_all.shape[1] != n_dates:
        raise ValueError("multiplicities must be (resamples x dates)")
    if not np.array_equal(w_all, np.round(w_all)) or (w_all < 0).any():
        raise ValueError("multiplicities must be counts (non-negative integers)")
    # dof = n_a + n_b - 2 is an integer below twice the largest resampled group size:
    # tabulate the two-sided critical |t| of every level once per dof.
    largest = float(np.max(w_all.max(axis=0, initial=1.0) @ cnt, initial=1.0))
    # Redundant with initial=1.0 above (every date counts at least once, so the original
    # group sizes are covered); a larger table changes no critical value.
    largest = max(largest, float(cnt.sum(axis=0).max(initial=1.0)))
    top_dof = int(2 * largest)
    table = np.full((top_dof + 1, alpha.size), np.nan)
    table[1:] = t_ppf(1.0 - alpha[None, :] / 2.0, np.arange(1, top_dof + 1)[:, None])

    columns = [np.ascontiguousarray(table[:, level]) for level in range(alpha.size)]

    def rejections(t: np.ndarray, dof: np.ndarray) -> np.ndarray:
        """The weight of the levels whose two-sided critical |t| (at the pair's dof; NaN,
        never exceeded, for dof < 1) ``t`` exceeds, summed level by level. Most pairs are
        decided by the smallest and largest critical value of the dofs in ``dof`` (exactly:
        the bounds are taken from the table); the others look their dof up."""
        index = np.clip(np.nan_to_num(dof), 0, top_dof).astype(np.int64)
        low, high = int(index.min(initial=top_dof)), int(index.max(initial=0))
        total = np.zeros(t.shape)
        for critical, level_weight in zip(columns, weight, strict=True):
            span = critical[max(low, 1) : high + 1]
            if low < 1 or span.size == 0 or np.isnan(span).any():
                exceeded = t > critical[index]
            else:
                exceeded = t > span.max()
                unsure = ~exceeded & (t > span.min())
                exceeded[unsure] = t[unsure] > critical[index[unsure]]
            np.add(total, level_weight, out=total, where=exceeded)
        return total

    def scores(w: np.ndarray) -> np.ndarray:
        n = w @ cnt
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_c = (w @ s1) / n
            var = np.maximum((w @ s2 - n * mean_c * mean_c) / (n - 1), 0.0)
        mean = np.where(constant, vmin, mean_c + centre)
        var = np.where(constant, 0.0, var)
        # a group constant in this resample only: its exact value and variance 0
        rows, cols, value = _resampled_constants(
            w, cell_min, cell_max, ~constant & (var <= suspect)
        )
        mean[rows, cols] = value
        var[rows, cols] = 0.0
        if ia.size == 0:
            return np.zeros((w.shape[0], len(out_keys)))
        total = np.empty((w.shape[0], len(out_keys)))
        for k0, k1 in slices:
            pa, pb = ia[bounds[k0] : bounds[k1]], ib[bounds[k0] : bounds[k1]]
            n_a, n_b = n[:, pa], n[:, pb]
            # The pooled two-sided Student test of tsrate.methods.wrs, decided by |t| > t_crit
            # (the same as p < 1 - confidence) with critical values tabulated per integer dof.
            with np.errstate(invalid="ignore", divide="ignore"):
                dof = n_a + n_b - 2.0
                pooled = ((n_a - 1.0) * var[:, pa] + (n_b - 1.0) * var[:, pb]) / dof
                diff = mean[:, pa] - mean[:, pb]
                t = np.abs(diff) / np.sqrt(pooled * (1.0 / n_a + 1.0 / n_b))
            degenerate = pooled == 0.0
            t = np.where(degenerate, np.where(diff == 0.0, 0.0, np.inf), t)
            per_pair = rejections(t, dof)
            undefined = (n_a < 2) | (n_b < 2)
            per_pair = np.where(undefined, np.nan, per_pair)
            # score = sum over the pairs of each system x perturbation of the slice
            starts_here = block_starts[k0:k1] - bounds[k0]
            total[:, k0:k1] = np.add.reduceat(per_pair, starts_here, axis=1)
        return np.round(total, WRS_DECIMALS)

    point = scores(np.ones((1, n_dates)))[0]
    boot = np.concatenate(
        [scores(w_all[i : i + CHUNK]) for i in range(0, w_all.shape[0], CHUNK)]
        or [np.zeros((0, len(out_keys)))]
    )
    return out_keys, point, boot


def _resampled_constants(
    w: np.ndarray, cell_min: np.ndarray, cell_max: np.ndarray, suspects: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the (resample, group) entries ``suspects`` (a bool matrix): which draw one value
    only (every window of every date with a multiplicity > 0 the same), and that value.
    Returns (resample index, group index, value) of those that do."""
    rows, groups = np.nonzero(suspects)
    found_rows, found_groups, values = [], [], []
    for start in range(0, rows.size, CANDIDATES):
        r, g = rows[start : start + CANDIDATES], groups[start : start + CANDIDATES]
        drawn = w[r] > 0  # candidates x dates
        low = np.where(drawn, cell_min[:, g].T, np.inf).min(axis=1)
        high = np.where(drawn, cell_max[:, g].T, -np.inf).max(axis=1)
        one = (low == high) & np.isfinite(low)
        found_rows.append(r[one])
        found_groups.append(g[one])
        values.append(low[one])
    if not found_rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    return np.concatenate(found_rows), np.concatenate(found_groups), np.concatenate(values)


def _text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Every value's rank among the column's distinct values as text, and those texts
    (sorted). A categorical is ranked through its categories: its rows are never turned
    into text one by one (millions of strings at scale)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if not (codes < 0).any():  # a null is cast to text like any other value below
            names = np.asarray(column.cat.categories.astype(str), dtype=object)
            rank, texts = pd.factorize(names, sort=True)
            return rank.astype(np.int64)[codes], np.asarray(texts, dtype=object)
    codes, texts = pd.factorize(column.astype(str), sort=True)
    return codes.astype(np.int64), np.asarray(texts, dtype=object)


def _group_codes(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group number of every row and the group table (the keys as text, one row per
    group); groups are numbered in the order of their key texts, key by key, as a sorted
    groupby over the keys cast to text numbers them."""
    coded = [_text_codes(frame[key]) for key in keys]
    texts = [distinct for _, distinct in coded]
    space = float(np.prod([max(t.size, 1) for t in texts], dtype=float))
    if space >= COMBINED_KEYS:  # the combined key below would overflow: group the texts
        cast = pd.DataFrame({key: frame[key].astype(str) for key in keys})
        gid = cast.groupby(keys, sort=True).ngroup().to_numpy(dtype=np.int64)
        groups = cast.drop_duplicates(keys).sort_values(keys).reset_index(drop=True)
        return gid, groups
    combined = np.zeros(len(frame), dtype=np.int64)
    for codes, distinct in coded:
        combined = combined * max(distinct.size, 1) + codes
    # the combined key is the group's position in the product of the key sets: number the
    # present ones in that order (a dense table while the product is small, else a sort)
    space = int(space)
    if space <= max(4 * len(frame), 1 << 20):
        present = np.flatnonzero(np.bincount(combined, minlength=space))
        number = np.full(space, -1, dtype=np.int64)
        number[present] = np.arange(present.size)
        gid = number[combined]
    else:
        present, gid = np.unique(combined, return_inverse=True)
    columns = {}
    rest = present
    for key, distinct in zip(reversed(keys), reversed(texts), strict=True):
        rest, code = np.divmod(rest, max(distinct.size, 1))
        columns[key] = distinct[code] if distinct.size else np.zeros(0, dtype=object)
    groups = pd.DataFrame({key: columns[key] for key in keys})
    return gid.astype(np.int64), groups


def effects_resampled(
    grids: Sequence[np.ndarray],
    labels: Sequence[str],
    assigned: np.ndarray,
    strata: Sequence[np.ndarray],
    day_of_unit: np.ndarray,
    multiplicities: np.ndarray,
    control: str = "P0",
    estimand: str = "ATE",
    *,
    selected: np.ndarray | None = None,
    tie_tolerance: float = 1e-12,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """APE_m and PIE % of several systems, every distribution and treatment, per resample.

    ``grids``: one (units x labels) outcome matrix per system (its full grid of window
    errors, as :func:`tsrate.methods.causal.estimators.grid_perturbation_effects` takes it); ``assigned``
    (distributions x units): the label index each unit drew (-1: no draw); ``strata``: the
    confounder code of every unit, one array per distribution; ``day_of_unit``: the position
    of every unit's window date among the columns of ``multiplicities`` (resamples x dates).

    Per resample every unit is weighted by its date's multiplicity and, per treatment, the
    estimators of :func:`tsrate.methods.causal.estimators.perturbation_effects` (``propensity="share"``) are
    evaluated on weighted per-stratum counts and sums: APE_o = weighted mean of the treated
    minus weighted mean of the controls; APE_m = closed-form stratified matching (strata
    without one arm matched to the nearest propensity); PIE % = | |APE_o| - |APE_m| | x 100.

    ``selected`` (systems x distributions x treatments, bool; default all) limits the work
    to the chosen entries; the others stay NaN.

    Returns ``(treatments, ape_matched, pie_percent)`` with arrays shaped (systems x
    resamples x distributions x treatments); NaN where an arm is empty in a resample.
    """
    estimand = check_method(estimand, "share")
    labels = [str(label) for label in labels]
    if control not in labels:
        raise ValueError(f"labels lack the control {control!r}")
    control_code = labels.index(control)
    treatments = [label for label in labels if label != control]
    treatment_codes = [labels.index(t) for t in treatments]
    n_labels = len(labels)
    w = np.asarray(multiplicities, dtype=float)
    assigned = np.asarray(assigned)
    if assigned.ndim != 2:
        raise ValueError("assigned must be (distributions x units)")
    n_draws, n_units = assigned.shape
    if len(strata) != n_draws:
        raise ValueError("strata must hold one array per distribution")
    day_of_unit = np.asarray(day_of_unit, dtype=np.int64)
    if day_of_unit.shape != (n_units,) or w.ndim != 2:
        raise ValueError("day_of_unit must be (units,) and multiplicities (resamples x dates)")
    n_dates = w.shape[1]
    grids = [np.asarray(g, dtype=float) for g in grids]
    for g in grids:
        if g.shape != (n_units, n_labels):
            raise ValueError("every grid must be (units x labels)")
    n_res = w.shape[0]
    n_sys, n_treat = len(grids), len(treatments)
    if selected is None:
        selected = np.ones((n_sys, n_draws, n_treat), dtype=bool)
    selected = np.asarray(selected, dtype=bool)
    if selected.shape != (n_sys, n_draws, n_treat):
        raise ValueError("selected must be (systems x distributions x treatments)")
    shape = (n_sys, n_res, n_draws, n_treat)
    ape = np.full(shape, np.nan)
    pie = np.full(shape, np.nan)
    # The weighted counts and outcome sums of every selected distribution are one matrix
    # product per chunk of distributions: multiplicities (resamples x dates) times stacked
    # per-date cells (dates x columns), a few large products instead of one small product
    # per distribution and system. A column is one stratum of one (block, label) slab --
    # block: the unit counts, or one system's outcome sums -- and only the labels a selected
    # (system, treatment) needs get a slab (the control and the selected treatments). The
    # cells are accumulated unit by unit into one reused buffer, in unit order, as
    # np.bincount does (so the same values); every column of the product is the same dot
    # product whatever the other columns are (slabs aligned to SLAB_ALIGN columns, and a
    # product has MIN_COLUMNS columns or more: narrower ones are padded with zeros).
    todo = [d for d in range(n_draws) if selected[:, d, :].any()]
    # (labels x units): a label's values adjacent
    by_label = [np.ascontiguousarray(g.T) for g in grids]
    finite = [bool(np.isfinite(g).all()) for g in grids]
    buffer = np.zeros(0)
    start = 0
    while start < len(todo):
        plans = []
        columns = 0
        stop = start
        while stop < len(todo) and (stop == start or columns < CHUNK_COLUMNS):
            d = todo[stop]
            pair_sys, pair_treat = np.nonzero(selected[:, d, :])
            t_codes = np.asarray(treatment_codes, dtype=np.int64)[pair_treat]
            codes = assigned[d].astype(np.int64)
            observed = np.flatnonzero(codes >= 0)
            stratum = np.asarray(strata[d], dtype=np.int64)
            n_strata = int(stratum.max()) + 1 if stratum.size else 0
            # (block, label) -> first column of its slab; block -1: the unit counts
            slabs: dict[tuple[int, int], int] = {}
            span = -(-n_strata // SLAB_ALIGN) * SLAB_ALIGN  # a slab's columns, aligned
            for label in sorted({control_code, *t_codes.tolist()}):
                slabs[(-1, label)] = columns
                columns += span
            values: dict[int, np.ndarray] = {}
            for s in np.unique(pair_sys).tolist():
                if not finite[s]:  # every value a draw observes must be finite
                    y = grids[s][observed, codes[observed]]
                    if not np.all(np.isfinite(y)):
                        raise ValueError("observed has NaN/infinite outcome values")
                values[s] = by_label[s]
                for label in sorted({control_code, *t_codes[pair_sys == s].tolist()}):
                    slabs[(s, label)] = columns
                    columns += span
            # block -> the first column of each label's slab (-1: no slab), built in one
            # pass: a scan of every slab per block grows with the square of the systems
            firsts: dict[int, np.ndarray] = {}
            for (block, label), column in slabs.items():
                if block not in firsts:
                    firsts[block] = np.full(n_labels, -1, dtype=np.int64)
                firsts[block][label] = column
            plans.append((d, pair_sys, pair_treat, observed, n_strata, slabs, values, firsts))
            stop += 1
        width = max(columns, MIN_COLUMNS)
        if buffer.size < n_dates * width:
            buffer = np.zeros(n_dates * width)
        cells = buffer[: n_dates * width]
        cells.fill(0.0)
        for d, _, _, _, n_strata, _, values, firsts in plans:
            # Cells are stored column by column (a slab is n_strata x n_dates, each column's
            # dates adjacent), zero until its one (block, label) piece is written: the units
            # of that label, in unit order. Where no two units share a stratum and a date
            # (company strata) every cell takes one unit's value; else each cell sums its
            # units in unit order, as np.add.at would (so the same values either way).
            key = np.asarray(strata[d], dtype=np.int64) * n_dates + day_of_unit
            size = n_strata * n_dates
            alone = key.size == 0 or np.bincount(key, minlength=size).max() <= 1
            for label in range(n_labels):
                units = np.flatnonzero(assigned[d] == label)
                if units.size == 0:
                    continue
                at = key[units]
                for block in [-1, *values]:
                    column = firsts[block][label]
                    if column < 0:
                        continue
                    add = 1.0 if block == -1 else values[block][label][units]
                    slab = cells[column * n_dates : column * n_dates + size]
                    if alone:
                        slab[at] = add
                    else:
                        slab[:] = np.bincount(
                            at, weights=None if block == -1 else add, minlength=size
                        )
        product = w @ cells.reshape(width, n_dates).T
        for d, pair_sys, pair_treat, _, n_strata, slabs, _, _ in plans:
            # (resamples x strata) weighted counts / outcome sums of one slab
            cells_of = {key: product[:, first : first + n_strata] for key, first in slabs.items()}
            # Per treatment: the counts are shared by its selected systems, the outcome sums
            # are (systems x resamples x strata).
            n_c = cells_of[(-1, control_code)]
            for t in np.unique(pair_treat).tolist():
                systems = pair_sys[pair_treat == t]
                code = treatment_codes[t]
                n_t = cells_of[(-1, code)]
                sum_t = np.stack([cells_of[(s, code)] for s in systems.tolist()])
                sum_c = np.stack([cells_of[(s, control_code)] for s in systems.tolist()])
                a_m = matched_effects(n_t, sum_t, n_c, sum_c, estimand, tie_tolerance)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mean_t = sum_t.sum(axis=-1) / n_t.sum(axis=-1)
                    a_o = mean_t - sum_c.sum(axis=-1) / n_c.sum(axis=-1)
                ape[systems, :, d, t] = a_m
                pie[systems, :, d, t] = np.abs(np.abs(a_o) - np.abs(a_m)) * 100.0
        start = stop
    return treatments, ape, pie


def aggregate_distributions(values: np.ndarray, how: str) -> np.ndarray:
    """Aggregate the last axis (distributions) as ``tsrate.methods.causal.estimators.worst_case`` does:
    ``max_abs``, ``max``, ``mean`` or ``mean_abs``, skipping NaN (all NaN -> NaN)."""
    if how not in {"max_abs", "max", "mean", "mean_abs"}:
        raise ValueError("how must be 'max_abs', 'max', 'mean' or 'mean_abs'")
    v = np.abs(values) if how in {"max_abs", "mean_abs"} else np.asarray(values, dtype=float)
    defined = np.isfinite(v).any(axis=-1)
    filled = np.where(np.isfinite(v), v, -np.inf if how.startswith("max") else 0.0)
    if how.startswith("max"):
        out = filled.max(axis=-1)
    else:
        n = np.isfinite(v).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = filled.sum(axis=-1) / n
    return np.where(defined, out, np.nan)
