"""Interpretability correctness measures: learned attention against the true structure.

All inputs are plain arrays; every measure returns NaN where it is undefined (no true
edge, or nothing to rank), so undefined values are visible, never silently 0
(:func:`undefined_reason` says why).

Every measure scores uniform attention exactly at chance (tests): ranking measures give
tied cells their expected share (as if ties were broken at random), a constant attention
has Spearman correlation 0, AUROC counts ties 1/2. :func:`chance_level` is the exact
expected score of the same attention against ground truths whose sources are permuted
uniformly within each target (the "permuted ground truth" baseline; computed in closed
form, no random draws, so equally correct attentions get equal margins);
:func:`correctness_with_chance` reports every measure with its chance level and its margin
over chance.

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


def _true_shares(truth: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Per cell: the probability that the permutation of its target's sources among the
    candidate cells (finite beta) puts a true source there -- k / c for a target with k true
    sources among c candidates, 0 off the candidates (the permuted truth is 0 there)."""
    candidate = np.isfinite(beta)
    k = ((truth > 0) & candidate).sum(1, keepdims=True)
    c = candidate.sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(candidate, k / c, 0.0)


def _chance_spearman(beta: np.ndarray, truth: np.ndarray) -> float:
    """Expected :func:`beta_spearman` over the permuted truths. The pooled average ranks of
    the truth values are the same multiset in every permuted truth (each target keeps its
    values), so their mean and spread are fixed and the correlation is linear in the rank
    each cell receives: its expectation is the mean truth rank of the cell's target's
    candidates."""
    candidate = np.isfinite(beta)
    kept_truth = truth[candidate]
    if kept_truth.size < 2 or np.ptp(kept_truth) == 0:
        return float("nan")
    kept_beta = beta[candidate]
    if np.ptp(kept_beta) == 0:
        return 0.0  # a constant attention ranks nothing: chance
    truth_ranks = np.zeros(beta.shape)
    truth_ranks[candidate] = stats.rankdata(kept_truth)
    per_target = truth_ranks.sum(1, keepdims=True) / np.maximum(candidate.sum(1, keepdims=True), 1)
    expected = np.broadcast_to(per_target, beta.shape)[candidate]  # the mean rank a cell gets
    rb = stats.rankdata(kept_beta)
    rb = rb - rb.mean()
    rt = truth_ranks[candidate] - truth_ranks[candidate].mean()
    covariance = float(np.dot(rb, expected - truth_ranks[candidate].mean()))
    return covariance / float(np.sqrt(np.dot(rb, rb) * np.dot(rt, rt)))


def _chance_auroc(beta: np.ndarray, shares: np.ndarray, n_pos: int) -> float:
    """Expected :func:`beta_auroc`: the numbers of true and false cells are fixed, and the
    Mann-Whitney sum of the true cells' average ranks is linear in which cells are true."""
    candidate = np.isfinite(beta)
    share = shares[candidate]
    n_neg = int(candidate.sum()) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = stats.rankdata(beta[candidate])
    return float((np.dot(ranks, share) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def chance_level(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
) -> dict[str, float]:
    """Every measure's exact expectation over the ground truths whose sources are permuted
    uniformly within each target among its candidate cells (finite beta; the permuted
    truth is 0 elsewhere): the score of the same attention against a truth it cannot know,
    with no Monte Carlo error. Lag measures permute each pair's lag profile uniformly in
    time instead (its true lags moved to random lags). Every measure is linear in which
    cells are true (given the fixed counts per target), so the expectation is the measure
    with each indicator replaced by its probability: top-k k / c per target (k / window
    per pair for the lags), precision and recall expected hits = picks x k / c, AUROC and
    Spearman as :func:`_chance_auroc` and :func:`_chance_spearman` say. ``truth`` must be
    finite."""
    beta, truth = np.asarray(beta, float), np.asarray(truth, float)
    if truth.shape != beta.shape or not np.isfinite(truth).all():
        raise ValueError("the chance level needs a finite truth of beta's shape")
    shares = _true_shares(truth, beta)
    candidate = np.isfinite(beta)
    ks, cs = ((truth > 0) & candidate).sum(1), candidate.sum(1)
    rows = (ks > 0) & (cs > ks)  # the targets beta_topk scores
    out = {
        "beta_spearman": _chance_spearman(beta, truth),
        "beta_topk": float(np.mean(ks[rows] / cs[rows])) if rows.any() else float("nan"),
        "beta_auroc": _chance_auroc(beta, shares, int(ks.sum())),
    }
    if picks is not None:
        picked = np.asarray(picks) > 0
        hits = float(shares[picked].sum())
        n_picked, n_true = int(picked.sum()), int(ks.sum())
        out["tcdf_precision"] = hits / n_picked if n_picked else float("nan")
        out["tcdf_recall"] = hits / n_true if n_true else float("nan")
    if alpha is not None:
        lag_truth = np.asarray(lag_truth, float)
        lags = (lag_truth > 0).sum(-1)
        pairs = (lags > 0) & (lags < np.isfinite(np.asarray(alpha, float)).sum(-1))
        out["alpha_lag_topk"] = (
            float(np.mean(lags[pairs] / lag_truth.shape[-1])) if pairs.any() else float("nan")
        )
    return out


def correctness_with_chance(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
) -> list[dict]:
    """One record per measure: value, chance (permuted ground truth), margin = value -
    chance, and the reason when the value is undefined; plus the uniformity measures
    (``beta_entropy``, ``alpha_entropy``; no chance level)."""
    values = correctness(beta, alpha, picks, truth, lag_truth)
    chance = chance_level(beta, alpha, picks, truth, lag_truth)
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
