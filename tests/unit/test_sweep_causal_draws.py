"""The causal method's confounded treatment draws (tsrate.methods.causal.distributions,
assignment and ``draw_matrix``) against the draw re-derived from its documented seed and
inverse-CDF rule (tests/support/sweep_causal.py), and the distributions and inputs the draws
accept or refuse.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep_causal.json): each test pins exact values, so a changed coefficient,
bound, weight, tie rule or comparison in these files changes a checked number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.sweep_causal import (
    codes_by_hand,
    seed_of,
)
from tsrate.methods.causal.assignment import treatment_assignments
from tsrate.methods.causal.distributions import (
    DISTRIBUTION_COLUMNS,
    assign_treatments,
    default_distributions,
    draw_seed,
    study_distributions,
    treatment_draws,
)
from tsrate.methods.causal.effects import draw_matrix


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
            u = np.random.default_rng(seed_of(17, name)).random(n)
            favoured = (in_order[column] == value).to_numpy()
            np.testing.assert_array_equal(d.favored, favoured)
            np.testing.assert_array_equal(d.codes, codes_by_hand(u, favoured, tw, cw, k))
    long = assign_treatments(units, dists, perts, 17)
    first = [d.codes for d in treatment_draws(units, dists, perts, 17).draws]
    assert long["perturbation_id"].tolist() == list(
        np.array(["P0", "P1", "P3"])[np.concatenate(first)]
    )
    assert long["is_favored"].sum() == 2 * 60 + 60


def test_draw_seed_defaults_to_the_single_draw() -> None:
    """draw_seed(seed, id) without a draw number is draw 0: the per-distribution seed."""
    assert draw_seed(7, "industry:Tech").entropy == seed_of(7, "industry:Tech").entropy
    assert draw_seed(7, "industry:Tech", 3).entropy == seed_of(7, "industry:Tech#3").entropy


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
