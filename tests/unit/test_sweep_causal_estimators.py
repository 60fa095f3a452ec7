"""The causal method's matching and estimators (tsrate.methods.causal.matching,
estimators) against values worked out independently of the code: hand-computed small cases
and a brute-force unit-level nearest-propensity matching written from the definition
(tests/support/sweep_causal.py); strata without overlap, exact ties between candidate
strata, and the inputs the estimators refuse.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep_causal.json): each test pins exact values, so a changed coefficient,
bound, weight, tie rule or comparison in these files changes a checked number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.sweep_causal import (
    TOL,
    brute_force_ape,
)
from tsrate.methods.causal.estimators import (
    grid_perturbation_effects,
    grid_perturbation_effects_many,
    perturbation_effects,
    worst_case,
)
from tsrate.methods.causal.matching import (
    matched_effects,
    nearest_neighbour_means,
    nearest_weighted_means,
)

# --------------------------------------------------------------------------- matching


def test_nearest_neighbour_takes_the_closer_side_only() -> None:
    """Query 0.375 between pool scores 0.25 (value 1) and 0.75 (value 3): 0.25 is nearer
    (0.125 vs 0.375), so the match is 1 -- not the mean 2 of both sides. Query 0.625 ->
    0.75 -> 3; query 0.0 (left of the pool) -> 0.25 -> 1; query 1.0 (right) -> 3. Dyadic
    scores, so every distance is exact."""
    got = nearest_neighbour_means(
        np.array([0.375, 0.625, 0.0, 1.0]), np.array([0.25, 0.75]), np.array([1.0, 3.0])
    )
    np.testing.assert_array_equal(got, [1.0, 3.0, 1.0, 3.0])
    # three pool scores; query 0.5625 lies between 0.5 and 0.75, nearer 0.5 (value 20)
    got = nearest_neighbour_means(
        np.array([0.5625, 0.6875]), np.array([0.25, 0.5, 0.75]), np.array([10.0, 20.0, 30.0])
    )
    np.testing.assert_array_equal(got, [20.0, 30.0])


def test_one_pool_unit_is_every_match_and_an_empty_pool_raises() -> None:
    got = nearest_neighbour_means(np.array([0.1, 0.9]), np.array([0.5]), np.array([7.0]))
    np.testing.assert_array_equal(got, [7.0, 7.0])
    with pytest.raises(ValueError, match="empty"):
        nearest_neighbour_means(np.array([0.1]), np.array([]), np.array([]))


def test_weighted_pool_entries_are_weighted_by_their_counts() -> None:
    """Entries standing for several units: at score 0.5, 3 units summing to 6 and 1 unit
    of value 10 -> (6 + 10) / 4 = 4 (a mean of the entries' means would be (2 + 10) / 2)."""
    got = nearest_weighted_means(
        np.array([0.5]), np.array([0.5, 0.5, 0.25]), np.array([6.0, 10.0, 100.0]),
        np.array([3.0, 1.0, 1.0]), TOL,
    )  # fmt: skip
    np.testing.assert_array_equal(got, [4.0])


def test_matched_effects_validates_its_shapes() -> None:
    good = np.ones((2, 3))
    with pytest.raises(ValueError, match="n_t and n_c"):
        matched_effects(np.ones(3), np.ones(3), np.ones(3), np.ones(3), "ATE", TOL)
    with pytest.raises(ValueError, match="n_t and n_c"):
        matched_effects(good, good, np.ones((2, 4)), np.ones((2, 4)), "ATE", TOL)
    with pytest.raises(ValueError, match="sum_t and sum_c"):
        matched_effects(good, good, good, np.ones((1, 2, 3)), "ATE", TOL)
    with pytest.raises(ValueError, match="sum_t and sum_c"):
        matched_effects(good, np.ones((2, 4)), good, np.ones((2, 4)), "ATE", TOL)
    with pytest.raises(ValueError, match="sum_t and sum_c"):
        matched_effects(good, np.ones((1, 1, 2, 3)), good, np.ones((1, 1, 2, 3)), "ATE", TOL)


# --------------------------------------------------------------------------- estimators

PERTS3 = ["P0", "P1", "P2"]
# 18 units in 4 strata; codes index PERTS3. Built so that, against the control P0:
# P1 -- A share 3/5, B 1/3, C treated only, D control only (two strata without overlap);
# P2 -- A 1/3 and D 1/3 (equal shares: tied), B 1/2, C treated only.
STRATA = np.array([0] * 6 + [1] * 5 + [2] * 4 + [3] * 3)
CODES = np.array([0, 0, 1, 1, 1, 2] + [0, 1, 2, 2, 0] + [1, 1, 2, 1] + [0, 0, 2])
NAMES = np.array(["Alpha", "Beta", "Gamma", "Delta"])


def _grid(seed: int = 3) -> np.ndarray:
    """(units x perturbations) outcomes: a stratum level, unit noise and an effect that
    differs by stratum and treatment, so every estimator gives a different number."""
    rng = np.random.default_rng(seed)
    level = np.array([1.0, 4.0, 9.0, 2.5])[STRATA]
    y0 = level + rng.normal(0.0, 0.7, STRATA.size)
    effect = np.array([[0.0, 0.5, 3.0, -1.0], [0.0, 2.0, -0.5, 4.0]])  # P1, P2 by stratum
    return np.column_stack([y0, y0 + effect[0][STRATA] + 0.2, y0 + effect[1][STRATA]])


def _expected(grid: np.ndarray, codes: np.ndarray, strata: np.ndarray, estimand: str) -> dict:
    """Every column of perturbation_effects computed from the definitions (units with code
    -1 are not observed)."""
    seen = codes >= 0
    y = grid[np.arange(codes.size), np.maximum(codes, 0)]
    out = {}
    for p in (1, 2):
        arm = seen & np.isin(codes, [0, p])
        treated = codes[arm] == p
        ape_o = y[seen & (codes == p)].mean() - y[seen & (codes == 0)].mean()
        ape_m = brute_force_ape(y[arm], treated, strata[arm], estimand)
        truth = grid[:, p] - grid[:, 0]
        oracle = truth[seen & (codes == p)].mean() if estimand == "ATT" else truth[seen].mean()
        sub = strata[arm]
        one_arm = sum(
            len(set(treated[sub == s])) == 1 for s in np.unique(sub)
        )  # strata holding one arm only
        out[PERTS3[p]] = {
            "n_treated": int((seen & (codes == p)).sum()),
            "n_control": int((seen & (codes == 0)).sum()),
            "ape_observational": ape_o,
            "ape_matched": ape_m,
            "ape_oracle": oracle,
            "matching_error": ape_m - oracle,
            "pie_percent": abs(abs(ape_o) - abs(ape_m)) * 100.0,
            "strata_without_overlap": one_arm,
            "n_strata": int(np.unique(sub).size),
        }
    return out


def _check(frame: pd.DataFrame, expected: dict, estimand: str, atol: float = 1e-12) -> None:
    assert frame["perturbation_id"].tolist() == ["P1", "P2"]
    assert (frame["estimand"] == estimand).all()
    for _, row in frame.iterrows():
        want = expected[row["perturbation_id"]]
        for column, value in want.items():
            assert row[column] == pytest.approx(value, abs=atol), (row["perturbation_id"], column)


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
@pytest.mark.parametrize("propensity", ["share", "logistic"])
def test_perturbation_effects_equal_the_definitions_with_strata_lacking_an_arm(
    estimand: str, propensity: str
) -> None:
    grid = _grid()
    units = pd.DataFrame(
        {"ticker": [f"T{i:02d}" for i in range(STRATA.size)], "window_end_date": "2022-01-03"}
    )
    full = pd.concat(
        [units.assign(perturbation_id=p, max_abs_residual=grid[:, k]) for k, p in enumerate(PERTS3)]
    )
    observed = units.assign(
        industry=NAMES[STRATA],
        perturbation_id=np.array(PERTS3)[CODES],
        max_abs_residual=grid[np.arange(STRATA.size), CODES],
    )
    expected = _expected(grid, CODES, STRATA, estimand)
    assert expected["P1"]["strata_without_overlap"] == 2
    assert expected["P2"]["strata_without_overlap"] == 1
    if propensity == "logistic":
        # strata Alpha and Beta only (both arms of each treatment in each): the fit then
        # converges at once (a one-arm stratum has no finite maximum and takes seconds)
        keep = STRATA < 2
        grid, observed, full = grid[keep], observed[keep], full[full["ticker"] < "T11"]
        expected = _expected(grid, CODES[keep], STRATA[keep], estimand)
    got = perturbation_effects(
        observed.sample(frac=1.0, random_state=5),
        "industry",
        estimand=estimand.lower(),
        full_grid=full,
        propensity=propensity,
    )
    _check(got, expected, estimand, atol=1e-12 if propensity == "share" else 1e-6)


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_grid_effects_equal_the_definitions_draw_by_draw(estimand: str) -> None:
    """Three draws of one grid: the design above, the same with two units left out (-1),
    and a permuted design matched on its own strata array."""
    grid = _grid(seed=8)
    rng = np.random.default_rng(2)
    perm = rng.permutation(STRATA.size)
    left_out = CODES.copy()
    left_out[[1, 13]] = -1
    draws = np.stack([CODES, left_out, CODES[perm]])
    strata = [STRATA, STRATA, STRATA[perm]]
    got = grid_perturbation_effects(grid, PERTS3, draws, strata, estimand=estimand)
    assert got["draw"].tolist() == [0, 0, 1, 1, 2, 2]
    for d in range(3):
        expected = _expected(grid, draws[d], strata[d], estimand)
        _check(got[got["draw"] == d].reset_index(drop=True), expected, estimand)


@pytest.mark.parametrize("tol", [0.0, TOL])
@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_a_stratum_without_controls_pools_the_exactly_tied_nearest_strata(
    tol: float, estimand: str
) -> None:
    """Strata X (1 treated, 2 controls) and Y (2 treated, 4 controls) share the score 1/3
    exactly; Z (3 treated, no control) is matched to the nearest controls -- ALL those of X
    and Y, tied, even with a tolerance of 0 -- and W (control only, score 0) to the nearest
    treated units, again X and Y's. With V (share 3/4) added, V is the nearest for Z (1/4
    away) and X and Y stay the nearest for W. Checked against unit-level brute force."""
    y = {
        "X": ([5.0], [1.0, 2.0]),
        "Y": ([6.0, 8.0], [3.0, 4.0, 5.0, 7.0]),
        "Z": ([10.0, 11.0, 12.0], []),
        "W": ([], [0.5, 1.5]),
        "V": ([9.0, 9.5, 13.0], [2.5]),
    }
    for names in (["X", "Y", "Z", "W"], ["X", "Y", "Z", "W", "V"]):
        values, treated, strata = [], [], []
        for s, name in enumerate(names):
            t_values, c_values = y[name]
            values += t_values + c_values
            treated += [True] * len(t_values) + [False] * len(c_values)
            strata += [s] * (len(t_values) + len(c_values))
        values, treated, strata = np.array(values), np.array(treated), np.array(strata)
        n_t = np.bincount(strata[treated], minlength=len(names)).astype(float)[None]
        n_c = np.bincount(strata[~treated], minlength=len(names)).astype(float)[None]
        s_t = np.bincount(strata[treated], values[treated], minlength=len(names))[None]
        s_c = np.bincount(strata[~treated], values[~treated], minlength=len(names))[None]
        got = matched_effects(n_t, s_t, n_c, s_c, estimand, tol)
        expected = brute_force_ape(values, treated, strata, estimand)
        assert got[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_effects_with_a_control_label_sorting_last_and_exactly_tied_candidates(
    estimand: str,
) -> None:
    """perturbation_effects with the control named "ctl" (sorted after the treatment "a1"),
    a stratum without controls (Z) and one without treated units (W) whose nearest strata,
    X and Y, have exactly equal shares (1/3): the default closed-form propensity averages
    both (the fitted logistic scores differ in their last digits and would pick one). The
    expected APE_m is unit-level brute force; the counts are the arms' sizes (6 treated, 8
    controls)."""
    arms = {
        "X": ([5.0], [1.0, 2.0]),
        "Y": ([6.0, 8.0], [3.0, 4.0, 5.0, 7.0]),
        "Z": ([10.0, 11.0, 12.0], []),
        "W": ([], [0.5, 1.5]),
    }
    rows = []
    for name, (t_values, c_values) in arms.items():
        rows += [(name, "a1", v) for v in t_values] + [(name, "ctl", v) for v in c_values]
    observed = pd.DataFrame(rows, columns=["industry", "perturbation_id", "max_abs_residual"])
    treated = (observed["perturbation_id"] == "a1").to_numpy()
    y = observed["max_abs_residual"].to_numpy()
    got = perturbation_effects(observed, "industry", control="ctl", estimand=estimand).iloc[0]
    assert got["perturbation_id"] == "a1"
    assert (got["n_treated"], got["n_control"]) == (6, 8)
    assert got["ape_matched"] == pytest.approx(
        brute_force_ape(y, treated, observed["industry"].to_numpy(), estimand), abs=1e-12
    )
    assert got["ape_observational"] == pytest.approx(y[treated].mean() - y[~treated].mean())
    assert (got["strata_without_overlap"], got["n_strata"]) == (2, 4)


def test_one_control_unit_is_enough() -> None:
    """A single control unit (A: control 1, treated 3; B: treated 4 and 6, no control).
    Every treated unit is matched to that control: effects 3 - 1, 4 - 1, 6 - 1. The
    control's nearest treated stratum is its own, A (distance 0), so its imputed Y(1) is 3:
    effect 3 - 1. ATE = (2 + 3 + 5 + 2) / 4 = 3."""
    observed = pd.DataFrame(
        {
            "industry": ["A", "A", "B", "B"],
            "perturbation_id": ["P0", "P1", "P1", "P1"],
            "max_abs_residual": [1.0, 3.0, 4.0, 6.0],
        }
    )
    got = perturbation_effects(observed, "industry").iloc[0]
    assert got["n_control"] == 1
    assert got["ape_matched"] == pytest.approx(3.0, abs=1e-12)


def _small_observed() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Four units (one key column, "unit"), two per stratum; the full grid holds
    Y(P0) = 1, 2, 3, 4 and Y(P1) = Y(P0) + 10, 20, 30, 40 (true effects)."""
    grid = pd.DataFrame(
        {
            "unit": ["u1", "u2", "u3", "u4"] * 2,
            "perturbation_id": ["P0"] * 4 + ["P1"] * 4,
            "max_abs_residual": [1.0, 2.0, 3.0, 4.0, 11.0, 22.0, 33.0, 44.0],
        }
    )
    observed = pd.DataFrame(
        {
            "unit": ["u1", "u2", "u3", "u4"],
            "industry": ["A", "A", "B", "B"],
            "perturbation_id": ["P0", "P1", "P0", "P1"],
            "max_abs_residual": [1.0, 22.0, 3.0, 44.0],
        }
    )
    return observed, grid


def test_one_unit_column_keys_the_oracle() -> None:
    """ATE oracle = mean of the four true effects (10 + 20 + 30 + 40) / 4 = 25; ATT = over
    the treated u2, u4: 30. APE_m: A 22 - 1 = 21, B 44 - 3 = 41; ATE 31, ATT 31."""
    observed, grid = _small_observed()
    ate = perturbation_effects(observed, "industry", full_grid=grid, unit_columns=("unit",))
    att = perturbation_effects(
        observed, "industry", estimand="ATT", full_grid=grid, unit_columns=["unit"]
    )
    assert ate["ape_oracle"].item() == pytest.approx(25.0)
    assert att["ape_oracle"].item() == pytest.approx(30.0)
    assert ate["ape_matched"].item() == pytest.approx(31.0)
    assert ate["matching_error"].item() == pytest.approx(6.0)


def test_effects_refuse_incomplete_or_ambiguous_inputs() -> None:
    observed, grid = _small_observed()
    keys = {"unit_columns": ("unit",)}
    with pytest.raises(ValueError, match="one row per unit and perturbation"):
        perturbation_effects(
            observed, "industry", full_grid=pd.concat([grid, grid.tail(1)]), **keys
        )
    with pytest.raises(ValueError, match="one row per unit"):
        perturbation_effects(
            pd.concat([observed, observed.tail(1)]), "industry", full_grid=grid, **keys
        )
    for row in (5, 0):  # a missing Y(P1) of u2, then a missing Y(P0) of u1
        holed = grid.copy()
        holed.loc[row, "max_abs_residual"] = np.nan
        with pytest.raises(ValueError, match="grid must be complete"):
            perturbation_effects(observed, "industry", full_grid=holed, **keys)
    with pytest.raises(ValueError, match="missing 'industry'"):
        perturbation_effects(observed.assign(industry=["A", None, "B", "B"]), "industry")


def test_grid_effects_of_a_one_dimensional_draw_and_a_malformed_grid() -> None:
    """A 1-D ``assigned`` is one draw (draw 0), the same as the 2-D call's first row; a grid
    whose columns are not the perturbations is refused."""
    grid = _grid(seed=4)
    one = grid_perturbation_effects(grid, PERTS3, CODES, STRATA)
    two = grid_perturbation_effects(grid, PERTS3, CODES[None, :], [STRATA])
    pd.testing.assert_frame_equal(one, two)
    _check(one.drop(columns="draw"), _expected(grid, CODES, STRATA, "ATE"), "ATE")
    with pytest.raises(ValueError, match="units x perturbations"):
        grid_perturbation_effects(grid[:, :2], PERTS3, CODES, STRATA)
    # a treatment no unit drew (P3) has no row
    wider = np.column_stack([grid, grid[:, 1] + 1.0])
    got = grid_perturbation_effects(wider, [*PERTS3, "P3"], CODES, STRATA)
    _check(got.drop(columns="draw"), _expected(grid, CODES, STRATA, "ATE"), "ATE")


def test_grid_effects_refuse_a_grid_with_a_hole_and_a_draw_of_the_wrong_length() -> None:
    """Unit 0 drew P0 (its observed outcome is finite) but has no Y(P2): the ATE oracle of
    P2 over every unit cannot be computed, so the call refuses rather than publish NaN."""
    grid = _grid(seed=4)
    grid[0, 2] = np.nan
    assert CODES[0] == 0
    with pytest.raises(ValueError, match="grid must be complete"):
        grid_perturbation_effects(grid, PERTS3, CODES, STRATA)
    with pytest.raises(ValueError, match="one entry per unit"):
        grid_perturbation_effects(_grid(), PERTS3, CODES[:-1], STRATA[:-1])
    with pytest.raises(ValueError, match="one entry per unit"):  # the second grid is short
        grid_perturbation_effects_many([_grid(), _grid()[:-1]], PERTS3, CODES, STRATA)


def test_grid_effects_with_the_control_in_the_last_column() -> None:
    """The same grid with its columns in the order P1, P2, P0 (codes mapped accordingly):
    the same effects, the control's arm counted where it is."""
    grid = _grid(seed=6)
    new_code = np.array([2, 0, 1])  # old code -> column in the new order
    got = grid_perturbation_effects(grid[:, [1, 2, 0]], ["P1", "P2", "P0"], new_code[CODES], STRATA)
    _check(got.drop(columns="draw"), _expected(grid, CODES, STRATA, "ATE"), "ATE")


def test_grid_effects_refuse_a_missing_observed_outcome() -> None:
    grid = _grid(seed=6)
    grid[2, CODES[2]] = np.nan
    with pytest.raises(ValueError, match="NaN/infinite"):
        grid_perturbation_effects(grid, PERTS3, CODES, STRATA)


def test_worst_case_sorts_its_groups_and_breaks_ties_by_the_smallest_id() -> None:
    """Groups given in the order S2, S1 come back S1, S2. S1: |values| 2, 5, 5 -> max 5,
    attained by d2 and d3 -> d2; mean_abs 4. S2: -1 and 3 -> max_abs 3 (d1), max 3, mean 1."""
    values = pd.DataFrame(
        {
            "system_id": ["S2", "S2", "S1", "S1", "S1"],
            "distribution_id": ["d9", "d1", "d3", "d2", "d1"],
            "v": [-1.0, 3.0, -5.0, 5.0, 2.0],
        }
    )
    out = worst_case(values, ["system_id"], "v")
    assert out["system_id"].tolist() == ["S1", "S2"]
    assert out["v"].tolist() == [5.0, 3.0]
    assert out["worst_distribution_id"].tolist() == ["d2", "d1"]
    mean_abs = worst_case(values, ["system_id"], "v", "mean_abs")
    assert mean_abs["v"].tolist() == pytest.approx([4.0, 2.0])
    mean = worst_case(values, ["system_id"], "v", "mean")
    assert mean["v"].tolist() == pytest.approx([2 / 3, 1.0])
