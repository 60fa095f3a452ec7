"""Unit tests for tsrate.methods.causal.estimators: confounded assignment, PSM effects (APE/PIE), worst case."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.causal.estimators import (
    ASSIGNMENT_COLUMNS,
    DISTRIBUTION_COLUMNS,
    EFFECT_COLUMNS,
    assign_treatments,
    default_distributions,
    distribution_seed,
    grid_perturbation_effects,
    nearest_neighbour_means,
    perturbation_effects,
    propensity_scores,
    stratum_propensity,
    treatment_draws,
    worst_case,
)

PERTS = ["P0", "P1", "P2", "P3", "P4", "P5", "P6"]
COMPANIES = pd.DataFrame(
    {
        "ticker": ["META", "GOOG", "PFE", "MRK", "WFC", "C"],
        "industry": ["Tech", "Tech", "Pharma", "Pharma", "Finance", "Finance"],
    }
)


def make_units(n_dates: int, companies: pd.DataFrame = COMPANIES) -> pd.DataFrame:
    dates = pd.DataFrame({"window_end_date": pd.bdate_range("2000-01-03", periods=n_dates)})
    return companies.merge(dates, how="cross")


def stratified(y: np.ndarray, treated: np.ndarray, strata: np.ndarray, estimand: str) -> float:
    """Independent estimate by exact stratification on the confounder."""
    total, weight_sum = 0.0, 0.0
    for s in np.unique(strata):
        in_s = strata == s
        diff = y[in_s & treated].mean() - y[in_s & ~treated].mean()
        w = (in_s & treated).sum() if estimand == "ATT" else in_s.sum()
        total += w * diff
        weight_sum += w
    return total / weight_sum


# --------------------------------------------------------------------------- assignment


def test_default_distributions() -> None:
    dists = default_distributions(COMPANIES.sample(frac=1.0, random_state=1))
    assert list(dists.columns) == DISTRIBUTION_COLUMNS
    assert dists["distribution_id"].tolist() == [
        "DI1", "DI2", "DI3", "DC1", "DC2", "DC3", "DC4", "DC5", "DC6",
    ]  # fmt: skip
    assert dists["favored_value"].tolist() == [
        "Finance", "Pharma", "Tech", "C", "WFC", "MRK", "PFE", "GOOG", "META",
    ]  # fmt: skip
    assert dists["confounder"].tolist() == ["industry"] * 3 + ["company"] * 6
    assert (dists["treated_weight"] == 2.0).all() and (dists["control_weight"] == 1.0).all()


def test_assignment_reproducible_and_order_independent() -> None:
    units = make_units(50)
    dists = default_distributions(COMPANIES)
    a = assign_treatments(units, dists, PERTS, seed=7)
    assert list(a.columns) == ASSIGNMENT_COLUMNS
    assert len(a) == len(units) * len(dists)
    b = assign_treatments(units.sample(frac=1.0, random_state=3), dists, PERTS[::-1], seed=7)
    pd.testing.assert_frame_equal(a, b)
    # a distribution's draw does not change when another one is added, removed or reordered
    only = assign_treatments(units, dists[dists.distribution_id == "DC2"], PERTS, seed=7)
    pd.testing.assert_frame_equal(
        only, a[a.distribution_id == "DC2"].reset_index(drop=True), check_dtype=False
    )
    extra = pd.concat(
        [dists, pd.DataFrame([["DX9", "industry", "Tech", 5.0, 1.0]], columns=dists.columns)]
    )
    c = assign_treatments(units, extra.iloc[::-1], PERTS, seed=7)
    pd.testing.assert_frame_equal(c[c.distribution_id != "DX9"].reset_index(drop=True), a)
    # a different seed gives a different draw
    d = assign_treatments(units, dists, PERTS, seed=8)
    assert (d["perturbation_id"] != a["perturbation_id"]).mean() > 0.5
    # the per-distribution seed is stable (no salted hash)
    assert distribution_seed(7, "DC2").entropy == distribution_seed(7, "DC2").entropy
    assert distribution_seed(7, "DC2").entropy != distribution_seed(7, "DC3").entropy


def test_treatment_draws_are_assign_treatments_as_codes() -> None:
    units = make_units(60)
    dists = default_distributions(COMPANIES)
    long = assign_treatments(units, dists, PERTS, seed=3)
    drawn = treatment_draws(units.sample(frac=1.0, random_state=2), dists, PERTS, seed=3)
    assert drawn.perturbations.tolist() == sorted(PERTS)
    for i, draw in enumerate(drawn.draws):
        block = long.iloc[i * len(units) : (i + 1) * len(units)]
        assert (block["distribution_id"] == draw.distribution["distribution_id"]).all()
        assert block["perturbation_id"].tolist() == drawn.perturbations[draw.codes].tolist()
        assert block["is_favored"].tolist() == draw.favored.tolist()
        assert block["ticker"].tolist() == drawn.units["ticker"].tolist()
    # the inversion of the uniform draw: a reference with np.searchsorted
    dist = dists.sort_values("distribution_id").iloc[0]
    u = np.random.default_rng(distribution_seed(3, dist["distribution_id"])).random(len(units))
    base = units.sort_values(["ticker", "window_end_date"], kind="mergesort")
    favored = (base[confounder_col(dist["confounder"])] == dist["favored_value"]).to_numpy()
    k = len(PERTS) - 1
    fav_cum = np.cumsum([1.0, *[2.0] * k]) / (1 + 2 * k)
    uni_cum = np.arange(1, k + 2) / (k + 1)
    ref = np.where(
        favored,
        np.searchsorted(fav_cum, u, side="right"),
        np.searchsorted(uni_cum, u, side="right"),
    )
    first = long[long["distribution_id"] == dist["distribution_id"]]
    assert first["perturbation_id"].tolist() == np.array(sorted(PERTS))[np.minimum(ref, k)].tolist()


def confounder_col(confounder: str) -> str:
    return "ticker" if confounder == "company" else confounder


def test_assignment_flags_and_alias() -> None:
    units = make_units(20)
    dists = pd.DataFrame(
        [
            ["D1", "company", "PFE", 2, 1],
            ["D2", "ticker", "PFE", 2, 1],
            ["D3", "industry", "Tech", 2, 1],
        ],
        columns=DISTRIBUTION_COLUMNS,
    )
    out = assign_treatments(units, dists, PERTS, seed=1)
    d1 = out[out.distribution_id == "D1"]
    assert (d1["is_favored"] == (d1["ticker"] == "PFE")).all()
    assert d1["confounder"].eq("company").all() and d1["favored_value"].eq("PFE").all()
    d3 = out[out.distribution_id == "D3"]
    assert (d3["is_favored"] == (d3["industry"] == "Tech")).all()
    assert set(out["perturbation_id"]) == set(PERTS)


def test_assignment_weights_respected() -> None:
    """Favored windows: P0 share 1/(1+2k), each treatment 2/(1+2k); others uniform 1/(k+1)."""
    units = make_units(8000)  # 48 000 windows, 16 000 favored (Tech)
    dists = pd.DataFrame([["DI", "industry", "Tech", 2.0, 1.0]], columns=DISTRIBUTION_COLUMNS)
    out = assign_treatments(units, dists, PERTS, seed=123)
    k = len(PERTS) - 1
    fav = out[out.is_favored]["perturbation_id"].value_counts(normalize=True)
    other = out[~out.is_favored]["perturbation_id"].value_counts(normalize=True)
    n_fav, n_other = int(out.is_favored.sum()), int((~out.is_favored).sum())

    def tol(p: float, n: int) -> float:
        return 4.5 * np.sqrt(p * (1 - p) / n)

    assert fav["P0"] == pytest.approx(1 / (1 + 2 * k), abs=tol(1 / 13, n_fav))
    for p in PERTS[1:]:
        assert fav[p] == pytest.approx(2 / (1 + 2 * k), abs=tol(2 / 13, n_fav))
    for p in PERTS:
        assert other[p] == pytest.approx(1 / (k + 1), abs=tol(1 / 7, n_other))
    # custom weights and a reduced perturbation set (only those a system accepts)
    dists = pd.DataFrame([["DC", "company", "META", 3.0, 1.0]], columns=DISTRIBUTION_COLUMNS)
    out = assign_treatments(units, dists, ["P0", "P1", "P2"], seed=5)
    fav = out[out.is_favored]["perturbation_id"].value_counts(normalize=True)
    assert set(out["perturbation_id"]) == {"P0", "P1", "P2"}
    assert fav["P0"] == pytest.approx(1 / 7, abs=tol(1 / 7, 8000))


def test_assignment_validation() -> None:
    units = make_units(5)
    dists = pd.DataFrame([["D1", "company", "XXX", 2, 1]], columns=DISTRIBUTION_COLUMNS)
    with pytest.raises(ValueError, match="matches no unit"):
        assign_treatments(units, dists, PERTS, seed=0)
    assert assign_treatments(units, dists, PERTS, seed=0, missing_favored="drop").empty
    kept = assign_treatments(units, dists, PERTS, seed=0, missing_favored="keep")
    assert len(kept) == len(units) and not kept["is_favored"].any()
    ok = pd.DataFrame([["D1", "industry", "Tech", 2, 1]], columns=DISTRIBUTION_COLUMNS)
    with pytest.raises(ValueError, match="control"):
        assign_treatments(units, ok, ["P1", "P2"], seed=0)
    with pytest.raises(ValueError, match="one row per"):
        assign_treatments(pd.concat([units, units.head(1)]), ok, PERTS, seed=0)
    bad = ok.assign(treated_weight=0)
    with pytest.raises(ValueError, match="treated_weight"):
        assign_treatments(units, bad, PERTS, seed=0)
    with pytest.raises(ValueError, match="unknown confounder"):
        assign_treatments(units, ok.assign(confounder="sector"), PERTS, seed=0)


# --------------------------------------------------------------------------- matching pieces


def test_propensity_equals_stratum_share() -> None:
    rng = np.random.default_rng(0)
    strata = rng.integers(0, 5, size=4000)
    treated = rng.random(4000) < np.array([0.2, 0.35, 0.5, 0.65, 0.8])[strata]
    per_stratum, per_unit = propensity_scores(strata, treated)
    shares = [treated[strata == s].mean() for s in range(5)]
    np.testing.assert_allclose(per_stratum, shares, atol=1e-7)
    assert np.array_equal(per_unit, per_stratum[strata])


def test_closed_form_propensity_is_the_logistic_fit() -> None:
    rng = np.random.default_rng(1)
    strata = rng.integers(0, 6, size=3000)
    treated = rng.random(3000) < np.array([0.1, 0.3, 0.5, 0.5, 0.7, 0.9])[strata]
    fitted, _ = propensity_scores(strata, treated)
    n_t = np.bincount(strata[treated], minlength=6)
    n_c = np.bincount(strata[~treated], minlength=6)
    np.testing.assert_allclose(stratum_propensity(n_t, n_c), fitted, atol=1e-7)
    # equal shares are bit-identical (1/3 vs 2/6), so the matching sees them as tied
    assert stratum_propensity(np.array([1, 2]), np.array([2, 4])).tolist() == [1 / 3, 1 / 3]


def test_nearest_neighbour_means_averages_ties() -> None:
    pool = np.array([0.3, 0.3, 0.3, 0.6, 0.9])
    vals = np.array([0.0, 10.0, 20.0, 5.0, 7.0])
    got = nearest_neighbour_means(np.array([0.3, 0.61, 0.95, 0.0, 0.45]), pool, vals)
    # 0.45 is equidistant from 0.3 and 0.6 (within tolerance): all four units are matches
    np.testing.assert_allclose(got, [10.0, 5.0, 7.0, 10.0, 35.0 / 4])


# --------------------------------------------------------------------------- effects


def confounded_data(
    seed: int = 0,
    n_dates: int = 1500,
    effect: float = 3.0,
    heterogeneous: bool = False,
    treated_weight: float = 2.0,
    perturbations: tuple[str, ...] = tuple(PERTS),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Synthetic system: Y(P0) = industry base + unit noise, Y(Pk) = Y(P0) + effect
    (industry-specific when heterogeneous). Returns (full grid, assignment DI favoring the
    high-base industry)."""
    rng = np.random.default_rng(seed)
    units = make_units(n_dates)
    base = units["industry"].map({"Tech": 100.0, "Pharma": 50.0, "Finance": 10.0}).to_numpy()
    eff = (
        units["industry"].map({"Tech": 10.0, "Pharma": 1.0, "Finance": 0.0}).to_numpy()
        if heterogeneous
        else np.full(len(units), effect)
    )
    y0 = base + rng.normal(0, 2.0, size=len(units))
    grid = pd.concat(
        [
            units.assign(perturbation_id=p, max_abs_residual=y0 + (0 if p == "P0" else 1) * eff)
            for p in perturbations
        ],
        ignore_index=True,
    )
    dists = pd.DataFrame(
        [["DI1", "industry", "Tech", treated_weight, 1.0]], columns=DISTRIBUTION_COLUMNS
    )
    assigned = assign_treatments(units, dists, list(perturbations), seed=seed)
    observed = assigned.merge(
        grid, on=["ticker", "industry", "window_end_date", "perturbation_id"], how="left"
    )
    return grid, observed


