"""The causal method (tsrate.methods.causal: matching, estimators, distributions, effects,
assignment) against values worked out independently of the code: hand-computed small
cases, a brute-force unit-level nearest-propensity matching written from the definition,
and the confounded draw re-derived from its documented seed and inverse-CDF rule.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep_causal.json): each test pins exact values, so a changed coefficient,
bound, weight, tie rule or comparison in these files changes a checked number.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.causal.assignment import treatment_assignments
from tsrate.methods.causal.distributions import (
    DISTRIBUTION_COLUMNS,
    assign_treatments,
    default_distributions,
    draw_seed,
    study_distributions,
    treatment_draws,
)
from tsrate.methods.causal.effects import draw_matrix, effect_scores, study_effects, summarise_draws
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


# --------------------------------------------------------------------------- distributions


def _seed_of(seed: int, name: str) -> np.random.SeedSequence:
    """The documented per-distribution seed: [seed, sha256(name) as little-endian 32-bit
    words]."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest, dtype="<u4").tolist()])


def _codes_by_hand(u: np.ndarray, favoured: np.ndarray, tw: float, cw: float, k: int) -> np.ndarray:
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


def test_the_draws_are_the_documented_seeds_inverted_through_the_weights() -> None:
    tickers = {"ZZ": "Tech", "AA": "Pharma", "MM": "Tech", "BB": "Bank"}
    dates = pd.bdate_range("2020-01-01", periods=60)
    units = pd.DataFrame(
        [(t, ind, d) for t, ind in tickers.items() for d in dates[::-1]],
        columns=["ticker", "industry", "window_end_date"],
    )
    dists = pd.DataFrame(
        [["b-co", "company", "MM", 3.0, 2.0], ["a-ind", "industry", "Tech", 5.0, 1.0]],
        columns=DISTRIBUTION_COLUMNS,
    )
    perts = ["P3", "P0", "P1"]  # put in the order [P0, P1, P3]
    n, k = len(units), 2
    in_order = units.sort_values(["ticker", "window_end_date"]).reset_index(drop=True)
    for draw in (0, 2):
        drawn = treatment_draws(units, dists, perts, 17, draw=draw)
        assert drawn.perturbations.tolist() == ["P0", "P1", "P3"]
        pd.testing.assert_frame_equal(drawn.units, in_order)
        got = list(drawn.draws)
        assert [d.distribution["distribution_id"] for d in got] == ["a-ind", "b-co"]
        for d, column, value, tw, cw in (
            (got[0], "industry", "Tech", 5.0, 1.0),
            (got[1], "ticker", "MM", 3.0, 2.0),
        ):
            name = d.distribution["distribution_id"] + ("" if draw == 0 else f"#{draw}")
            u = np.random.default_rng(_seed_of(17, name)).random(n)
            favoured = (in_order[column] == value).to_numpy()
            np.testing.assert_array_equal(d.favored, favoured)
            np.testing.assert_array_equal(d.codes, _codes_by_hand(u, favoured, tw, cw, k))
    long = assign_treatments(units, dists, perts, 17)
    first = [d.codes for d in treatment_draws(units, dists, perts, 17).draws]
    assert long["perturbation_id"].tolist() == list(
        np.array(["P0", "P1", "P3"])[np.concatenate(first)]
    )
    assert long["is_favored"].sum() == 2 * 60 + 60


# --------------------------------------------------------------------------- effects


