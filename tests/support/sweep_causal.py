"""Independent references for the causal method's tests (tests/unit/test_sweep_causal_*.py):
the average perturbation effect by brute-force unit-level nearest-propensity matching, and
the confounded draw re-derived from its documented seed and inverse-CDF rule. No test here.
"""

from __future__ import annotations

import hashlib

import numpy as np

TOL = 1e-12


def brute_force_ape(y: np.ndarray, treated: np.ndarray, strata: np.ndarray, estimand: str) -> float:
    """APE_m from the definition, unit by unit: the propensity of a unit is its stratum's
    treated share; each unit's missing potential outcome is the mean outcome of ALL units
    of the other arm at the minimal |propensity difference|; ATE averages the unit effects
    (treated minus control) over every unit, ATT over the treated ones."""
    y, treated, strata = np.asarray(y, float), np.asarray(treated, bool), np.asarray(strata)
    share = {s: treated[strata == s].mean() for s in np.unique(strata)}
    score = np.array([share[s] for s in strata])
    effects = []
    for i in range(y.size):
        others = np.flatnonzero(treated != treated[i])
        distance = np.abs(score[others] - score[i])
        matched = y[others][distance <= distance.min() + TOL].mean()
        if treated[i]:
            effects.append(y[i] - matched)
        elif estimand == "ATE":
            effects.append(matched - y[i])
    return float(np.mean(effects))


# --------------------------------------------------------------------------- distributions


def seed_of(seed: int, name: str) -> np.random.SeedSequence:
    """The documented per-distribution seed: [seed, sha256(name) as little-endian 32-bit
    words]."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest, dtype="<u4").tolist()])


def codes_by_hand(u: np.ndarray, favoured: np.ndarray, tw: float, cw: float, k: int) -> np.ndarray:
    """Inverse CDF by hand: a favoured unit is P0 below cw / W (W = cw + k tw), then
    treatment j (1-based) below (cw + j tw) / W; any other unit is code floor(u (k + 1))."""
    w = cw + k * tw
    out = np.empty(u.size, dtype=np.int64)
    for i, (x, fav) in enumerate(zip(u, favoured, strict=True)):
        if fav:
            edges = [(cw + j * tw) / w for j in range(k + 1)]  # upper ends of P0, P1..Pk
            out[i] = next(j for j, e in enumerate(edges) if x < e)
        else:
            out[i] = int(np.floor(x * (k + 1)))
    return out
