"""grid_perturbation_effects_many (several grids under the same draws, the scale lever of
perturbation_effects) returns, grid by grid, exactly what grid_perturbation_effects returns,
and that stays tied to perturbation_effects on the long table (an independent path)."""

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.causal.estimators import (
    grid_perturbation_effects,
    grid_perturbation_effects_many,
    perturbation_effects,
)

PERTS = ["P0", "P1", "P2"]


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n_units, n_draws = 90, 5
    grids = [rng.gamma(2.0, 1.0 + k, size=(n_units, len(PERTS))) for k in range(3)]
    assigned = rng.integers(0, len(PERTS), size=(n_draws, n_units))
    assigned[1, :7] = -1  # a draw that leaves some units out
    # few units per stratum: some strata lack an arm (matching across strata)
    strata = [rng.integers(0, 4 if d % 2 else 30, size=n_units) for d in range(n_draws)]
    return grids, assigned, strata


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
@pytest.mark.parametrize("seed", [0, 1])
def test_many_equals_one_grid_at_a_time(estimand, seed):
    grids, assigned, strata = _case(seed)
    many = grid_perturbation_effects_many(grids, PERTS, assigned, strata, estimand=estimand)
    assert len(many) == len(grids)
    assert any((frame["strata_without_overlap"] > 0).any() for frame in many)
    for grid, got in zip(grids, many, strict=True):
        one = grid_perturbation_effects(grid, PERTS, assigned, strata, estimand=estimand)
        pd.testing.assert_frame_equal(got, one, check_exact=True)


def test_many_matches_the_long_table_estimator():
    grids, assigned, strata = _case(2)
    got = grid_perturbation_effects_many(grids, PERTS, assigned, strata)[2]
    d = 3
    units = pd.DataFrame({"ticker": [f"T{i:03d}" for i in range(grids[2].shape[0])]})
    units["window_end_date"] = pd.Timestamp("2020-01-01")
    units["industry"] = strata[d]
    units["perturbation_id"] = np.asarray(PERTS)[assigned[d]]
    units["max_abs_residual"] = grids[2][np.arange(len(units)), assigned[d]]
    full = units[["ticker", "window_end_date"]].merge(
        pd.DataFrame({"perturbation_id": PERTS}), how="cross"
    )
    full["max_abs_residual"] = grids[2].ravel()
    ref = perturbation_effects(units, "industry", full_grid=full)
    mine = got.loc[got["draw"] == d].drop(columns="draw").reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, ref, check_exact=False, rtol=1e-12, atol=1e-12)


def test_many_names_the_outcome_of_a_bad_grid():
    grids, assigned, strata = _case(3)
    grids[1] = grids[1].copy()
    grids[1][0, :] = np.nan
    with pytest.raises(ValueError, match="'wql'"):
        grid_perturbation_effects_many(
            grids, PERTS, assigned, strata, outcomes=["max_abs_residual", "wql", "smape"]
        )
