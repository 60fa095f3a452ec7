"""Interpretability correctness measures: learned attention against the true structure.

All inputs are plain arrays; every measure returns NaN where it is undefined (no true
edge, or nothing to rank), so undefined values are visible, never silently 0.

* ``beta_spearman``: Spearman rank correlation (average ranks for ties) between the
  flattened mean beta matrix (target x source) and the true interaction matrix. Cells where
  beta is NaN (DA-RNN's diagonal) are left out. NaN when either side is constant.
* ``beta_topk``: top-k recovery. For each target with k >= 1 true sources, the share of
  its k highest-beta sources that are true sources (ties broken by lower source index);
  averaged over those targets.
* ``beta_auroc``: AUROC of beta as a score for "is a true edge" over all (target, source)
  cells (ties count 1/2; Mann-Whitney form). NaN unless both classes occur.
* ``alpha_lag_topk``: for each true (target, source) pair, the share of its k true lags
  among the k lags with the highest alpha (lag 1 = most recent); averaged over pairs.
* ``tcdf_precision`` / ``tcdf_recall``: of TCDF's semi-binarised picks against the true
  (target, source) edges; precision is NaN when nothing was picked.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def _rank_desc(values: np.ndarray) -> np.ndarray:
    """Indices sorting ``values`` descending, ties by lower index first."""
    return np.lexsort((np.arange(values.size), -values))


def beta_spearman(beta: np.ndarray, truth: np.ndarray) -> float:
    b, t = np.asarray(beta, float).ravel(), np.asarray(truth, float).ravel()
    keep = np.isfinite(b) & np.isfinite(t)
    b, t = b[keep], t[keep]
    if b.size < 2 or np.ptp(b) == 0 or np.ptp(t) == 0:
        return float("nan")
    return float(stats.spearmanr(b, t).statistic)


def beta_topk(beta: np.ndarray, truth: np.ndarray) -> float:
    beta, truth = np.asarray(beta, float), np.asarray(truth, float)
    shares = []
    for row_beta, row_truth in zip(beta, truth, strict=True):
        true_sources = set(np.flatnonzero(row_truth > 0))
        if not true_sources:
            continue
        scores = np.where(np.isfinite(row_beta), row_beta, -np.inf)
        top = _rank_desc(scores)[: len(true_sources)]
        shares.append(len(true_sources.intersection(top.tolist())) / len(true_sources))
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
            true_lags = set(np.flatnonzero(lag_truth[target, source] > 0))
            if not true_lags:
                continue
            top = _rank_desc(alpha[target, source])[: len(true_lags)]
            shares.append(len(true_lags.intersection(top.tolist())) / len(true_lags))
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
