"""Intervals, significance tests and rating stability shared by the language suites
(understanding, reasoning).

Conventions (stated once, used by every suite mart that carries an interval):

* proportions (accuracy): the Wilson score interval at 95 % (:func:`wilson_interval`;
  identical to ``statsmodels.stats.proportion.proportion_confint(method="wilson")``);
* items asked about one sampled unit (a suite's questions about one series, in several
  text formats) are not independent: the unit is what was sampled, so a proportion over
  such items takes its Wilson interval on the *effective* counts (:func:`clustered_counts`:
  successes and trials divided by the design effect of the clustered proportion, Rao &
  Scott 1992, "A simple method for the analysis of clustered binary data", Biometrics
  48:577-585), the two-proportion test too, and every bootstrap draws units, each with all
  of its items (:func:`cluster_weights`; a cluster bootstrap, Davison & Hinkley 1997,
  Bootstrap Methods and their Application, section 3.8). Copying every unit's items k times
  leaves the intervals exactly as they were; with one item per unit they are the plain
  ones. At a share of 0 or 1 the design effect is undefined (0 / 0) and each unit counts
  once (the largest design effect units of equal size can have); next to it the formula's
  own value holds, so one success alone in its unit counts every item again: the limit
  depends on which items succeed (:func:`clustered_counts`);
* errors and F1 (not proportions): the percentile bootstrap over items at 95 %
  (:func:`bootstrap_interval`; ``BOOTSTRAP_RESAMPLES`` resamples, seeded, so a rebuild gives
  the same interval), over units where items share one;
* two proportions: the pooled two-sided z test (:func:`two_proportion_p`; identical to
  ``statsmodels.stats.proportion.proportions_ztest``), corrected for many tests with Holm's
  step-down method (:func:`holm`; identical to ``multipletests(method="holm")``); where a
  unit has items in both groups, the groups are not independent and the test's variance
  takes the units' covariance (:func:`clustered_two_proportion_p`);
* a cell is *too small to judge* when it holds fewer items than :func:`items_for_power`
  (items for 80 % power to detect a gap of ``MIN_DETECTABLE_GAP`` around 50 % at
  ``ALPHA`` before the multiple-test correction, Cohen's h);
* rating stability: items are resampled with replacement (the same draw for every system,
  since every system answers the same items), each metric re-scored and re-rated with
  :func:`tsrate.methods.ratings.assign_ratings` in the direction and with the ideal of the
  suite's rating spec (``seeds/suite_rating_specs.csv``), scores within floating noise of
  each other taken as one (:func:`tsrate.methods.noise.snap_ties`, as published);
  ``share_at_rating`` = share of
  resamples that give the published rating, and ``ci_low`` / ``ci_high`` the percentile
  95 % interval of the rated score over the same resamples (:func:`resampled_interval`),
  widened to the published score where it misses it, floating noise of 0 as 0 (both like
  the core's ``marts.rating_stability``; :func:`tsrate.suites.rating.stability_records`);
  the resamples are seeded by var ``bootstrap_seed``, the suite and the group's keys in the
  data, not the suite run (:func:`tsrate.suites.rating.stability_rng`), so a rerun on
  identical data gives identical shares, and each share carries its Monte Carlo standard
  error ``share_mc_se`` = sqrt(p (1 - p) / R) over the R resamples it counts;
* missing values are never dropped silently: a mean's bootstrap refuses them up front
  (:class:`MissingValuesError`, one line naming the system and score); a resample where a
  statistic or a system's re-scored value is undefined is counted, the stability tables
  give that count (``n_resamples_undefined``), and when it exceeds
  ``MAX_UNDEFINED_SHARE`` of the resamples the interval (and the share at the rating) is
  withheld (null): what is left describes only the resamples where the score exists.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

from tsrate import TsrateError
from tsrate.methods.noise import snap_ties
from tsrate.methods.ratings import assign_ratings

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 200
#: the most resamples (share) in which a score may be undefined before its bootstrap
#: interval and share at the rating are withheld
MAX_UNDEFINED_SHARE = 0.05
MIN_DETECTABLE_GAP = 0.25
POWER = 0.8


def wilson_interval(successes, trials, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of ``successes / trials`` (arrays or scalars); NaN where
    ``trials`` is 0."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    z = stats.norm.ppf(1 - alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denominator = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denominator
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denominator
        # exact ends at k = 0 and k = n (the formula leaves rounding noise there)
        low = np.where(n > 0, np.where(k == 0, 0.0, centre - half), np.nan)
        high = np.where(n > 0, np.where(k == n, 1.0, centre + half), np.nan)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def clustered_counts(successes, clusters) -> tuple[float, float]:
    """Effective (successes, trials) of a proportion over items grouped in ``clusters`` (one
    label per item: the sampled unit, e.g. a series asked in several formats): both divided
    by the design effect d = sum_i (y_i - p m_i)^2 / (n p (1 - p)), cluster i holding m_i
    items of which y_i succeed, n items in all, p = sum y / n (Rao & Scott 1992: the ratio
    estimator's variance over the binomial one, without the c / (c - 1) small-sample factor,
    so that one item per cluster gives d = 1 and the plain counts), floored at 1: items are
    never worth more than independent ones (a design effect under 1, answers about one unit
    less alike than about different ones, is read as 1). At p = 0 or 1 d is undefined:
    each cluster counts once (n_eff = the number of clusters). Next to p = 0 (or 1) d is
    what the formula gives, not the floor's doing: one success alone in a cluster of m
    gives d = (1 - m / n) / (1 - 1 / n) <= 1 (its cluster-mates failed: no sign of alike
    answers), read as 1, so n_eff jumps from the clusters to the items; one whole cluster
    succeeding gives d = m (clusters of equal size m), the clusters again. The limit at
    p = 0 depends on which items succeed, so no value there is continuous along every way
    of leaving it; the convention (each cluster once, d = the mean cluster size n / c) is
    the one continuous along whole clusters, and the largest d clusters of equal size can
    give (sum y_i^2 <= m sum y_i): at p = 0 the data say nothing about how alike a
    cluster's answers are, and the interval assumes the worst. Copying every cluster's items
    k times multiplies d by k and leaves the effective counts unchanged (wherever d of the
    uncopied items is at least 1: always with one item per cluster). (0, 0) for no items."""
    y = np.asarray(successes, dtype=float)
    labels = np.asarray(clusters, dtype=object)
    if len(y) != len(labels):
        raise ValueError(f"{len(y)} items but {len(labels)} cluster labels: give one each")
    n = len(y)
    if n == 0:
        return 0.0, 0.0
    _, index = np.unique(labels.astype(str), return_inverse=True)
    per_cluster = np.bincount(index, weights=y)
    sizes = np.bincount(index).astype(float)
    p = y.sum() / n
    if p in (0.0, 1.0):
        n_eff = float(len(sizes))
    else:
        deff = float(((per_cluster - p * sizes) ** 2).sum() / (n * p * (1 - p)))
        n_eff = n / max(deff, 1.0)
    return p * n_eff, n_eff


def clustered_wilson_interval(successes, clusters, alpha: float = ALPHA) -> tuple[float, float]:
    """Wilson interval (:func:`wilson_interval`) of the share of ``successes`` (0/1 per item)
    on the effective counts of :func:`clustered_counts`: the clusters, not the items, are
    the independent unit. Centred like the Wilson interval of the effective counts, which
    keep the point estimate; (NaN, NaN) for no items."""
    k, n = clustered_counts(successes, clusters)
    low, high = wilson_interval(k, n, alpha)
    return float(low), float(high)


def cluster_order(clusters) -> np.ndarray:
    """Cluster index of each item, clusters numbered in order of first appearance (so that
    one item per cluster draws exactly as an item bootstrap with the same seed)."""
    labels = [str(c) for c in clusters]
    first: dict[str, int] = {}
    return np.array([first.setdefault(c, len(first)) for c in labels], dtype=int)


def cluster_weights(index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One cluster-bootstrap resample as item weights: as many clusters as there are drawn
    with replacement (``index``: each item's cluster, :func:`cluster_order`), every item
    weighted by how often its cluster was drawn."""
    count = int(index.max()) + 1 if len(index) else 0
    drawn = np.bincount(rng.integers(0, count, count), minlength=count)
    return drawn[index]


