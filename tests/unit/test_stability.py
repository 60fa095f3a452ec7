"""Unit tests for tsrate.methods.stability: robustness scores on date resamples.

Every resampled score is checked against the published estimator applied to PHYSICALLY
replicated rows (a date drawn m times -> its windows copied m times), and the score with
all multiplicities 1 against the estimator on the original rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.effect_study import PERTS, company_errors, error_dates
from tsrate.methods.causal.estimators import grid_perturbation_effects, worst_case
from tsrate.methods.ratings import bootstrap_summary, date_multiplicities
from tsrate.methods.stability import (
    aggregate_distributions,
    date_positions,
    effects_resampled,
    wrs_resampled,
)
from tsrate.methods.wrs import weighted_rejection_pairs, weighted_rejection_scores

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})
COMPANIES = pd.DataFrame(
    {
        "ticker": ["A", "B", "C", "D", "E", "F"],
        "industry": ["Tech", "Tech", "Pharma", "Pharma", "Bank", "Bank"],
    }
)


def window_errors(n_dates: int = 30, seed: int = 0) -> pd.DataFrame:
    """Two systems; 'shaky' has industry and company shifts so that some pairs reject."""
    return company_errors(
        COMPANIES,
        {"steady": 0.0, "shaky": 0.4},
        lambda draws, shift, p_i, j: draws + shift * (j % 3) + 0.3 * p_i,
        "2001-01-01",
        n_dates,
        seed,
    )


def replicate(frame: pd.DataFrame, dates: np.ndarray, weights: np.ndarray) -> pd.DataFrame:
    """Copy every row of a date as often as the date was drawn."""
    times = weights.astype(int)[date_positions(frame["window_end_date"], dates)]
    return frame.loc[frame.index.repeat(times)].reset_index(drop=True)


def reference_wrs(frame: pd.DataFrame, group: str, within: str | None) -> pd.Series:
    pairs = weighted_rejection_pairs(frame, group, LEVELS, within)
    scores = weighted_rejection_scores(pairs)
    return scores.set_index(["system_id", "perturbation_id"])["raw_score"]


@pytest.mark.parametrize("group,within", [("industry", None), ("ticker", "industry")])
def test_wrs_resampled_matches_replicated_rows(group: str, within: str | None) -> None:
    errors = window_errors()
    dates = error_dates(errors)
    mult = date_multiplicities(dates.size, 5, 12, seed=3)
    keys, point, boot = wrs_resampled(errors, group, LEVELS, within, dates, mult)
    index = pd.MultiIndex.from_frame(keys)
    expected = reference_wrs(errors, group, within).reindex(index).to_numpy()
    np.testing.assert_allclose(point, expected)
    assert boot.shape == (12, len(keys))
    for r in range(12):
        replicated = replicate(errors, dates, mult[r])
        got = reference_wrs(replicated, group, within).reindex(index).to_numpy()
        np.testing.assert_allclose(boot[r], got, err_msg=f"resample {r}")
    # the resamples do move the score: otherwise the test would not show anything
    assert np.ptp(boot, axis=0).max() > 0


def test_wrs_resampled_validates_input() -> None:
    errors = window_errors(n_dates=10)
    dates = error_dates(errors)
    mult = np.ones((2, dates.size))
    bad = errors.copy()
    bad.loc[3, "max_abs_residual"] = np.nan
    with pytest.raises(ValueError, match="NaN/infinite"):
        wrs_resampled(bad, "industry", LEVELS, None, dates, mult)
    with pytest.raises(ValueError, match="not among the resampled dates"):
        wrs_resampled(errors, "industry", LEVELS, None, dates[1:], mult[:, 1:])
    moved = errors.copy()
    moved.loc[0, "industry"] = "Bank"  # ticker A now in two industries
    with pytest.raises(ValueError, match="more than one industry"):
        wrs_resampled(moved, "ticker", LEVELS, "industry", dates, mult)


def draws(n_units: int, n_draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, len(PERTS), size=(n_draws, n_units))


def grid_inputs(n_dates: int = 25, seed: int = 1):
    rng = np.random.default_rng(seed)
    n_units = len(COMPANIES) * n_dates
    ticker_code = np.repeat(np.arange(len(COMPANIES)), n_dates)
    industry_code = pd.factorize(COMPANIES["industry"], sort=True)[0][ticker_code]
    day = np.tile(np.arange(n_dates), len(COMPANIES))
    grids = [
        rng.gamma(2.0, 1.0, (n_units, len(PERTS)))
        + np.array([0.0, 0.5, 1.0]) * k
        + 0.3 * industry_code[:, None]
        for k in (1.0, 2.0)
    ]
    assigned = draws(n_units, 4, seed)
    strata = [industry_code, industry_code, ticker_code, ticker_code]
    return grids, assigned, strata, day, n_dates


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_effects_resampled_matches_grid_effects(estimand: str) -> None:
    grids, assigned, strata, day, n_dates = grid_inputs()
    mult = date_multiplicities(n_dates, 4, 8, seed=11)
    weights = np.vstack([np.ones(n_dates), mult])
    treatments, ape, pie = effects_resampled(
        grids, PERTS, assigned, strata, day, weights, "P0", estimand
    )
    assert treatments == ["P1", "P2"]
    for s, grid in enumerate(grids):
        for r in range(weights.shape[0]):
            times = weights[r].astype(int)[day]
            keep = np.repeat(np.arange(day.size), times)
            ref = grid_perturbation_effects(
                grid[keep], PERTS, assigned[:, keep], [x[keep] for x in strata], "P0", estimand
            )
            for d in range(assigned.shape[0]):
                rows = ref[ref["draw"] == d].set_index("perturbation_id")
                np.testing.assert_allclose(
                    ape[s, r, d], rows.loc[treatments, "ape_matched"], rtol=1e-9, atol=1e-12
                )
                np.testing.assert_allclose(
                    pie[s, r, d], rows.loc[treatments, "pie_percent"], rtol=1e-9, atol=1e-10
                )
    assert np.ptp(ape[:, 1:], axis=1).max() > 0


def test_effects_resampled_without_overlap_uses_nearest_stratum() -> None:
    grids, assigned, strata, day, n_dates = grid_inputs(n_dates=12, seed=5)
    # Stratum 0 of the industry draws never gets the control: no overlap there.
    assigned = assigned.copy()
    zero = strata[0] == 0
    assigned[0, zero & (assigned[0] == 0)] = 1
    weights = np.vstack([np.ones(n_dates), date_multiplicities(n_dates, 3, 4, seed=2)])
    _, ape, _ = effects_resampled(grids[:1], PERTS, assigned[:1], strata[:1], day, weights)
    for r in range(weights.shape[0]):
        keep = np.repeat(np.arange(day.size), weights[r].astype(int)[day])
        ref = grid_perturbation_effects(grids[0][keep], PERTS, assigned[:1, keep], strata[0][keep])
        assert ref["strata_without_overlap"].max() >= 1
        np.testing.assert_allclose(ape[0, r, 0], ref["ape_matched"], rtol=1e-9)


def test_effects_resampled_selected_entries_only() -> None:
    """With ``selected`` only the chosen (system, distribution, treatment) entries are
    estimated (the product then holds only the labels they need): each equals the estimator
    on physically replicated rows, the others stay NaN."""
    grids, assigned, strata, day, n_dates = grid_inputs(seed=3)
    weights = np.vstack([np.ones(n_dates), date_multiplicities(n_dates, 4, 3, seed=6)])
    selected = np.zeros((len(grids), assigned.shape[0], 2), dtype=bool)
    selected[0, 0, 1] = True  # system 0 needs P2 (and P0) only in draw 0
    selected[1, 0, 0] = True  # system 1 needs P1 in draw 0
    selected[1, 2, :] = True  # both treatments of system 1 in draw 2 (company strata)
    selected[0, 3, 0] = True
    treatments, ape, pie = effects_resampled(
        grids, PERTS, assigned, strata, day, weights, selected=selected
    )
    assert np.isnan(ape[~np.broadcast_to(selected[:, None], ape.shape)]).all()
    for r in range(weights.shape[0]):
        keep = np.repeat(np.arange(day.size), weights[r].astype(int)[day])
        for s, d, t in zip(*np.nonzero(selected), strict=True):
            ref = grid_perturbation_effects(
                grids[s][keep], PERTS, assigned[d : d + 1, keep], strata[d][keep]
            ).set_index("perturbation_id")
            assert ape[s, r, d, t] == pytest.approx(
                ref.loc[treatments[t], "ape_matched"], rel=1e-9, abs=1e-12
            )
            assert pie[s, r, d, t] == pytest.approx(
                ref.loc[treatments[t], "pie_percent"], rel=1e-9, abs=1e-10
            )


def test_effects_resampled_validates_input() -> None:
    grids, assigned, strata, day, n_dates = grid_inputs(n_dates=5)
    weights = np.ones((1, n_dates))
    with pytest.raises(ValueError, match="control"):
        effects_resampled(grids, ["P1", "P2", "P3"], assigned, strata, day, weights)
    with pytest.raises(ValueError, match="one array per distribution"):
        effects_resampled(grids, PERTS, assigned, strata[:2], day, weights)
    bad = [grids[0].copy()]
    bad[0][:, :] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        effects_resampled(bad, PERTS, assigned, strata, day, weights)


@pytest.mark.parametrize("how", ["max_abs", "max", "mean", "mean_abs"])
def test_aggregate_distributions_matches_worst_case(how: str) -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 5))
    values[1, 2] = np.nan
    values[2, :] = np.nan
    frame = pd.DataFrame(
        {
            "key": np.repeat(np.arange(3), 5),
            "distribution_id": np.tile([f"D{i}" for i in range(5)], 3),
            "v": values.ravel(),
        }
    )
    ref = worst_case(frame, ["key"], "v", how).set_index("key")["v"].reindex(range(3))
    np.testing.assert_allclose(aggregate_distributions(values, how), ref.to_numpy())
    with pytest.raises(ValueError, match="how must be"):
        aggregate_distributions(values, "median")


def test_bootstrap_summary_shares_and_point_rating() -> None:
    groups = pd.DataFrame({"system_id": ["a", "b", "c"], "perturbation_id": ["P1"] * 3})
    point = np.array([0.0, 1.0, 2.0])
    boot = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [0.0, np.nan, 1.0]])
    out = bootstrap_summary(groups, point, boot, 3, 0.9)
    share = out.pivot(index="system_id", columns="rating_level", values="share")
    # a: ratings 1, 3, 1 -> shares 2/3, 0, 1/3; b: 2, 2 (one resample undefined)
    np.testing.assert_allclose(share.loc["a"], [2 / 3, 0.0, 1 / 3])
    np.testing.assert_allclose(share.loc["b"], [0.0, 1.0, 0.0])
    assert out.groupby("system_id")["n_valid"].first().tolist() == [3, 2, 3]
    assert out.groupby("system_id")["rating"].first().tolist() == [1, 2, 3]


def test_matched_effects_equals_unit_level_matching_row_by_row() -> None:
    """The one matching implementation (per-stratum sums, vectorised over rows) agrees with
    unit-level nearest-propensity matching on random strata, including rows whose strata
    lack an arm and equal shares in different strata (ties to average) -- called row by row
    (rows x strata) and for several outcomes sharing the counts (outcomes x rows x strata),
    which must give every outcome exactly its own two-dimensional result."""
    from tsrate.methods.causal.matching import matched_effects

    rng = np.random.default_rng(4)
    rows, strata, outcomes = 400, 7, 3
    n_t = rng.integers(0, 4, size=(rows, strata)).astype(float)
    n_c = rng.integers(0, 4, size=(rows, strata)).astype(float)
    n_t[::5, 0] = n_c[::5, 0] = 0.0  # absent strata
    n_c[1::3, 1] = 0.0  # treated-only strata
    n_t[2::3, 2] = 0.0  # control-only strata
    n_t[:, 3], n_c[:, 3] = n_t[:, 4], n_c[:, 4]  # equal shares in two strata
    sums_t = n_t * rng.normal(2.0, 1.0, size=(outcomes, rows, strata))
    sums_c = n_c * rng.normal(1.0, 1.0, size=(outcomes, rows, strata))

    def unit_level(r: int, estimand: str, sum_t: np.ndarray, sum_c: np.ndarray) -> float:
        """Every unit at its stratum's outcome mean, matched by brute force to all units of
        the other arm at the minimal propensity distance (the stratum's treated share)."""
        share = n_t[r] / np.where(n_t[r] + n_c[r] > 0, n_t[r] + n_c[r], 1.0)
        units = []  # (score, treated, outcome)
        for s in range(strata):  # an empty arm adds no unit (and no 0/0)
            if n_t[r, s]:
                units += [(share[s], True, sum_t[r, s] / n_t[r, s])] * int(n_t[r, s])
            if n_c[r, s]:
                units += [(share[s], False, sum_c[r, s] / n_c[r, s])] * int(n_c[r, s])
        effects = []
        for score, treated, y in units:
            pool = [(abs(score - o_s), o_y) for o_s, o_t, o_y in units if o_t != treated]
            nearest = min(d for d, _ in pool)
            match = np.mean([o_y for d, o_y in pool if d <= nearest + 1e-12])
            if treated or estimand == "ATE":
                effects.append(y - match if treated else match - y)
        return float(np.mean(effects))

    for estimand in ("ATE", "ATT"):
        batched = matched_effects(n_t, sums_t, n_c, sums_c, estimand, 1e-12)
        assert batched.shape == (outcomes, rows)
        for k in range(outcomes):
            got = matched_effects(n_t, sums_t[k], n_c, sums_c[k], estimand, 1e-12)
            np.testing.assert_array_equal(batched[k], got)  # bit for bit, NaN included
            for r in range(rows) if k == 0 else range(0, rows, 7):
                if n_t[r].sum() == 0 or n_c[r].sum() == 0:
                    assert np.isnan(got[r])
                    continue
                ref = unit_level(r, estimand, sums_t[k], sums_c[k])
                assert got[r] == pytest.approx(ref, rel=1e-10, abs=1e-12), (estimand, k, r)
