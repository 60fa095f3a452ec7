"""A treatment draw that leaves an arm empty is left out of the mean, never an error
(tsrate.methods.causal.effects.study_effects), and leaving draws out does not bias the
estimate: on a study where no draw is empty it is the mean of every draw, and with a
homogeneous true effect it is that effect exactly whichever draws are left out.

The reference values come from the frame-based single-distribution estimator
(tsrate.methods.causal.estimators.perturbation_effects) applied draw by draw, a different
code path from the matrix one the mart uses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.causal.effects import effect_scores, study_effects
from tsrate.methods.causal.estimators import (
    perturbation_effects,
    study_distributions,
    treatment_draws,
)
from tsrate.platform.marts_io import Units

PERTS = ["P0", "P1", "P2", "P3"]
#: the issue's small study: two companies in two industries
COMPANIES = pd.DataFrame({"ticker": ["KO", "XOM"], "industry": ["Staples", "Energy"]})


def grid(n_dates: int, effect: float = 2.0, noise: float = 0.3, seed: int = 5) -> pd.DataFrame:
    """Window errors of one system under every perturbation: P_k adds k x ``effect``.

    ``noise`` 0: every window's P0 outcome is 3 (a constant), so every estimator is exact.
    """
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2022-07-01", periods=n_dates)
    rows = []
    for ticker, industry in zip(COMPANIES.ticker, COMPANIES.industry, strict=True):
        base = 3.0 + (rng.gamma(2.0, 0.5, n_dates) if noise else 0.0)
        for k, pert in enumerate(PERTS):
            y = base + effect * k + (rng.normal(0, noise, n_dates) if noise else 0.0)
            rows.append(
                pd.DataFrame(
                    {
                        "run_id": "r1",
                        "system_id": "s",
                        "ticker": ticker,
                        "industry": industry,
                        "window_end_date": dates,
                        "perturbation_id": pert,
                        "max_abs_residual": np.abs(y),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def sets() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": ["r1"],
            "system_id": ["s"],
            "perturbation_set": [" ".join(PERTS)],
            "has_effects": [True],
        }
    )


def reference(errors: pd.DataFrame, dist: dict, seed: int, draws: int) -> dict[str, list[float]]:
    """APE_m per treatment of every draw whose control and treatment arms are non-empty."""
    units = Units(errors).frame
    full = errors.assign(window_end_date=pd.to_datetime(errors["window_end_date"]))
    kept: dict[str, list[float]] = {p: [] for p in PERTS[1:]}
    for r in range(draws):
        drawn = treatment_draws(units, pd.DataFrame([dist]), PERTS, seed, draw=r)
        codes = next(drawn.draws).codes
        observed = drawn.units.assign(perturbation_id=np.array(PERTS)[codes])
        if not (observed["perturbation_id"] == "P0").any():
            continue  # the control arm is empty: this draw estimates nothing
        observed["window_end_date"] = pd.to_datetime(observed["window_end_date"])
        observed = observed.merge(
            full[["ticker", "window_end_date", "perturbation_id", "max_abs_residual"]],
            on=["ticker", "window_end_date", "perturbation_id"],
        )
        rows = perturbation_effects(observed, dist["confounder"], full_grid=full)
        for row in rows.itertuples():
            kept[row.perturbation_id].append(row.ape_matched)
    return kept


def test_the_small_study_builds_and_counts_its_empty_arm_draws() -> None:
    # 9 windows per ticker and 16 draws, as `tsrate run --tickers KO,XOM --stride 3`:
    # some draws give no window the control P0 (this raised "no unit is assigned the control")
    errors = grid(n_dates=3)
    dists = study_distributions(COMPANIES)
    draws = 16
    got = study_effects(errors, sets(), dists, 42, draws=draws)
    assert not got.empty
    assert (got["n_draws"] + got["n_draws_left_out"] == draws).all()
    assert got["n_draws_left_out"].sum() > 0  # the case the fix is about did occur
    for dist in dists.to_dict("records"):
        expected = reference(errors, dist, 42, draws)
        mine = got[got.distribution_id == dist["distribution_id"]].set_index("perturbation_id")
        for pert, values in expected.items():
            if not values:
                assert pert not in mine.index  # every draw left out: no row
                continue
            assert mine.loc[pert, "n_draws"] == len(values)
            assert mine.loc[pert, "ape_matched"] == pytest.approx(np.mean(values), rel=1e-12)
    scores = effect_scores(got, "max")
    assert (scores["n_draws_left_out"] >= 0).all()
    total = got.groupby(["perturbation_id", "confounder"])["n_draws_left_out"].sum()
    ape = scores[scores.measure == "ape"].set_index(["perturbation_id", "confounder"])
    for key, value in total.items():
        assert ape.loc[key, "n_draws_left_out"] == value


def test_no_empty_draw_means_every_draw_is_used() -> None:
    # a study large enough that no draw leaves an arm empty: the estimate is the plain mean
    # of all R draws (what it was before draws could be left out), nothing is left out
    errors = grid(n_dates=40)
    dists = study_distributions(COMPANIES)
    draws = 6
    got = study_effects(errors, sets(), dists, 7, draws=draws)
    assert got["n_draws_left_out"].eq(0).all() and got["n_draws"].eq(draws).all()
    for dist in dists.to_dict("records"):
        expected = reference(errors, dist, 7, draws)
        mine = got[got.distribution_id == dist["distribution_id"]].set_index("perturbation_id")
        for pert, values in expected.items():
            assert len(values) == draws
            assert mine.loc[pert, "ape_matched"] == pytest.approx(np.mean(values), rel=1e-12)


def test_leaving_draws_out_does_not_bias_a_homogeneous_effect() -> None:
    # every window's outcome is 3 + 2k under P_k: each usable draw estimates exactly 2k, so
    # the mean over the draws kept is 2k, however many were left out (a draw is left out
    # for its empty arm, never for its value)
    errors = grid(n_dates=3, effect=2.0, noise=0.0)
    got = study_effects(errors, sets(), study_distributions(COMPANIES), 42, draws=16)
    assert got["n_draws_left_out"].sum() > 0
    for pert, k in (("P1", 1), ("P2", 2), ("P3", 3)):
        rows = got[got.perturbation_id == pert]
        assert rows["ape_matched"].to_numpy() == pytest.approx(2.0 * k, abs=1e-9)
        assert rows["ape_oracle"].to_numpy() == pytest.approx(2.0 * k, abs=1e-9)


def test_the_study_check_warns_when_draws_will_leave_an_arm_empty() -> None:
    from tsrate.robustness.empty_arms import empty_arm_warning, expected_empty_arm_draws

    industry = dict(zip(COMPANIES.ticker, COMPANIES.industry, strict=True))
    line = empty_arm_warning({"KO": 9, "XOM": 9}, industry, 3, 16)
    assert line is not None and "9 windows per ticker" in line and "n_draws_left_out" in line
    assert empty_arm_warning({"KO": 120, "XOM": 120}, industry, 3, 16) is None
    # against the real draws (Monte Carlo over 400 draws of every derived distribution):
    # the expectation is a union bound over arms, so at least the observed rate and close
    errors = grid(n_dates=3)
    units = Units(errors).frame
    dists = study_distributions(COMPANIES)
    empty = 0
    for r in range(400):
        drawn = treatment_draws(units, dists, PERTS, 11, draw=r)
        for draw in drawn.draws:
            assigned = set(np.array(drawn.perturbations)[draw.codes])
            empty += len(assigned) < len(PERTS)
    expected = expected_empty_arm_draws({"KO": 3, "XOM": 3}, industry, 3, 400)
    assert expected >= empty * 0.9
    assert expected <= empty * 1.35
