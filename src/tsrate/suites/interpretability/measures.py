"""Interpretability correctness measures: learned attention against the true structure.

All inputs are plain arrays; every measure returns NaN where it is undefined (no true
edge, or nothing to rank), so undefined values are visible, never silently 0
(:func:`undefined_reason` says why).

Every measure scores uniform attention exactly at chance (tests): ranking measures give
tied cells their expected share (as if ties were broken at random), a constant attention
has Spearman correlation 0, AUROC counts ties 1/2. :func:`chance_level` scores the same
attention against ground truths whose sources are permuted within each target (the
"permuted ground truth" baseline); :func:`correctness_with_chance` reports every measure
with its chance level and its margin over chance.

* ``beta_spearman``: Spearman rank correlation (average ranks for ties) between the
  flattened mean beta matrix (target x source) and the true interaction matrix. Cells where
  beta is NaN (DA-RNN's diagonal) are left out. 0 when beta is constant (no ranking at
  all: chance); NaN when the truth is constant.
* ``beta_topk``: top-k recovery. For each target with k >= 1 true sources and MORE
  candidate sources than k, the expected share of its k highest-beta sources that are true
  (cells tied at the k-th place count fractionally); averaged over those targets. Targets
  with no more candidates than true sources are left out: recovery is certain by
  construction (DA-RNN on dataset 4 has one candidate); NaN when none is left.
* ``beta_auroc``: AUROC of beta as a score for "is a true edge" over all (target, source)
  cells (ties count 1/2; Mann-Whitney form). NaN unless both classes occur.
* ``alpha_lag_topk``: for each true (target, source) pair, the expected share of its k true
  lags among the k lags with the highest alpha (ties fractional; lag 1 = most recent);
  averaged over pairs.
* ``tcdf_precision`` / ``tcdf_recall``: of TCDF's semi-binarised picks against the true
  (target, source) edges; precision is NaN when nothing was picked.

Uniformity (the paper's "confidence"): ``beta_entropy`` / ``alpha_entropy`` = mean over
rows (targets; target-source pairs) of the Shannon entropy of the attention divided by
log(number of candidates): 1 = uniform, 0 = all weight on one cell.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def beta_spearman(beta: np.ndarray, truth: np.ndarray) -> float:
    b, t = np.asarray(beta, float).ravel(), np.asarray(truth, float).ravel()
    keep = np.isfinite(b) & np.isfinite(t)
    b, t = b[keep], t[keep]
    if b.size < 2 or np.ptp(t) == 0:
        return float("nan")
    if np.ptp(b) == 0:
        return 0.0  # a constant attention ranks nothing: chance
    return float(stats.spearmanr(b, t).statistic)


def expected_topk_hits(scores: np.ndarray, relevant: np.ndarray, k: int) -> float:
    """Expected number of ``relevant`` cells among the ``k`` highest ``scores`` when ties
    are broken uniformly at random (NaN scores are never chosen)."""
    scores = np.where(np.isfinite(scores), scores, -np.inf)
    relevant = np.asarray(relevant, bool)
    order = np.sort(scores)[::-1]
    threshold = order[k - 1]
    above = scores > threshold
    tied = scores == threshold
    slots = k - int(above.sum())
    hits = float((above & relevant).sum())
    if tied.sum():
        hits += slots * (tied & relevant).sum() / tied.sum()
    return hits


def beta_topk(beta: np.ndarray, truth: np.ndarray) -> float:
    beta, truth = np.asarray(beta, float), np.asarray(truth, float)
    shares = []
    for row_beta, row_truth in zip(beta, truth, strict=True):
        true = (row_truth > 0) & np.isfinite(row_beta)  # true sources among the candidates
        k = int(true.sum())
        candidates = int(np.isfinite(row_beta).sum())
        if k == 0 or candidates <= k:  # nothing to find, or found by construction
            continue
        shares.append(expected_topk_hits(row_beta, true, k) / k)
    return float(np.mean(shares)) if shares else float("nan")


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (ties count 1/2)."""
    s, y = np.asarray(scores, float).ravel(), np.asarray(labels, bool).ravel()
    keep = np.isfinite(s)
    s, y = s[keep], y[keep]
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = stats.rankdata(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def beta_auroc(beta: np.ndarray, truth: np.ndarray) -> float:
    return auroc(beta, np.asarray(truth) > 0)


def alpha_lag_topk(alpha: np.ndarray, lag_truth: np.ndarray) -> float:
    """``alpha`` and ``lag_truth``: (target x source x lag); lag index 0 = lag 1."""
    alpha, lag_truth = np.asarray(alpha, float), np.asarray(lag_truth, float)
    shares = []
    for target in range(lag_truth.shape[0]):
        for source in range(lag_truth.shape[1]):
            true = lag_truth[target, source] > 0
            k = int(true.sum())
            if k == 0 or k >= np.isfinite(alpha[target, source]).sum():
                continue
            shares.append(expected_topk_hits(alpha[target, source], true, k) / k)
    return float(np.mean(shares)) if shares else float("nan")


def pick_precision_recall(picks: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    picked = np.asarray(picks) > 0
    true = np.asarray(truth) > 0
    hits = int((picked & true).sum())
    precision = hits / picked.sum() if picked.sum() else float("nan")
    recall = hits / true.sum() if true.sum() else float("nan")
    return float(precision), float(recall)


MEASURES = (
    "beta_spearman",
    "beta_topk",
    "beta_auroc",
    "alpha_lag_topk",
    "tcdf_precision",
    "tcdf_recall",
)
UNIFORMITY = ("beta_entropy", "alpha_entropy")


def normalised_entropy(weights: np.ndarray) -> float:
    """Mean over rows (last axis = the candidates) of entropy / log(number of finite
    candidates): 1 for uniform rows, 0 for one-hot rows; rows with < 2 candidates skipped."""
    w = np.asarray(weights, float)
    rows = w.reshape(-1, w.shape[-1])
    values = []
    for row in rows:
        row = row[np.isfinite(row)]
        if row.size < 2 or row.sum() <= 0:
            continue
        p = row / row.sum()
        nz = p[p > 0]
        values.append(float(-(nz * np.log(nz)).sum() / np.log(row.size)))
    return float(np.mean(values)) if values else float("nan")


def undefined_reason(measure: str, beta: np.ndarray, truth: np.ndarray) -> str | None:
    """Why ``measure`` is NaN for this attention and truth (None when it is defined)."""
    truth, beta = np.asarray(truth, float), np.asarray(beta, float)
    if not (truth > 0).any():
        return "no true edge (nothing to recover)"
    if not (truth[np.isfinite(beta)] > 0).any():
        return "no true edge among the attended cells (e.g. DA-RNN on self-driven series)"
    if measure == "beta_topk":
        beta = np.asarray(beta, float)
        k = ((truth > 0) & np.isfinite(beta)).sum(1)
        candidates = np.isfinite(beta).sum(1)
        if not ((k > 0) & (candidates > k)).any():
            return "true by construction: no target has more candidate sources than true ones"
    if measure in ("beta_auroc", "beta_spearman") and (truth[np.isfinite(beta)] > 0).all():
        return "every candidate cell is a true edge (one class only)"
    return None


def _permuted_truths(truth: np.ndarray, beta: np.ndarray, n: int, seed: int):
    """``n`` ground truths with each target's sources permuted among its candidate cells
    (finite beta). Only the source measures read them: the lag measure's chance permutes
    the lag profiles in time instead (:func:`chance_level`)."""
    rng = np.random.default_rng(seed)
    candidates = [np.flatnonzero(np.isfinite(row)) for row in beta]
    for _ in range(n):
        t = np.zeros_like(truth)
        for target, cells in enumerate(candidates):
            t[target, rng.permutation(cells)] = truth[target, cells]
        yield t


def chance_level(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
    n_permutations: int = 200,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of every measure over ground truths with permuted sources (the same attention
    scored against a truth it cannot know): the score of an attention unrelated to the
    truth. Lag measures use lag profiles permuted in time instead (the true lags of a pair
    moved to random lags)."""
    beta = np.asarray(beta, float)
    scorer = _PermutedSources(beta, picks)  # correctness(beta, None, picks, t, lag_truth)
    runs = [
        scorer(t) for t in _permuted_truths(np.asarray(truth, float), beta, n_permutations, seed)
    ]
    out = {
        m: float(np.nanmean([r[m] for r in runs]))
        if any(np.isfinite(r[m]) for r in runs)
        else float("nan")
        for m in runs[0]
    }
    if alpha is not None:
        rng = np.random.default_rng([seed, 1])
        lag_scorer = _PermutedLags(alpha, lag_truth)  # alpha_lag_topk(alpha, moved)
        values = []
        for _ in range(n_permutations):
            moved = np.take_along_axis(
                lag_truth, np.argsort(rng.random(lag_truth.shape), axis=-1), axis=-1
            )
            values.append(lag_scorer(moved))
        out["alpha_lag_topk"] = (
            float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        )
    return out


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(values)`` (average ranks of ties, 1-based) without its
    overhead: half-integers, so the same floats exactly."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]


class _TopK:
    """:func:`expected_topk_hits` of fixed score rows, each with its own fixed ``k``, for
    many relevance masks: the sort, threshold and ties of each row are found once. The
    arithmetic per row is :func:`expected_topk_hits`'s, so the values are the same to the
    bit."""

    def __init__(self, scores: np.ndarray, ks: np.ndarray) -> None:
        scores = np.where(np.isfinite(scores), scores, -np.inf)  # (rows, candidates)
        order = -np.sort(-scores, axis=-1)
        threshold = np.take_along_axis(order, (ks - 1)[:, None], axis=-1)
        self.above = scores > threshold
        self.tied = scores == threshold
        self.slots = ks - self.above.sum(-1)
        self.n_tied = self.tied.sum(-1)
        self.ks = ks

    def shares(self, relevant: np.ndarray) -> np.ndarray:
        """Per row: expected hits among its top k / k (``relevant``: rows x candidates)."""
        hits = (self.above & relevant).sum(-1).astype(float)
        tied = (self.tied & relevant).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            extra = self.slots * tied / self.n_tied
        hits = np.where(self.n_tied > 0, hits + extra, hits)
        return hits / self.ks


class _PermutedSources:
    """``correctness(beta, None, picks, t, lag_truth)`` for the many ground truths ``t`` of
    :func:`chance_level`, which permute each target's sources among its candidate cells:
    the attention's ranks (Spearman, AUROC) and top-k sorts are computed once, the rest as
    :func:`beta_spearman`, :func:`beta_topk`, :func:`beta_auroc` compute it (the same
    values to the bit; a truth of another shape falls back to those functions)."""

    def __init__(self, beta: np.ndarray, picks: np.ndarray | None) -> None:
        self.beta, self.picks = np.asarray(beta, float), picks
        flat = self.beta.ravel()
        self.finite = np.isfinite(flat)
        self.kept = flat[self.finite]
        self.ranks = stats.rankdata(self.kept) if self.kept.size else self.kept
        self.constant = self.kept.size < 2 or np.ptp(self.kept) == 0
        self.candidates = np.isfinite(self.beta).sum(1)
        self.topk: dict[tuple, _TopK] = {}

    def __call__(self, truth: np.ndarray) -> dict[str, float]:
        truth = np.asarray(truth, float)
        if truth.shape != self.beta.shape or not np.isfinite(truth).all():
            return correctness(self.beta, None, self.picks, truth, truth)
        out = {
            "beta_spearman": self._spearman(truth),
            "beta_topk": self._topk(truth),
            "beta_auroc": self._auroc(truth),
        }
        if self.picks is not None:
            out["tcdf_precision"], out["tcdf_recall"] = pick_precision_recall(self.picks, truth)
        return out

    def _spearman(self, truth: np.ndarray) -> float:
        t = truth.ravel()[self.finite]
        if self.kept.size < 2 or np.ptp(t) == 0:
            return float("nan")
        if self.constant:
            return 0.0  # a constant attention ranks nothing: chance
        # scipy's spearmanr: the Pearson correlation of the two columns' average ranks
        ranked = np.column_stack((self.ranks, _average_ranks(t)))
        return float(np.corrcoef(ranked, rowvar=False)[1, 0])

    def _topk(self, truth: np.ndarray) -> float:
        true = (truth > 0) & np.isfinite(self.beta)
        ks = true.sum(1)
        rows = np.flatnonzero((ks > 0) & (self.candidates > ks))
        if not len(rows):
            return float("nan")
        key = (tuple(rows), tuple(ks[rows]))
        if key not in self.topk:
            self.topk[key] = _TopK(self.beta[rows], ks[rows])
        return float(np.mean(self.topk[key].shares(true[rows])))

    def _auroc(self, truth: np.ndarray) -> float:
        y = (truth > 0).ravel()[self.finite]
        n_pos, n_neg = int(y.sum()), int((~y).sum())
        if n_pos == 0 or n_neg == 0:
            return float("nan")
        return float((self.ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


class _PermutedLags:
    """``alpha_lag_topk(alpha, moved)`` for the lag truths ``moved`` of :func:`chance_level`
    (each pair's true lags moved in time: its number of true lags stays), with each pair's
    top-k sort found once (the same values to the bit)."""

    def __init__(self, alpha: np.ndarray, lag_truth: np.ndarray) -> None:
        self.alpha = np.asarray(alpha, float)
        ks = (np.asarray(lag_truth, float) > 0).sum(-1)
        pairs = (ks > 0) & (ks < np.isfinite(self.alpha).sum(-1))
        self.targets, self.sources = np.nonzero(pairs)  # target-major, as alpha_lag_topk
        self.ks = ks
        self.scorer = (
            _TopK(self.alpha[self.targets, self.sources], ks[self.targets, self.sources])
            if len(self.targets)
            else None
        )

    def __call__(self, moved: np.ndarray) -> float:
        moved = np.asarray(moved, float)
        if moved.shape != self.alpha.shape or not ((moved > 0).sum(-1) == self.ks).all():
            return alpha_lag_topk(self.alpha, moved)
        if self.scorer is None:
            return float("nan")
        return float(np.mean(self.scorer.shares(moved[self.targets, self.sources] > 0)))


def correctness_with_chance(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
    n_permutations: int = 200,
    seed: int = 0,
) -> list[dict]:
    """One record per measure: value, chance (permuted ground truth), margin = value -
    chance, and the reason when the value is undefined; plus the uniformity measures
    (``beta_entropy``, ``alpha_entropy``; no chance level)."""
    values = correctness(beta, alpha, picks, truth, lag_truth)
    chance = chance_level(beta, alpha, picks, truth, lag_truth, n_permutations, seed)
    records = []
    for measure, value in values.items():
        level = chance.get(measure, float("nan"))
        reason = None if np.isfinite(value) else undefined_reason(measure, beta, truth)
        if not np.isfinite(value) and reason is None:
            reason = "undefined (nothing to rank, or nothing picked)"
        records.append(
            {
                "measure": measure,
                "value": value,
                "chance": level,
                "margin": value - level
                if np.isfinite(value) and np.isfinite(level)
                else float("nan"),
                "undefined_reason": reason,
            }
        )
    entropies = {"beta_entropy": normalised_entropy(beta)}
    if alpha is not None:
        entropies["alpha_entropy"] = normalised_entropy(alpha)
    for measure, value in entropies.items():
        records.append(
            {
                "measure": measure,
                "value": value,
                "chance": float("nan"),
                "margin": float("nan"),
                "undefined_reason": None if np.isfinite(value) else "fewer than 2 candidates",
            }
        )
    return records


def correctness(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
) -> dict[str, float]:
    """Every measure that applies to one run (alpha: target x source x lag over series)."""
    out = {
        "beta_spearman": beta_spearman(beta, truth),
        "beta_topk": beta_topk(beta, truth),
        "beta_auroc": beta_auroc(beta, truth),
    }
    if alpha is not None:
        out["alpha_lag_topk"] = alpha_lag_topk(alpha, lag_truth)
    if picks is not None:
        out["tcdf_precision"], out["tcdf_recall"] = pick_precision_recall(picks, truth)
    return out
