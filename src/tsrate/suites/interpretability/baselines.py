"""Data-blind priors: attentions fixed before any data is seen, scored like a model's.

The suite's datasets fix their truth's structure (datasets 2 and 3: every series drives
only itself; 5 and 6: series 0 drives every series; the lattice: every edge at lag 1), so
a rule that never looks at the data can score far above the exact chance level of
:func:`measures.chance_level`, which permutes the sources *within* each target and so
cannot see a prior that matches the whole structure. On the small configuration's
datasets (data seeds 2293, 0, 1, 7; the same for each seed) the autoregressive prior
reaches Spearman 1, AUROC 1 and top-k 1 on datasets 2 and 3, the lowest-index prior the
same on datasets 5 and 6, and the recency prior lag top-k 1 on the lattice, each against
chance 0, 1/2, 1/5 and 1/10.

:func:`best_blind_prior` scores every prior of :func:`blind_priors` with the suite's own
measures against a truth and its candidate cells (finite beta: DA-RNN's diagonal is left
out as for the model), and keeps, per measure, the best; the report shows it beside the
models' scores (:func:`tsrate.suites.interpretability.report.blind_prior_rows`).
"""

from __future__ import annotations

import numpy as np

from tsrate.suites.interpretability.measures import chance_level, correctness

#: the fixed lag of the ``fixed_lag`` prior: the most frequent true lag over the edges of
#: datasets 2-8 and 10 (17 of 71 edges at lag 3); lag 1, the lattice's only lag, is the
#: recency prior's first choice already
FIXED_LAG = 3

Prior = tuple[np.ndarray, np.ndarray, np.ndarray]


def blind_priors(n_series: int, window: int) -> dict[str, Prior]:
    """The data-blind priors (beta target x source, alpha target x source x lag with lag 1
    first, TCDF picks target x source): ``uniform`` (every cell alike), ``recency`` (alpha ~
    1 / lag), ``autoregressive`` (each target's own series only, picked), ``lowest_index``
    (series 0 only, picked) and ``fixed_lag`` (alpha on lag :data:`FIXED_LAG`). The priors
    without a preference among sources pick nothing: picking every edge would reach recall
    1 by picking more edges, not by knowing which."""
    n, lags = int(n_series), np.arange(1, int(window) + 1)
    flat_beta = np.full((n, n), 1.0 / n)
    flat_alpha = np.full((n, n, lags.size), 1.0 / lags.size)
    own, first = np.eye(n), np.zeros((n, n))
    first[:, 0] = 1.0
    nothing = np.zeros((n, n))
    recency = np.broadcast_to((1.0 / lags) / (1.0 / lags).sum(), flat_alpha.shape)
    fixed = np.broadcast_to((lags == FIXED_LAG).astype(float), flat_alpha.shape)
    return {
        "uniform": (flat_beta, flat_alpha, nothing),
        "recency": (flat_beta, recency.copy(), nothing),
        "autoregressive": (own, flat_alpha, own),
        "lowest_index": (first, flat_alpha, first),
        "fixed_lag": (flat_beta, fixed.copy(), nothing),
    }


def best_blind_prior(
    beta: np.ndarray,
    alpha: np.ndarray | None,
    picks: np.ndarray | None,
    truth: np.ndarray,
    lag_truth: np.ndarray,
) -> dict[str, tuple[float, float, str]]:
    """Per measure of :func:`measures.correctness`, the best data-blind prior on this
    run's truth: (its score, its own chance level, its name). Only the run's candidate
    cells count (the prior's beta is NaN where the run's is) and only the measures the run
    has (alpha and picks where the run has them); a measure no prior defines is absent.
    A tie keeps the prior listed first in :func:`blind_priors` (``uniform``, ``recency``
    and ``fixed_lag`` share the flat beta, so a flat beta's score is named ``uniform``)."""
    beta = np.asarray(beta, float)
    window = np.asarray(lag_truth).shape[-1]
    best: dict[str, tuple[float, float, str]] = {}
    for name, (prior_beta, prior_alpha, prior_picks) in blind_priors(len(beta), window).items():
        prior_beta = np.where(np.isfinite(beta), prior_beta, np.nan)
        parts = (
            prior_beta,
            None if alpha is None else prior_alpha,
            None if picks is None else prior_picks,
            truth,
            lag_truth,
        )
        scores, chances = correctness(*parts), chance_level(*parts)
        for measure, score in scores.items():
            if np.isfinite(score) and (measure not in best or score > best[measure][0]):
                best[measure] = (float(score), float(chances.get(measure, np.nan)), name)
    return best