def test_summarise_draws_by_hand() -> None:
    """Two distributions x three draws; distribution 1 lacks draw 1 (an empty arm). Rows are
    numbered r * 2 + d. Means, sample sds (ddof 1), counts as rounded means, the overlap
    counts' max, n_draws and the draws left out, all by hand."""
    per_draw = pd.DataFrame(
        {
            "draw": [1, 5, 0, 2, 4],  # d = 1, 1, 0, 0, 0 (draw 1 of d = 1 is missing)
            "perturbation_id": "P1",
            "ape_observational": [-4.0, 2.0, 1.0, 2.0, 6.0],
            "ape_matched": [-1.0, -3.0, 0.5, 1.5, 1.0],
            "ape_oracle": [-2.0, -2.0, 0.7, 0.7, 0.7],
            "matching_error": [1.0, -1.0, -0.2, 0.8, 0.3],
            "pie_percent": [300.0, 100.0, 50.0, 50.0, 500.0],
            "n_treated": [4, 5, 10, 11, 15],
            "n_control": [9, 9, 5, 5, 8],
            "strata_without_overlap": [0, 0, 0, 2, 1],
            "n_strata": [6, 5, 3, 3, 2],
            "estimand": "ATE",
        }
    )
    out = summarise_draws(per_draw, 2, draws=3)
    assert out["d"].tolist() == [0, 1]
    out = out.set_index("d")
    assert out.loc[0, "ape_observational"] == pytest.approx(3.0)
    assert out.loc[0, "ape_matched"] == pytest.approx(1.0)
    assert out.loc[1, "ape_matched"] == pytest.approx(-2.0)
    assert out.loc[0, "pie_percent"] == pytest.approx(200.0)
    assert out.loc[0, "matching_error"] == pytest.approx(0.3)
    assert out.loc[1, "ape_oracle"] == pytest.approx(-2.0)
    # sds: (1, 2, 6): mean 3, squares 4 + 1 + 9 = 14 over 2 -> sqrt 7; (0.5, 1.5, 1) -> 0.5
    assert out.loc[0, "ape_observational_sd"] == pytest.approx(np.sqrt(7.0))
    assert out.loc[0, "ape_matched_sd"] == pytest.approx(0.5)
    # (50, 50, 500): mean 200, deviations -150, -150, 300
    assert out.loc[0, "pie_percent_sd"] == pytest.approx(np.sqrt((150.0**2 * 2 + 300.0**2) / 2))
    assert out.loc[1, "ape_matched_sd"] == pytest.approx(np.sqrt(2.0))  # (-1, -3)
    # counts: means 36 / 3 = 12 (median 11), 18 / 3 = 6 (median 5); (4 + 5) / 2 = 4.5 -> 4
    assert out.index.tolist() == [0, 1]
    assert out.loc[0, "n_treated"] == 12 and out.loc[0, "n_control"] == 6
    assert out.loc[1, "n_treated"] == 4 and out.loc[1, "n_control"] == 9
    assert out.loc[0, "strata_without_overlap"] == 2 and out.loc[0, "n_strata"] == 3
    assert out.loc[1, "n_strata"] == 6
    assert out["n_draws"].tolist() == [3, 2]
    assert out["n_draws_left_out"].tolist() == [0, 1]
    assert out["estimand"].tolist() == ["ATE", "ATE"]
    assert summarise_draws(per_draw, 2)["n_draws_left_out"].tolist() == [0, 0]


def _effects_rows() -> pd.DataFrame:
    keys = {"run_id": "r", "system_id": "S", "perturbation_id": "P1", "outcome": "o"}
    return pd.DataFrame(
        {
            **keys,
            "confounder": ["industry"] * 3 + ["ticker"] * 2,
            "distribution_id": ["d1", "d2", "d3", "c1", "c2"],
            "ape_matched": [-3.0, 2.0, 1.0, 0.5, -0.25],
            "ape_matched_sd": [0.6, 0.2, 0.1, 0.15, 0.3],
            "ape_oracle": [-2.5, 1.5, 4.0, 0.4, -0.1],
            "pie_percent": [10.0, 40.0, 40.0, 5.0, 7.0],
            "pie_percent_sd": [1.0, 2.0, 6.0, 0.45, 0.75],
            "n_draws": [4, 4, 3, 9, 9],
            "n_draws_left_out": [0, 0, 1, 2, 0],
            "estimand": "ATT",
        }
    )


