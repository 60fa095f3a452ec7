"""What APE_m (ATE) and the oracle each average over (docs/ratings.md, "Oracle").

The oracle is eq. 2 over every window; APE_m is a binary matching of P_i against P0 on the
windows that drew one of the two, so a stratum weighs by its windows in the two arms. Under
the study's confounded draws (tsrate's own ``treatment_draws``: the favored industry draws
each treatment twice as often as P0) the two differ wherever the effect differs between
strata. Checked against hand computations: the oracle as the plain mean of the grid's
effects, each draw's APE_m as the arm-weighted stratified contrast, and the expectation from
the draw probabilities 3/(2k + 1) and 2/(k + 1).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from tsrate.methods.causal.distributions import treatment_draws
from tsrate.methods.causal.estimators import grid_perturbation_effects

DRAWS = 300


@functools.cache
def _study():
    """Two industries of 20 tickers x 40 windows; P1 raises the outcome by 10 in the
    favored industry A only, P2 and P3 by 1 everywhere."""
    rng = np.random.default_rng(7)
    tickers = [f"T{i:02d}" for i in range(40)]
    units = pd.DataFrame(
        [
            {"ticker": t, "industry": "A" if i < 20 else "B", "window_end_date": d}
            for i, t in enumerate(tickers)
            for d in pd.date_range("2022-01-03", periods=40, freq="B")
        ]
    )
    distributions = pd.DataFrame(
        [
            {
                "distribution_id": "industry:A",
                "confounder": "industry",
                "favored_value": "A",
                "treated_weight": 2.0,
                "control_weight": 1.0,
            }
        ]
    )
    drawn = [
        treatment_draws(units, distributions, ["P0", "P1", "P2", "P3"], 42, draw=r)
        for r in range(DRAWS)
    ]
    base = drawn[0].units
    labels = [str(p) for p in drawn[0].perturbations]
    assert labels == ["P0", "P1", "P2", "P3"]
    favored = (base["industry"] == "A").to_numpy()
    y0 = rng.gamma(2.0, 1.0, len(base))
    grid = np.stack([y0, y0 + 10.0 * favored, y0 + 1.0, y0 + 1.0], axis=1)
    assigned = np.stack([next(iter(d.draws)).codes.astype(np.int64) for d in drawn])
    return grid, labels, assigned, favored.astype(np.int64)


def test_the_draws_give_the_favored_stratum_fewer_p0_or_p1_windows():
    """3/(2k + 1) = 3/7 of the favored windows draw P0 or P1, 2/(k + 1) = 1/2 elsewhere."""
    _, _, assigned, strata = _study()
    in_arms = (assigned == 0) | (assigned == 1)
    favored_share = in_arms[:, strata == 1].mean()
    other_share = in_arms[:, strata == 0].mean()
    assert abs(favored_share - 3 / 7) < 0.005
    assert abs(other_share - 1 / 2) < 0.005


def test_ape_m_ate_weighs_strata_by_their_p0_p1_windows_and_the_oracle_by_all():
    grid, labels, assigned, strata = _study()
    effects = grid_perturbation_effects(grid, labels, assigned, strata, "P0", "ATE")
    p1 = effects[effects["perturbation_id"] == "P1"].sort_values("draw")
    assert len(p1) == DRAWS
    # the oracle: every window's true effect, averaged over all of them (half are favored)
    truth = grid[:, 1] - grid[:, 0]
    np.testing.assert_allclose(p1["ape_oracle"], truth.mean(), rtol=0, atol=1e-12)
    assert abs(truth.mean() - 5.0) < 1e-9
    # each draw's APE_m: the stratified contrast weighted by the stratum's P0/P1 windows
    by_hand = []
    for codes in assigned:
        total = weighted = 0.0
        for s in (0, 1):
            treated = (codes == 1) & (strata == s)
            control = (codes == 0) & (strata == s)
            n_s = treated.sum() + control.sum()
            weighted += n_s * (grid[treated, 1].mean() - grid[control, 0].mean())
            total += n_s
        by_hand.append(weighted / total)
    np.testing.assert_allclose(p1["ape_matched"], by_hand, rtol=0, atol=1e-9)
    # its expectation: 10 x (3/7) / (3/7 + 1/2), not the oracle's 5
    expected = 10.0 * (3 / 7) / (3 / 7 + 1 / 2)
    mean = p1["ape_matched"].mean()
    se = p1["ape_matched"].std(ddof=1) / np.sqrt(DRAWS)
    assert abs(mean - expected) < 4 * se + 0.01
    assert abs(mean - 5.0) > 8 * se
    np.testing.assert_allclose(p1["matching_error"], p1["ape_matched"] - p1["ape_oracle"])


def test_att_oracle_averages_over_the_treated_windows_as_ape_m_does():
    grid, labels, assigned, strata = _study()
    effects = grid_perturbation_effects(grid, labels, assigned, strata, "P0", "ATT")
    p1 = effects[effects["perturbation_id"] == "P1"].sort_values("draw")
    truth = grid[:, 1] - grid[:, 0]
    oracle = [truth[codes == 1].mean() for codes in assigned]
    np.testing.assert_allclose(p1["ape_oracle"], oracle, rtol=0, atol=1e-12)
    se = p1["matching_error"].std(ddof=1) / np.sqrt(DRAWS)
    assert abs(p1["matching_error"].mean()) < 4 * se + 1e-9