class MissingValuesError(TsrateError, ValueError):
    """Values to bootstrap hold missing (non-finite) entries (names which, and a hint)."""


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] | None = None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    alpha: float = ALPHA,
    what: str = "the values",
    clusters: Sequence | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` (default the mean) over the items
    ``values`` (resampled with replacement; an index array works with a closure statistic).
    (NaN, NaN) for no items.

    Missing values are refused up front for the mean (:class:`MissingValuesError`, naming
    ``what``: the system and score): a resample drawing one has no mean, and keeping only
    the resamples that draw none would describe other items than the point estimate. A
    closure statistic undefined on a resample leaves that resample out; when more than
    ``MAX_UNDEFINED_SHARE`` of the resamples are left out the interval is withheld (NaN,
    NaN).

    ``clusters`` (one label per item): a cluster bootstrap -- each resample draws as many
    clusters as there are, with replacement, each bringing all of its items
    (:func:`cluster_weights`); the statistic then sees the drawn items, repeated."""
    data = np.asarray(values)
    if len(data) == 0:
        return float("nan"), float("nan")
    if statistic is None:
        data = data.astype(float)
        missing = int((~np.isfinite(data)).sum())
        if missing:
            raise MissingValuesError(
                f"bootstrap interval of {what}: {missing} of {len(data)} values are missing "
                "(NaN or infinite), and a resample drawing one has no mean: score every "
                "item, or leave the missing ones out of the point estimate and the "
                "interval alike"
            )
    rng = np.random.default_rng(seed)
    if clusters is not None:
        draws = _cluster_draws(clusters, len(data), resamples, rng)
        results = np.array(
            [data[d].mean() if statistic is None else statistic(data[d]) for d in draws],
            dtype=float,
        )
        return _percentile_interval(results, resamples, alpha)
    draws = rng.integers(0, len(data), size=(resamples, len(data)))
    if statistic is None:
        results = data[draws].mean(axis=1)
    else:
        results = np.array([statistic(data[d]) for d in draws], dtype=float)
    return _percentile_interval(results, resamples, alpha)


def _cluster_draws(clusters, items: int, resamples: int, rng) -> list[np.ndarray]:
    """Item indices of each cluster-bootstrap resample: as many clusters as there are,
    drawn with replacement, each bringing all of its items."""
    index = cluster_order(clusters)
    if len(index) != items:
        raise ValueError(f"{items} values but {len(index)} cluster labels: give one each")
    members = [np.flatnonzero(index == c) for c in range(int(index.max()) + 1)]
    return [
        np.concatenate([members[c] for c in rng.integers(0, len(members), len(members))])
        for _ in range(resamples)
    ]


def _percentile_interval(results: np.ndarray, resamples: int, alpha: float) -> tuple:
    """The percentile interval of a bootstrap's results; (NaN, NaN) when too many are
    undefined (:func:`too_many_undefined`)."""
    if too_many_undefined(int((~np.isfinite(results)).sum()), resamples):
        return float("nan"), float("nan")
    results = results[np.isfinite(results)]
    low, high = np.quantile(results, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def too_many_undefined(undefined: float, resamples: float) -> bool:
    """Whether ``undefined`` of ``resamples`` is too many to give an interval or share
    (more than ``MAX_UNDEFINED_SHARE`` of them; every one when there are no resamples).
    Counts or weights: the probability of the undefined draws out of 1 for an exact
    bootstrap."""
    return resamples <= 0 or undefined > MAX_UNDEFINED_SHARE * resamples


def resampled_interval(scores: Sequence[float], alpha: float = ALPHA) -> tuple[float, float]:
    """Percentile interval (``alpha / 2``, ``1 - alpha / 2`` quantiles) of a score over its
    bootstrap resamples (the finite ones: a resample where the score is undefined is left
    out); (NaN, NaN) when none is finite. The rating stability tables give every rated
    score this interval, from the resamples its stability is computed on."""
    values = np.asarray(scores, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan")
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def two_proportion_p(k1, n1, k2, n2, *, variance_factor: float = 1.0) -> float:
    """Two-sided p-value of the pooled z test that two proportions are equal; 1.0 when the
    pooled proportion is 0 or 1 (no variation: no evidence of a difference); NaN when a
    group is empty. ``variance_factor`` scales the difference's variance (groups that share
    units: :func:`clustered_two_proportion_p`); a variance scaled to 0 leaves only a gap of
    0 possible (p 1, else 0)."""
    if n1 == 0 or n2 == 0:
        return float("nan")
    pooled = (k1 + k2) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance == 0:
        return 1.0
    variance *= variance_factor
    gap = k1 / n1 - k2 / n2
    if variance == 0:
        return 1.0 if gap == 0 else 0.0
    z = gap / math.sqrt(variance)
    return float(2 * stats.norm.sf(abs(z)))


def one_proportion_p(k: float, n: float, level: float) -> float:
    """Two-sided p-value of the one-sample z test that a share k / n equals ``level`` (its
    variance at ``level``); NaN when n is 0; a level of 0 or 1 leaves only that share
    possible (p 1, else 0)."""
    if n <= 0:
        return float("nan")
    if level <= 0 or level >= 1:
        return 1.0 if k / n == level else 0.0
    z = (k / n - level) / math.sqrt(level * (1 - level) / n)
    return math.erfc(abs(z) / math.sqrt(2))  # 2 x the normal tail beyond |z|


def _cluster_residuals(successes, clusters) -> dict[str, float]:
    """Per cluster, the sum of its items' residuals from the group's share over the group's
    items, sum_j (y_ij - p) / n: the cluster's part of the share's linearised deviation."""
    y = np.asarray(successes, dtype=float)
    labels = np.asarray(clusters, dtype=object).astype(str)
    if len(y) != len(labels):
        raise ValueError(f"{len(y)} items but {len(labels)} cluster labels: give one each")
    residual = (y - y.mean()) / len(y)
    out: dict[str, float] = {}
    for label, value in zip(labels, residual, strict=True):
        out[label] = out.get(label, 0.0) + float(value)
    return out


def overlap_factor(successes1, clusters1, successes2, clusters2) -> float:
    """How the clusters two groups share change the variance of the difference of their
    shares: Var(p1 - p2) / (Var(p1) + Var(p2)), each the cluster-robust (linearised,
    Rao & Scott 1992) variance over the clusters, so Var(p1 - p2) = Var(p1) + Var(p2)
    - 2 Cov(p1, p2), the covariance summed over the clusters in both groups. Exactly 1 when
    no cluster is in both (nothing shared: the groups are independent); under 1 when a
    cluster's answers agree across the groups (a paired comparison), over 1 when they
    disagree; 1 when neither share varies within its group."""
    r1 = _cluster_residuals(successes1, clusters1)
    r2 = _cluster_residuals(successes2, clusters2)
    v1 = sum(u * u for u in r1.values())
    v2 = sum(u * u for u in r2.values())
    shared = sum(r1[c] * r2[c] for c in r1.keys() & r2.keys())
    if v1 + v2 == 0:
        return 1.0
    return max(0.0, (v1 + v2 - 2 * shared) / (v1 + v2))


def clustered_two_proportion_p(successes1, clusters1, successes2, clusters2) -> float:
    """Two-sided p-value that two shares of items (0/1 each, grouped in ``clusters``: the
    sampled units) are equal, a unit allowed in both groups: the pooled z test
    (:func:`two_proportion_p`) on each group's effective counts (:func:`clustered_counts`),
    its variance times :func:`overlap_factor` (a Rao-Scott-style correction of the
    difference for the units in both groups). With no unit in both groups it is exactly
    :func:`two_proportion_p` of the effective counts. 1.0 when the pooled share is 0 or 1;
    NaN when a group is empty."""
    factor = overlap_factor(successes1, clusters1, successes2, clusters2)
    return two_proportion_p(
        *clustered_counts(successes1, clusters1),
        *clustered_counts(successes2, clusters2),
        variance_factor=factor,
    )


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries stay NaN and are not counted)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(np.isfinite(p))
    m = len(valid)
    if m == 0:
        return out
    order = valid[np.argsort(p[valid], kind="stable")]
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out


def items_for_power(
    gap: float = MIN_DETECTABLE_GAP,
    alpha: float = ALPHA,
    power: float = POWER,
    ratio: float = 1.0,
) -> int:
    """Items the first group needs (the second holds ``ratio`` times as many) for the
    two-sided two-proportion test at level ``alpha`` to detect 0.5 - gap/2 against
    0.5 + gap/2 with ``power`` (Cohen's h, normal approximation; before any multiple-test
    correction). Identical to statsmodels' ``NormalIndPower().solve_power``."""
    p1, p2 = 0.5 - gap / 2, 0.5 + gap / 2
    h = abs(2 * math.asin(math.sqrt(p2)) - 2 * math.asin(math.sqrt(p1)))
    n = ((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) / h) ** 2 * (1 + 1 / ratio)
    return int(math.ceil(n))


def stability_counts(
    published: dict[str, int | None],
    resampled: list[dict[str, float]],
    levels: int,
    *,
    ideal: float | None = None,
    higher_is_better: bool = False,
    maximum: float | None = None,
    weights: Sequence[float] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """Per system, the resamples at its published rating and the resamples counted for
    it: the numerator and denominator of :func:`stability_shares` (see there for the rule);
    the counted ones also give the share's Monte Carlo standard error. With ``weights``
    (one per resample: e.g. the probabilities of an exact bootstrap's distinct draws) each
    resample counts its weight instead of 1."""
    hits = dict.fromkeys(published, 0.0)
    counted = dict.fromkeys(published, 0.0)
    weights = [1.0] * len(resampled) if weights is None else [float(w) for w in weights]
    if len(weights) != len(resampled):
        raise ValueError(f"{len(weights)} weights for {len(resampled)} resamples: give one each")
    # only the systems the published rating rated are re-rated: one the suite held back
    # (no rating, its unrated_reason) took no part in it and moves none of the others'
    # resampled ratings. The rule rates a group all or none, so a group it rated nobody
    # (e.g. a lone system away from the ideal with no known worst value) has no rating to
    # be at: no share either way.
    taking_part = {s for s, rating in published.items() if rating is not None}
    for scores, weight in zip(resampled, weights, strict=True):
        finite = {s: v for s, v in scores.items() if s in taking_part and math.isfinite(v)}
        if not finite:
            continue
        # scores within floating noise of each other are one score, as published
        finite = dict(zip(finite, snap_ties(list(finite.values())), strict=True))
        again = assign_ratings(
            finite, levels, ideal=ideal, maximum=maximum, higher_is_better=higher_is_better
        )
        for system, value in again.items():
            if value is None:
                continue
            counted[system] += weight
            hits[system] += weight * (value == published[system])
    return hits, counted


def stability_shares(
    published: dict[str, int | None],
    resampled: list[dict[str, float]],
    levels: int,
    *,
    ideal: float | None = None,
    higher_is_better: bool = False,
    maximum: float | None = None,
) -> dict[str, float]:
    """Share of resamples at each system's published rating. ``published``: system ->
    published rating (None = unrated: share NaN); ``resampled``: per resample, system ->
    raw score, re-rated with :func:`tsrate.methods.ratings.assign_ratings` by the rule that
    rated the published scores (the metric's ``ideal``, None = none, ``higher_is_better``
    and its known worst value ``maximum``, None = unbounded, all from the suite's rating
    spec: a lone or all-tied resample at the ideal gets the best rating, one away from it is
    rated by its distance only where the worst value is known, and is left unrated
    otherwise). Only the systems with a published rating are re-rated: a system held back
    from the published rating (the suite's ``unrated_reason``) moves none of the others'
    resampled ratings. A non-finite score leaves the system out of
    that resample, which then does not count for it; nor does a resample that leaves it
    unrated."""
    hits, counted = stability_counts(
        published,
        resampled,
        levels,
        ideal=ideal,
        higher_is_better=higher_is_better,
        maximum=maximum,
    )
    return {s: (hits[s] / counted[s] if counted[s] else float("nan")) for s in published}