def test_known_effect_recovered_and_observational_biased() -> None:
    grid, observed = confounded_data(effect=3.0)
    out = perturbation_effects(observed, "industry", full_grid=grid)
    assert list(out.columns) == EFFECT_COLUMNS
    assert out["perturbation_id"].tolist() == PERTS[1:]
    np.testing.assert_allclose(out["ape_oracle"], 3.0, rtol=1e-12)
    # favoring Tech (highest errors) inflates the naive difference of means
    assert (out["ape_observational"] > 3.0 + 5.0).all()
    np.testing.assert_allclose(out["ape_matched"], 3.0, atol=0.25)
    np.testing.assert_allclose(out["matching_error"], out["ape_matched"] - 3.0)
    np.testing.assert_allclose(
        out["pie_percent"], (out["ape_observational"].abs() - out["ape_matched"].abs()).abs() * 100
    )
    assert (out["strata_without_overlap"] == 0).all() and (out["n_strata"] == 3).all()
    counts = observed["perturbation_id"].value_counts()
    assert out["n_control"].eq(counts["P0"]).all()
    assert out["n_treated"].tolist() == [counts[p] for p in PERTS[1:]]


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_matched_equals_exact_stratification(estimand: str) -> None:
    """With ties averaged and both arms in every stratum, 1-NN propensity matching on a
    discrete confounder is exact stratification: ATE weights stratum differences by stratum
    size, ATT by treated count."""
    grid, observed = confounded_data(seed=4, n_dates=300, heterogeneous=True)
    for confounder, column in (("industry", "industry"), ("company", "ticker")):
        out = perturbation_effects(observed, confounder, estimand=estimand).set_index(
            "perturbation_id"
        )
        for p in PERTS[1:]:
            sub = observed[observed.perturbation_id.isin([p, "P0"])]
            expected = stratified(
                sub["max_abs_residual"].to_numpy(),
                (sub["perturbation_id"] == p).to_numpy(),
                sub[column].to_numpy(),
                estimand,
            )
            assert out.loc[p, "ape_matched"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_closed_form_equals_logistic_matching(estimand: str) -> None:
    """The default closed-form propensity gives the logistic-fit result up to rounding, with
    overlap in every stratum and also with strata that have one arm only (matched to the
    nearest other stratum) as long as no two candidates share a score."""
    grid, observed = confounded_data(seed=6, n_dates=200, heterogeneous=True)
    for confounder in ("industry", "company"):
        share = perturbation_effects(observed, confounder, estimand=estimand, full_grid=grid)
        logistic = perturbation_effects(
            observed, confounder, estimand=estimand, full_grid=grid, propensity="logistic"
        )
        pd.testing.assert_frame_equal(share, logistic, rtol=1e-10, atol=1e-10)
    one_arm = pd.DataFrame(
        {
            "industry": ["A"] * 4 + ["B"] * 5 + ["C"] * 3 + ["D"] * 2,
            "perturbation_id": ["P0", "P1", "P1", "P1"]
            + ["P0", "P0", "P1", "P0", "P0"]
            + ["P1"] * 3
            + ["P0"] * 2,
            "max_abs_residual": [
                1.0,
                2.0,
                4.0,
                3.0,
                5.0,
                7.0,
                6.0,
                5.5,
                8.0,
                9.0,
                9.5,
                10.0,
                0.0,
                1.0,
            ],
        }
    )
    share = perturbation_effects(one_arm, "industry", estimand=estimand)
    logistic = perturbation_effects(one_arm, "industry", estimand=estimand, propensity="logistic")
    assert share["strata_without_overlap"].item() == 2
    assert share["ape_matched"].item() == pytest.approx(logistic["ape_matched"].item(), abs=1e-9)
    with pytest.raises(ValueError, match="propensity"):
        perturbation_effects(one_arm, "industry", propensity="probit")


def test_grid_effects_equal_perturbation_effects_per_distribution() -> None:
    """grid_perturbation_effects (many distributions of one system at once, from a
    units x perturbations matrix) equals perturbation_effects on each distribution's
    observed rows with the full grid."""
    units = make_units(150)
    rng = np.random.default_rng(8)
    base = (
        units["ticker"]
        .map(dict(zip(COMPANIES.ticker, [5.0, 9.0, 2.0, 4.0, 7.0, 1.0], strict=True)))
        .to_numpy()
    )
    y0 = base + rng.normal(0, 1.0, len(units))
    outcomes = np.column_stack([y0 + k * (1 + base / 10) for k in range(4)])
    perts = ["P0", "P1", "P2", "P3"]
    grid = pd.concat(
        [
            units.assign(perturbation_id=p, max_abs_residual=outcomes[:, k])
            for k, p in enumerate(perts)
        ],
        ignore_index=True,
    )
    dists = default_distributions(COMPANIES).head(5)
    drawn = treatment_draws(units, dists, perts, seed=11)
    order = drawn.units.merge(units.reset_index(), on=["ticker", "industry", "window_end_date"])
    matrix = outcomes[order["index"].to_numpy()]
    draws = list(drawn.draws)
    assigned = np.stack([d.codes for d in draws]).astype(np.int64)
    assigned[1, :7] = -1  # a distribution that leaves some windows out
    strata = {
        "industry": pd.factorize(drawn.units["industry"], sort=True)[0],
        "ticker": pd.factorize(drawn.units["ticker"], sort=True)[0],
    }
    per_draw = [
        strata["ticker" if d.distribution["confounder"] == "company" else "industry"] for d in draws
    ]
    for estimand in ("ATE", "ATT"):
        got = grid_perturbation_effects(matrix, perts, assigned, per_draw, estimand=estimand)
        assert list(got.columns) == ["draw", *EFFECT_COLUMNS]
        for i, draw in enumerate(draws):
            keep = assigned[i] >= 0
            observed = drawn.units.loc[keep].assign(
                perturbation_id=np.array(perts)[assigned[i][keep]],
                max_abs_residual=matrix[keep, assigned[i][keep]],
            )
            expected = perturbation_effects(
                observed, draw.distribution["confounder"], estimand=estimand, full_grid=grid
            )
            mine = got[got["draw"] == i].drop(columns="draw").reset_index(drop=True)
            pd.testing.assert_frame_equal(mine, expected, rtol=1e-12, atol=1e-12)


def test_att_and_ate_differ_with_heterogeneous_effects() -> None:
    grid, observed = confounded_data(
        seed=2, heterogeneous=True, treated_weight=8.0, perturbations=("P0", "P1")
    )
    ate = perturbation_effects(observed, "industry", estimand="ATE", full_grid=grid)
    att = perturbation_effects(observed, "industry", estimand="att", full_grid=grid)
    assert (att["estimand"] == "ATT").all() and (ate["estimand"] == "ATE").all()
    # true ATE = mean effect over all units = (10 + 1 + 0) / 3; ATT leans to Tech (effect 10)
    np.testing.assert_allclose(ate["ape_oracle"], 11 / 3, rtol=1e-12)
    assert (att["ape_oracle"] > ate["ape_oracle"] + 0.5).all()
    np.testing.assert_allclose(ate["ape_matched"], ate["ape_oracle"], atol=0.3)
    np.testing.assert_allclose(att["ape_matched"], att["ape_oracle"], atol=0.3)
    assert (att["ape_matched"] - ate["ape_matched"] > 0.5).all()
    # ATT oracle is over the units actually assigned p
    for p in ("P1",):
        treated = observed[observed.perturbation_id == p]
        eff = treated["industry"].map({"Tech": 10.0, "Pharma": 1.0, "Finance": 0.0})
        assert att.set_index("perturbation_id").loc[p, "ape_oracle"] == pytest.approx(eff.mean())


def first_index_att(y: np.ndarray, treated: np.ndarray, score: np.ndarray) -> float:
    """The buggy rule DESIGN.md forbids: match each treated unit to the FIRST control at the
    minimal distance."""
    controls = np.flatnonzero(~treated)
    effects = []
    for i in np.flatnonzero(treated):
        dist = np.abs(score[controls] - score[i])
        effects.append(y[i] - y[controls[np.argmin(dist)]])
    return float(np.mean(effects))


def test_tie_rule_matters() -> None:
    """All controls of a stratum share one propensity score. Averaging them gives the
    stratified estimate; taking the first index found would not (this test fails under
    first-index matching)."""
    observed = pd.DataFrame(
        {
            "industry": ["A"] * 5 + ["B"] * 4,
            "perturbation_id": ["P0", "P0", "P0", "P1", "P1", "P0", "P0", "P1", "P1"],
            "max_abs_residual": [0.0, 10.0, 20.0, 5.0, 5.0, 1.0, 2.0, 1.0, 3.0],
        }
    )
    att = perturbation_effects(observed, "industry", estimand="ATT").iloc[0]
    # A: treated 5, 5 vs control mean 10 -> -5 each; B: treated 1, 3 vs control mean 1.5
    expected = np.mean([5 - 10, 5 - 10, 1 - 1.5, 3 - 1.5])
    assert att["ape_matched"] == pytest.approx(expected, abs=1e-12)
    t = (observed["perturbation_id"] == "P1").to_numpy()
    codes = pd.factorize(observed["industry"], sort=True)[0]
    _, score = propensity_scores(codes, t)
    buggy = first_index_att(observed["max_abs_residual"].to_numpy(), t, score)
    assert abs(buggy - att["ape_matched"]) > 1.0
    ate = perturbation_effects(observed, "industry").iloc[0]
    expected_ate = (5 * (5 - 10) + 4 * (2 - 1.5)) / 9
    assert ate["ape_matched"] == pytest.approx(expected_ate, abs=1e-12)
    assert ate["ape_observational"] == pytest.approx(3.5 - 33 / 5)


def test_biased_like_system_company_vs_industry() -> None:
    """Outcome = per-company offset, independent of the perturbation (the paper's Biased
    system). With company as confounder APE_m = 0; with industry as confounder it is not,
    because companies inside an industry have different offsets and the company-favoring
    distribution over-treats one of them."""
    units = make_units(400)
    offsets = {"META": 0.0, "GOOG": 200.0, "PFE": 300.0, "MRK": 400.0, "WFC": 500.0, "C": 600.0}
    dists = pd.DataFrame([["DC1", "company", "META", 2.0, 1.0]], columns=DISTRIBUTION_COLUMNS)
    observed = assign_treatments(units, dists, PERTS, seed=9)
    observed["max_abs_residual"] = observed["ticker"].map(offsets)
    grid = pd.concat(
        [units.assign(perturbation_id=p, max_abs_residual=units.ticker.map(offsets)) for p in PERTS]
    )
    by_company = perturbation_effects(observed, "company", full_grid=grid)
    np.testing.assert_allclose(by_company["ape_matched"], 0.0, atol=1e-9)
    np.testing.assert_allclose(by_company["ape_oracle"], 0.0)
    by_industry = perturbation_effects(observed, "industry", full_grid=grid)
    # META (offset 0) is over-treated inside Tech, so treated Tech windows look better
    assert (by_industry["ape_matched"] < -5.0).all()
    assert (by_industry["matching_error"].abs() > 5.0).all()
    assert (by_company["ape_observational"].abs() > 1.0).all()


def test_strata_without_overlap_reported() -> None:
    observed = pd.DataFrame(
        {
            "industry": ["A", "A", "A", "B", "B", "C", "C"],
            "perturbation_id": ["P0", "P1", "P1", "P0", "P1", "P1", "P1"],
            "max_abs_residual": [1.0, 2.0, 2.0, 5.0, 6.0, 9.0, 9.0],
        }
    )
    out = perturbation_effects(observed, "industry").iloc[0]
    assert out["strata_without_overlap"] == 1
    assert out["n_strata"] == 3
    assert np.isfinite(out["ape_matched"])
    assert np.isnan(out["ape_oracle"]) and np.isnan(out["matching_error"])


def test_effects_validation() -> None:
    observed = pd.DataFrame(
        {"industry": ["A", "A"], "perturbation_id": ["P1", "P2"], "max_abs_residual": [1.0, 2.0]}
    )
    with pytest.raises(ValueError, match="control"):
        perturbation_effects(observed, "industry")
    observed = observed.assign(perturbation_id=["P0", "P1"], max_abs_residual=[1.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        perturbation_effects(observed, "industry")
    with pytest.raises(ValueError, match="estimand"):
        perturbation_effects(observed, "industry", estimand="ATC")


def test_worst_case() -> None:
    values = pd.DataFrame(
        {
            "system_id": ["S1"] * 3 + ["S2"] * 3,
            "perturbation_id": ["P1"] * 6,
            "distribution_id": ["DI1", "DI2", "DI3"] * 2,
            "ape_matched": [1.0, -4.0, 2.0, 0.5, 0.5, np.nan],
        }
    )
    out = worst_case(values, ["system_id", "perturbation_id"], "ape_matched")
    assert out["ape_matched"].tolist() == [4.0, 0.5]
    assert out["worst_distribution_id"].tolist() == ["DI2", "DI1"]
    assert out["n_values"].tolist() == [3, 2]
    mean = worst_case(values, ["system_id", "perturbation_id"], "ape_matched", how="mean")
    assert mean["ape_matched"].tolist() == pytest.approx([-1 / 3, 0.5])
    assert "worst_distribution_id" not in mean.columns
    mx = worst_case(values, ["system_id"], "ape_matched", how="max")
    assert mx["ape_matched"].tolist() == [2.0, 0.5]
    with pytest.raises(ValueError):
        worst_case(values, ["system_id"], "ape_matched", how="median")