@pytest.mark.parametrize(
    "aggregation,expected",
    [
        (
            "max",
            # (measure, confounder): raw, spread, oracle, worst, aggregation
            {
                ("ape", "industry"): (3.0, 0.6 / 2, 4.0, "d1", "max_abs"),
                ("pie", "industry"): (40.0, 2.0 / 2, np.nan, "d2", "max"),  # d2, d3 tie
                ("ape", "company"): (0.5, 0.15 / 3, 0.4, "c1", "max_abs"),
                ("pie", "company"): (7.0, 0.75 / 3, np.nan, "c2", "max"),
            },
        ),
        (
            "mean",
            {
                ("ape", "industry"): (2.0, 0.3 / 2, 8.0 / 3, None, "mean_abs"),  # sd median 0.2
                ("pie", "industry"): (30.0, 3.0 / 2, np.nan, None, "mean"),  # sd median 2
                ("ape", "company"): (0.375, 0.225 / 3, 0.25, None, "mean_abs"),
                ("pie", "company"): (6.0, 0.6 / 3, np.nan, None, "mean"),
            },
        ),
    ],
)
def test_effect_scores_by_hand(aggregation: str, expected: dict) -> None:
    """Raw APE = max (mean) of |APE_m| over a confounder's distributions, raw PIE = max
    (mean) of PIE %; the spread is the worst distribution's sd (the mean sd) over
    sqrt(n_draws); the oracle score aggregates |ape_oracle| on its own (its worst, d3, is
    not APE's worst, d1); the draws left out are summed."""
    out = effect_scores(_effects_rows(), aggregation)
    assert len(out) == 4
    for _, row in out.iterrows():
        raw, spread, oracle, worst, how = expected[(row["measure"], row["confounder"])]
        assert row["metric"] == f"{row['measure']}_{row['confounder']}"
        assert row["raw_score"] == pytest.approx(raw)
        assert row["score_spread"] == pytest.approx(spread)
        if np.isnan(oracle):
            assert np.isnan(row["oracle_score"])
        else:
            assert row["oracle_score"] == pytest.approx(oracle)
        if worst is None:
            assert pd.isna(row["worst_distribution_id"])
        else:
            assert row["worst_distribution_id"] == worst
        assert row["aggregation"] == how
        assert row["estimand"] == "ATT"
        industry = row["confounder"] == "industry"
        assert row["n_distributions"] == (3 if industry else 2)
        assert row["n_draws"] == (4 if industry else 9)
        assert row["n_draws_left_out"] == (1 if industry else 2)


def test_effect_scores_of_rows_from_before_draws_were_left_out() -> None:
    """Rows without an n_draws_left_out column (written before draws could be left out)
    left none out."""
    out = effect_scores(_effects_rows().drop(columns="n_draws_left_out"), "max")
    assert (out["n_draws_left_out"] == 0).all()


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


def test_draw_seed_defaults_to_the_single_draw() -> None:
    """draw_seed(seed, id) without a draw number is draw 0: the per-distribution seed."""
    assert draw_seed(7, "industry:Tech").entropy == _seed_of(7, "industry:Tech").entropy
    assert draw_seed(7, "industry:Tech", 3).entropy == _seed_of(7, "industry:Tech#3").entropy


