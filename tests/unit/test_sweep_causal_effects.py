"""The causal method's effects over draws (tsrate.methods.causal.effects): the draws
summarised, the effect scores by hand for each aggregation, and the study's effects
re-derived from the documented draw and a brute-force nearest-propensity matching
(tests/support/sweep_causal.py).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep_causal.json): each test pins exact values, so a changed coefficient,
bound, weight, tie rule or comparison in these files changes a checked number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.sweep_causal import (
    brute_force_ape,
    codes_by_hand,
    seed_of,
)
from tsrate.methods.causal.distributions import (
    study_distributions,
)
from tsrate.methods.causal.effects import effect_scores, study_effects, summarise_draws

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
        u = np.random.default_rng(seed_of(5, row["distribution_id"])).random(grid.shape[0])
        codes = codes_by_hand(u, column == row["favored_value"], 2.0, 1.0, 1)
        y = grid[np.arange(codes.size), codes]
        treated = codes == 1
        assert row["n_treated"] == treated.sum() and row["n_control"] == (~treated).sum()
        assert row["ape_observational"] == pytest.approx(y[treated].mean() - y[~treated].mean())
        assert row["ape_matched"] == pytest.approx(brute_force_ape(y, treated, column, "ATE"))
        assert row["ape_oracle"] == pytest.approx((grid[:, 1] - grid[:, 0]).mean())
