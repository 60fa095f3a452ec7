"""Unit tests for the study-level APE/PIE pipeline: derived distributions, repeated draws,
both outcomes, scores with spread (tsrate.methods.causal.estimators.study_distributions / draw_seed,
tsrate.methods.causal.effects, tsrate.methods.wrs.wrs_pair_table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tests.support.effect_rows import effect_row
from tsrate.methods.causal.effects import EFFECTS_COLUMNS, effect_scores, study_effects
from tsrate.methods.causal.estimators import (
    DISTRIBUTION_COLUMNS,
    assign_treatments,
    distribution_problems,
    distribution_seed,
    draw_seed,
    grid_perturbation_effects,
    perturbation_effects,
    study_distributions,
    treatment_draws,
)
from tsrate.methods.wrs import wrs_pair_table
from tsrate.platform.marts_io import Units, outcome_grid

PERTS = ["P0", "P1", "P2", "P3"]
COMPANIES = pd.DataFrame(
    {
        "ticker": ["AAPL", "MSFT", "PFE", "MRK", "JPM", "BAC"],
        "industry": ["Tech", "Tech", "Pharma", "Pharma", "Fin", "Fin"],
    }
)
LEVEL = dict(zip(COMPANIES.ticker, [150.0, 250.0, 40.0, 90.0, 130.0, 30.0], strict=True))


def window_errors(n_dates: int = 60, systems=("good", "bad"), seed: int = 3) -> pd.DataFrame:
    """A full grid: every window under every perturbation. System 'bad' has a true effect of
    k x 2 under P_k (plus noise); 'good' none. Outcomes scale with the company's price."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2022-01-03", periods=n_dates)
    rows = []
    for system in systems:
        for ticker, industry in zip(COMPANIES.ticker, COMPANIES.industry, strict=True):
            level = LEVEL[ticker]
            base = level / 20 + rng.gamma(2.0, 0.5, n_dates)
            for k, pert in enumerate(PERTS):
                effect = 2.0 * k if system == "bad" else 0.0
                y = base + effect + rng.normal(0, 0.3, n_dates)
                rows.append(
                    pd.DataFrame(
                        {
                            "run_id": "r1",
                            "system_id": system,
                            "ticker": ticker,
                            "industry": industry,
                            "window_end_date": dates,
                            "perturbation_id": pert,
                            "max_abs_residual": np.abs(y),
                            "relative_max_abs_residual": np.abs(y) / level,
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True)


def perturbation_sets(errors: pd.DataFrame) -> pd.DataFrame:
    systems = sorted(errors["system_id"].unique())
    return pd.DataFrame(
        {
            "run_id": "r1",
            "system_id": systems,
            "perturbation_set": " ".join(PERTS),
            "has_effects": True,
        }
    )


# ------------------------------------------------------------------------ distributions


def test_derived_distributions_one_per_industry_and_company_with_weights_2_to_1() -> None:
    out = study_distributions(COMPANIES)
    assert list(out.columns) == DISTRIBUTION_COLUMNS
    assert sorted(out["distribution_id"]) == sorted(
        [f"industry:{i}" for i in ("Fin", "Pharma", "Tech")]
        + [f"company:{t}" for t in COMPANIES.ticker]
    )
    assert (out["treated_weight"] == 2.0).all() and (out["control_weight"] == 1.0).all()
    assert set(out.loc[out.confounder == "company", "favored_value"]) == set(COMPANIES.ticker)


def test_derived_company_distributions_are_bounded_round_robin_over_industries() -> None:
    # industries sorted Fin, Pharma, Tech; tickers sorted inside: BAC JPM | MRK PFE | AAPL MSFT
    out = study_distributions(COMPANIES, max_company_distributions=4)
    companies = out.loc[out.confounder == "company", "favored_value"]
    assert sorted(companies) == sorted(["BAC", "MRK", "AAPL", "JPM"])  # round 1, then Fin's 2nd
    assert (out.confounder == "industry").sum() == 3
    assert len(study_distributions(COMPANIES, max_company_distributions=0)) == 3
    # 500 tickers: never more than industries + K distributions
    many = pd.DataFrame(
        {
            "ticker": [f"T{i:03d}" for i in range(500)],
            "industry": [f"I{i % 11}" for i in range(500)],
        }
    )
    assert len(study_distributions(many, max_company_distributions=24)) == 11 + 24


def test_seed_override_restricted_to_the_study_and_its_problems() -> None:
    seed = pd.DataFrame(
        [
            ["DI1", "industry", "Tech", 2, 1],
            ["DI9", "industry", "Energy", 2, 1],
            ["DC1", "company", "AAPL", 2, 1],
        ],
        columns=DISTRIBUTION_COLUMNS,
    )
    out = study_distributions(COMPANIES, source="seed", override=seed)
    assert out["distribution_id"].tolist() == ["DC1", "DI1"]
    assert distribution_problems(seed, COMPANIES) == []
    # the README example study (KO, PEP, XOM, CVX) matches none of these rows
    other = pd.DataFrame(
        {"ticker": ["KO", "PEP", "XOM", "CVX"], "industry": ["Bev", "Bev", "Energy", "Energy"]}
    )
    problems = distribution_problems(seed.iloc[[0, 2]], other)
    assert len(problems) == 2
    assert any("ape_company" in p for p in problems) and any("ape_industry" in p for p in problems)
    bad = seed.copy()
    bad.loc[0, "treated_weight"] = 0
    bad.loc[1, "confounder"] = "sector"
    bad.loc[2, "distribution_id"] = "DI1"
    lines = distribution_problems(bad, COMPANIES)
    assert any("treated_weight" in line for line in lines)
    assert any("unknown confounder 'sector'" in line for line in lines)
    assert any("duplicate" in line for line in lines)
    with pytest.raises(ValueError, match="derived"):
        study_distributions(COMPANIES, source="wrong")


# ------------------------------------------------------------------------------- draws


def test_draw_zero_is_the_single_draw_and_later_draws_differ() -> None:
    assert (
        draw_seed(42, "DC1", 0).generate_state(4) == distribution_seed(42, "DC1").generate_state(4)
    ).all()
    assert not (
        draw_seed(42, "DC1", 1).generate_state(4) == draw_seed(42, "DC1", 0).generate_state(4)
    ).all()
    units = COMPANIES.merge(
        pd.DataFrame({"window_end_date": pd.bdate_range("2022-01-03", periods=50)}), how="cross"
    )
    dists = study_distributions(COMPANIES)
    single = assign_treatments(units, dists, PERTS, 42)
    zero = [d.codes for d in treatment_draws(units, dists, PERTS, 42, draw=0).draws]
    one = [d.codes for d in treatment_draws(units, dists, PERTS, 42, draw=1).draws]
    labels = np.array(PERTS)
    assert single["perturbation_id"].tolist() == list(labels[np.concatenate(zero)])
    assert not np.array_equal(np.concatenate(zero), np.concatenate(one))


def test_later_draws_keep_the_2_to_1_weights() -> None:
    units = COMPANIES.merge(
        pd.DataFrame({"window_end_date": pd.bdate_range("2000-01-03", periods=6000)}), how="cross"
    )
    dists = pd.DataFrame([["x", "industry", "Tech", 2.0, 1.0]], columns=DISTRIBUTION_COLUMNS)
    draw = next(treatment_draws(units, dists, PERTS, 7, draw=5).draws)
    fav = np.bincount(draw.codes[draw.favored], minlength=4) / draw.favored.sum()
    other = np.bincount(draw.codes[~draw.favored], minlength=4) / (~draw.favored).sum()
    # favoured: P0 1/7, P1..P3 2/7 each; others 1/4 each (k = 3 treatments)
    assert fav == pytest.approx([1 / 7, 2 / 7, 2 / 7, 2 / 7], abs=0.015)
    assert other == pytest.approx([0.25] * 4, abs=0.01)


# ---------------------------------------------------------------------------- effects


def _old_single_draw(errors: pd.DataFrame, dists: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The code path before repeated draws: treatment_assignments' draw (assign_treatments)
    as a matrix, grid_perturbation_effects once per system."""
    units = Units(errors)
    assigned = assign_treatments(units.frame, dists, PERTS, seed)
    frames = []
    for system in sorted(errors["system_id"].unique()):
        grid = outcome_grid(
            errors[errors.system_id == system], units, PERTS, "max_abs_residual", system
        )
        ids = sorted(assigned["distribution_id"].unique())
        matrix = np.stack(
            [
                pd.Categorical(
                    assigned.loc[assigned.distribution_id == d, "perturbation_id"],
                    categories=PERTS,
                ).codes
                for d in ids
            ]
        )
        conf = dists.set_index("distribution_id").loc[ids, "confounder"]
        strata = [units.strata["ticker" if c == "company" else "industry"] for c in conf]
        out = grid_perturbation_effects(grid, PERTS, matrix, strata)
        out["distribution_id"] = np.array(ids)[out.pop("draw").to_numpy()]
        out["system_id"] = system
        frames.append(out)
    return pd.concat(frames, ignore_index=True)


def test_one_draw_reproduces_the_single_draw_exactly() -> None:
    errors = window_errors()
    dists = study_distributions(COMPANIES)
    got = study_effects(errors, perturbation_sets(errors), dists, 42, draws=1)
    assert list(got.columns) == EFFECTS_COLUMNS
    old = _old_single_draw(errors, dists, 42)
    keys = ["system_id", "distribution_id", "perturbation_id"]
    merged = got.merge(old, on=keys, suffixes=("", "_old"))
    assert len(merged) == len(got) == len(old)
    for column in ("ape_observational", "ape_matched", "ape_oracle", "pie_percent"):
        assert (merged[column].to_numpy() == merged[f"{column}_old"].to_numpy()).all(), column
    assert (merged["n_treated"] == merged["n_treated_old"]).all()
    assert got["n_draws"].eq(1).all() and got["ape_matched_sd"].isna().all()


def test_repeated_draws_are_means_and_sds_of_independent_single_draws() -> None:
    errors = window_errors(n_dates=40, systems=("bad",))
    dists = study_distributions(COMPANIES).head(4)  # company:AAPL ... and an industry
    draws = 5
    got = study_effects(
        errors,
        perturbation_sets(errors),
        dists,
        9,
        draws=draws,
        outcomes=["max_abs_residual", "relative_max_abs_residual"],
    )
    assert set(got["outcome"]) == {"max_abs_residual", "relative_max_abs_residual"}
    units = Units(errors).frame
    full = errors.assign(window_end_date=pd.to_datetime(errors["window_end_date"]))
    for outcome in ("max_abs_residual", "relative_max_abs_residual"):
        for dist in dists.to_dict("records"):
            per_draw = []
            for r in range(draws):
                drawn = treatment_draws(units, pd.DataFrame([dist]), PERTS, 9, draw=r)
                codes = next(drawn.draws).codes
                observed = drawn.units.assign(perturbation_id=np.array(PERTS)[codes])
                observed["window_end_date"] = pd.to_datetime(observed["window_end_date"])
                observed = observed.merge(
                    full[["ticker", "window_end_date", "perturbation_id", outcome]],
                    on=["ticker", "window_end_date", "perturbation_id"],
                )
                per_draw.append(
                    perturbation_effects(
                        observed, dist["confounder"], outcome=outcome, full_grid=full
                    ).set_index("perturbation_id")
                )
            stacked = pd.concat(per_draw)
            mine = got[
                (got.distribution_id == dist["distribution_id"]) & (got.outcome == outcome)
            ].set_index("perturbation_id")
            for pert in ("P1", "P2", "P3"):
                values = stacked.loc[pert, "ape_matched"].to_numpy()
                assert len(values) == draws
                assert mine.loc[pert, "ape_matched"] == pytest.approx(values.mean(), rel=1e-12)
                assert mine.loc[pert, "ape_matched_sd"] == pytest.approx(
                    values.std(ddof=1), rel=1e-9
                )
                pie = stacked.loc[pert, "pie_percent"].to_numpy()
                assert mine.loc[pert, "pie_percent"] == pytest.approx(pie.mean(), rel=1e-12)
                assert mine.loc[pert, "n_draws"] == draws


def test_company_confounded_ape_tracks_the_oracle_with_relative_outcome() -> None:
    """The stratified (company) estimate of the 'bad' system recovers its true effect 2k in
    price units and 2k / price level in the relative outcome; 'good' has none."""
    errors = window_errors(n_dates=120)
    dists = study_distributions(COMPANIES)
    got = study_effects(
        errors,
        perturbation_sets(errors),
        dists,
        1,
        draws=4,
        outcomes=["max_abs_residual", "relative_max_abs_residual"],
    )
    company = got[(got.confounder == "company") & (got.outcome == "max_abs_residual")]
    bad = company[company.system_id == "bad"].groupby("perturbation_id")["ape_matched"].mean()
    assert bad.to_numpy() == pytest.approx([2.0, 4.0, 6.0], abs=0.25)
    oracle = company[company.system_id == "bad"].groupby("perturbation_id")["ape_oracle"].mean()
    assert oracle.to_numpy() == pytest.approx([2.0, 4.0, 6.0], abs=0.1)
    rel = got[(got.outcome == "relative_max_abs_residual") & (got.system_id == "bad")]
    true_rel = np.mean([2.0 / LEVEL[t] for t in COMPANIES.ticker])  # P1 effect / price, averaged
    p1 = rel[rel.perturbation_id == "P1"]["ape_oracle"]
    assert p1.to_numpy() == pytest.approx(true_rel, rel=0.1)


def test_effect_scores_max_over_distributions_with_the_worst_distributions_spread() -> None:
    # hand-worked: two company distributions, APE_m means -3 (sd 0.5) and 2 (sd 0.1), 8 draws:
    # raw APE = max |mean| = 3 from 'a', spread = its standard error 0.5 / sqrt(8);
    # PIE = max(10, 40) = 40 from 'b', spread 4 / sqrt(8).
    rows = []
    for dist, ape, ape_sd, pie, pie_sd in (("a", -3.0, 0.5, 10.0, 1.0), ("b", 2.0, 0.1, 40.0, 4.0)):
        rows.append(
            effect_row(
                dist,
                n_treated=1,
                n_control=1,
                ape_observational=0.0,
                ape_matched=ape,
                ape_oracle=ape / 2,
                matching_error=0.0,
                pie_percent=pie,
                n_strata=2,
                n_draws=8,
                ape_observational_sd=0.0,
                ape_matched_sd=ape_sd,
                pie_percent_sd=pie_sd,
            )
        )
    out = effect_scores(pd.DataFrame(rows), "max").set_index("measure")
    se = 1 / np.sqrt(8)
    assert out.loc["ape", "raw_score"] == 3.0
    assert out.loc["ape", "score_spread"] == pytest.approx(0.5 * se)
    assert out.loc["ape", "oracle_score"] == 1.5 and out.loc["ape", "worst_distribution_id"] == "a"
    assert out.loc["pie", "raw_score"] == 40.0
    assert out.loc["pie", "score_spread"] == pytest.approx(4.0 * se)
    assert out.loc["ape", "n_draws"] == 8 and out.loc["ape", "outcome"] == "max_abs_residual"
    mean = effect_scores(pd.DataFrame(rows), "mean").set_index("measure")
    assert mean.loc["ape", "raw_score"] == 2.5
    assert mean.loc["ape", "score_spread"] == pytest.approx(0.3 * se)


# -------------------------------------------------------------------------------- WRS


def test_wrs_pairs_for_both_outcomes_match_scipy() -> None:
    errors = window_errors(n_dates=30, systems=("good",))
    levels = pd.DataFrame({"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]})
    pairs = wrs_pair_table(errors, levels, ["max_abs_residual", "relative_max_abs_residual"])
    assert set(pairs["outcome"]) == {"max_abs_residual", "relative_max_abs_residual"}
    for outcome in ("max_abs_residual", "relative_max_abs_residual"):
        row = pairs[
            (pairs.outcome == outcome)
            & (pairs.analysis == "company")
            & (pairs.perturbation_id == "P0")
            & (pairs.confidence == 0.95)
            & (pairs.within_group == "Tech")
        ].iloc[0]
        a = errors[(errors.ticker == row.group_a) & (errors.perturbation_id == "P0")][outcome]
        b = errors[(errors.ticker == row.group_b) & (errors.perturbation_id == "P0")][outcome]
        expected = sps.ttest_ind(a, b, equal_var=True)
        assert row.p_value == pytest.approx(expected.pvalue, rel=1e-9)


def test_company_strata_option_matches_industry_distributions_on_the_company() -> None:
    """effect_strata = company: an industry distribution's APE_m is the exact company-
    stratified ATE (independent computation); the default matches on the industry."""
    errors = window_errors(n_dates=50, systems=("bad",))
    dists = study_distributions(COMPANIES).query("confounder == 'industry'").head(1)
    sets = perturbation_sets(errors)
    default = study_effects(errors, sets, dists, 5, draws=1)
    company = study_effects(errors, sets, dists, 5, draws=1, strata="company")
    units = Units(errors).frame
    codes = next(treatment_draws(units, dists, PERTS, 5).draws).codes
    observed = units.assign(perturbation_id=np.array(PERTS)[codes])
    observed["window_end_date"] = pd.to_datetime(observed["window_end_date"])
    full = errors.assign(window_end_date=pd.to_datetime(errors["window_end_date"]))
    observed = observed.merge(full, on=["ticker", "industry", "window_end_date", "perturbation_id"])
    for pert in ("P1", "P2"):
        arm = observed[observed.perturbation_id.isin(["P0", pert])]
        y = arm["max_abs_residual"].to_numpy()
        t = (arm["perturbation_id"] == pert).to_numpy()
        total = 0.0
        for ticker in arm["ticker"].unique():  # exact stratification on the company (ATE)
            s = (arm["ticker"] == ticker).to_numpy()
            total += s.sum() * (y[s & t].mean() - y[s & ~t].mean())
        expected = total / len(arm)
        got = company.set_index("perturbation_id").loc[pert, "ape_matched"]
        assert got == pytest.approx(expected, rel=1e-10)
        assert default.set_index("perturbation_id").loc[pert, "ape_matched"] != pytest.approx(
            expected, rel=1e-6
        )
    with pytest.raises(ValueError, match="effect_strata"):
        study_effects(errors, sets, dists, 5, strata="sector")


def test_scores_within_floating_noise_of_zero_are_stored_as_zero() -> None:
    rows = []
    for system, ape in (("biased", 1.84e-14), ("naive", 1.2)):
        rows.append(
            dict.fromkeys(EFFECTS_COLUMNS, 0)
            | effect_row(
                "company:A",
                system_id=system,
                favored_value="A",
                ape_matched=ape,
                ape_oracle=-3e-15 if system == "biased" else 1.0,
                pie_percent=5.0,
                n_draws=2,
                ape_matched_sd=0.0,
                pie_percent_sd=0.0,
            )
        )
    out = effect_scores(pd.DataFrame(rows), "max")
    biased = out[(out.system_id == "biased") & (out.measure == "ape")].iloc[0]
    assert biased["raw_score"] == 0.0 and biased["oracle_score"] == 0.0
    naive = out[(out.system_id == "naive") & (out.measure == "ape")].iloc[0]
    assert naive["raw_score"] == 1.2


# ------------------------------------------------- outcomes some systems do not have


def test_a_system_without_an_outcome_is_left_out_of_it_and_the_others_unchanged() -> None:
    """wql is null for every window of 'none' (no quantile forecasts) and for one window of
    'gap': both are left out of WRS and APE/PIE at wql (never a score over part of the
    windows), kept at max_abs_residual; 'good' gets exactly the scores it gets alone."""
    errors = window_errors(n_dates=20, systems=("good", "none", "gap"))
    errors["wql"] = errors["relative_max_abs_residual"] * 0.5
    errors.loc[errors["system_id"] == "none", "wql"] = np.nan
    errors.loc[errors[errors["system_id"] == "gap"].index[:1], "wql"] = np.nan
    outcomes = ["max_abs_residual", "wql"]
    levels = pd.DataFrame({"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]})
    pairs = wrs_pair_table(errors, levels, outcomes)
    at_wql = pairs[pairs["outcome"] == "wql"]
    assert set(at_wql["system_id"]) == {"good"}
    assert set(pairs.loc[pairs["outcome"] == "max_abs_residual", "system_id"]) == {
        "good",
        "none",
        "gap",
    }
    alone = wrs_pair_table(errors[errors["system_id"] == "good"], levels, ["wql"])
    pd.testing.assert_frame_equal(at_wql.reset_index(drop=True), alone)

    dists = study_distributions(COMPANIES).head(3)
    got = study_effects(errors, perturbation_sets(errors), dists, 9, draws=3, outcomes=outcomes)
    assert set(got.loc[got["outcome"] == "wql", "system_id"]) == {"good"}
    assert set(got.loc[got["outcome"] == "max_abs_residual", "system_id"]) == {
        "good",
        "none",
        "gap",
    }
    good = errors[errors["system_id"] == "good"]
    single = study_effects(good, perturbation_sets(good), dists, 9, draws=3, outcomes=["wql"])
    pd.testing.assert_frame_equal(
        got[got["outcome"] == "wql"].reset_index(drop=True), single.reset_index(drop=True)
    )


def test_a_system_missing_some_tickers_windows_is_named_with_them() -> None:
    """A system without rows for some tickers under a perturbation of its set (an import of
    some tickers, stored before imports were checked for it) cannot be estimated: the error
    names the run, the system, each perturbation and the tickers it lacks there."""
    errors = window_errors(n_dates=20, systems=("good", "gap"))
    lacking = (errors["system_id"] == "gap") & (errors["perturbation_id"] == "P1")
    lacking &= errors["ticker"].isin(["JPM", "BAC"])
    errors = errors[~lacking]
    dists = study_distributions(COMPANIES).head(3)
    with pytest.raises(ValueError) as caught:
        study_effects(errors, perturbation_sets(errors), dists, 9, draws=2)
    message = str(caught.value)
    assert message.startswith("run r1, system 'gap': ")
    assert "it has no windows of ticker(s) P1: BAC, JPM (" in message
    complete = window_errors(n_dates=20, systems=("good",))
    got = study_effects(complete, perturbation_sets(complete), dists, 9, draws=2)
    assert set(got["system_id"]) == {"good"}