def three_units_two_distributions() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Units A (Tech, two dates) and B (Bank); distributions d1 (industry Tech), d2 (company B)."""
    units = pd.DataFrame(
        {
            "ticker": ["A", "A", "B"],
            "industry": ["Tech", "Tech", "Bank"],
            "window_end_date": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-01"]),
        }
    )
    dists = pd.DataFrame(
        [["d1", "industry", "Tech", 2.0, 1.0], ["d2", "company", "B", 2.0, 1.0]],
        columns=DISTRIBUTION_COLUMNS,
    )
    return units, dists


def test_treatment_draws_refuse_duplicate_ids_and_tickers_in_two_industries() -> None:
    units, dists = three_units_two_distributions()
    assert len(list(treatment_draws(units, dists, ["P0", "P1"], 1).draws)) == 2
    with pytest.raises(ValueError, match="unique"):
        treatment_draws(units, pd.concat([dists, dists.head(1)]), ["P0", "P1"], 1)
    moved = units.assign(industry=["Tech", "Bank", "Bank"])  # A in Tech, then in Bank
    with pytest.raises(ValueError, match="more than one industry"):
        treatment_draws(moved, dists, ["P0", "P1"], 1)


def test_derived_distributions_stop_at_24_companies_by_default() -> None:
    """30 companies, 3 in industry Bank and 27 in Tech: round robin takes Bank's and Tech's
    first, then their second, third (Bank is then exhausted), then Tech alone up to 24."""
    tickers = [f"B{i}" for i in range(3)] + [f"T{i:02d}" for i in range(27)]
    companies = pd.DataFrame({"ticker": tickers, "industry": ["Bank"] * 3 + ["Tech"] * 27})
    out = study_distributions(companies)
    chosen = out.loc[out["confounder"] == "company", "favored_value"].tolist()
    assert len(chosen) == 24
    assert set(chosen) == {"B0", "B1", "B2", *[f"T{i:02d}" for i in range(21)]}
    assert out.loc[out["confounder"] == "industry", "favored_value"].tolist() == ["Bank", "Tech"]
    twice = pd.concat([companies, companies.head(1).assign(industry="Tech")])
    with pytest.raises(ValueError, match="more than one industry"):
        default_distributions(twice)
    with pytest.raises(ValueError, match="more than one industry"):
        study_distributions(twice)


def test_seeded_distributions_keep_the_studys_values_only() -> None:
    """source="seed": the override's rows whose favoured value is in the study, sorted by
    id, with exactly the distribution columns (a fresh 0..n-1 index, no extra column)."""
    companies = pd.DataFrame({"ticker": ["A", "B"], "industry": ["Tech", "Bank"]})
    override = pd.DataFrame(
        [
            ["z", "company", "B", 2.0, 1.0],
            ["y", "industry", "Pharma", 2.0, 1.0],  # not in the study
            ["x", "ticker", "A", 3.0, 1.0],
            ["w", "company", "Tech", 2.0, 1.0],  # a company named like an industry: no
            ["v", "industry", "Tech", 2.0, 1.0],
        ],
        columns=DISTRIBUTION_COLUMNS,
    )
    out = study_distributions(companies, source="seed", override=override)
    assert list(out.columns) == DISTRIBUTION_COLUMNS
    assert out.index.tolist() == [0, 1, 2]
    assert out["distribution_id"].tolist() == ["v", "x", "z"]


STUDY = pd.DataFrame({"ticker": ["A", "B", "C", "D"], "industry": ["Tech", "Tech", "Bank", "Bank"]})


def _study_errors() -> pd.DataFrame:
    """One system over 4 tickers x 25 days under P0 and P1: a level per ticker, noise, and
    a true effect of P1 that differs by ticker."""
    rng = np.random.default_rng(12)
    days = pd.bdate_range("2021-03-01", periods=25)
    frames = []
    for i, ticker in enumerate(STUDY["ticker"]):
        y0 = 2.0 + 3.0 * i + rng.gamma(2.0, 0.5, days.size)
        for p, shift in (("P0", 0.0), ("P1", 1.0 + i)):
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": "r",
                        "system_id": "s",
                        "ticker": ticker,
                        "industry": STUDY["industry"][i],
                        "window_end_date": days,
                        "perturbation_id": p,
                        "max_abs_residual": y0 + shift,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def test_study_effects_default_to_one_draw_re_derived_by_hand() -> None:
    """study_effects with its defaults (one draw, ATE, the confounder's own strata): every
    row's draw is re-derived from the documented seed and weights, and its APE_o, APE_m
    (unit-level brute force) and oracle recomputed from the grid."""
    errors = _study_errors()
    dists = study_distributions(STUDY)
    sets = pd.DataFrame(
        {"run_id": "r", "system_id": ["s"], "perturbation_set": "P0 P1", "has_effects": True}
    )
    got = study_effects(errors, sets, dists, 5)
    assert len(got) == len(dists) == 6
    assert (got["n_draws"] == 1).all() and (got["n_draws_left_out"] == 0).all()
    assert got["ape_matched_sd"].isna().all()
    wide = errors.pivot_table(
        index=["ticker", "window_end_date"], columns="perturbation_id", values="max_abs_residual"
    )  # rows sorted by (ticker, date): the unit order of the draws
    grid = wide[["P0", "P1"]].to_numpy()
    tickers = wide.index.get_level_values("ticker").to_numpy()
    industries = tickers.copy()
    industries[np.isin(tickers, ["A", "B"])] = "Tech"
    industries[np.isin(tickers, ["C", "D"])] = "Bank"
    for _, row in got.iterrows():
        column = tickers if row["confounder"] == "company" else industries
        u = np.random.default_rng(_seed_of(5, row["distribution_id"])).random(grid.shape[0])
        codes = _codes_by_hand(u, column == row["favored_value"], 2.0, 1.0, 1)
        y = grid[np.arange(codes.size), codes]
        treated = codes == 1
        assert row["n_treated"] == treated.sum() and row["n_control"] == (~treated).sum()
        assert row["ape_observational"] == pytest.approx(y[treated].mean() - y[~treated].mean())
        assert row["ape_matched"] == pytest.approx(brute_force_ape(y, treated, column, "ATE"))
        assert row["ape_oracle"] == pytest.approx((grid[:, 1] - grid[:, 0]).mean())


def test_draw_matrix_shapes_and_meta() -> None:
    """Rows r * D + d; the meta frame has the distributions' columns only; no matching
    distribution gives a (0 x units) matrix; zero draws are refused."""
    units, dists = three_units_two_distributions()
    meta, matrix = draw_matrix(units, dists, ["P1", "P0"], 3, 2)
    assert list(meta.columns) == DISTRIBUTION_COLUMNS
    assert meta["distribution_id"].tolist() == ["d1", "d2"]
    assert matrix.shape == (4, 3)
    second = [d.codes for d in treatment_draws(units, dists, ["P0", "P1"], 3, draw=1).draws]
    labels = np.array(["P1", "P0"])  # draw_matrix's codes index its own labels
    assert labels[matrix[2]].tolist() == np.array(["P0", "P1"])[second[0]].tolist()
    none = dists.assign(favored_value=["Pharma", "Z"])
    meta, matrix = draw_matrix(units, none, ["P0", "P1"], 3, 2)
    assert meta.empty and matrix.shape == (0, 3)
    with pytest.raises(ValueError, match=">= 1"):
        draw_matrix(units, dists, ["P0", "P1"], 3, 0)


def test_assignments_come_in_run_order_whatever_the_order_of_the_sets() -> None:
    """treatment_assignments lists run r1 before r2 even when the perturbation sets name r2
    first, and each run's windows draw as that run alone would."""
    days = pd.to_datetime(["2021-01-04", "2021-01-05"])
    errors = pd.concat(
        [
            pd.DataFrame({"run_id": run, "ticker": t, "industry": "Tech", "window_end_date": days})
            for run in ("r2", "r1")
            for t in ("A", "B")
        ],
        ignore_index=True,
    )
    sets = pd.DataFrame(
        {
            "run_id": ["r2", "r1"],
            "system_id": ["s", "s"],
            "perturbation_set": "P0 P1",
            "has_effects": True,
        }
    )
    dists = pd.DataFrame([["d1", "industry", "Tech", 2.0, 1.0]], columns=DISTRIBUTION_COLUMNS)
    out = treatment_assignments(errors, sets, dists, 4)
    assert out["run_id"].tolist() == ["r1"] * 4 + ["r2"] * 4
    alone = treatment_assignments(errors[errors["run_id"] == "r1"], sets.tail(1), dists, 4)
    assert out.head(4)["perturbation_id"].tolist() == alone["perturbation_id"].tolist()
