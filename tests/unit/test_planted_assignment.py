"""The treatment_assignments table (tsrate.methods.causal.assignment) against the paper's
confounded assignment (section 4.2), worked out independently of the code.

Convention (DESIGN.md; assign_treatments' docstring): for a distribution favouring a value of
its confounder (an industry, or a company = ticker), a window whose confounder holds that
value draws each of the k treatments with probability treated_weight / W and the control P0
with control_weight / W, W = control_weight + k * treated_weight; every other window draws
uniformly, 1 / (k + 1) each. Weights 2 / 1 and k = 2 here: favoured windows P0 1/5, P1 and
P2 2/5 each; the others 1/3 each. Only the perturbation sets that have effects (a control and
at least one treatment) are drawn, distributions whose favoured value matches no window of
the run are left out, and each window's draw does not depend on the input's row order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.sweep_causal import codes_by_hand, seed_of
from tsrate.methods.causal.assignment import treatment_assignments

INDUSTRY = {
    "T0": "Tech",
    "T1": "Tech",
    "T2": "Tech",
    "T3": "Pharma",
    "T4": "Pharma",
    "T5": "Pharma",
}
N_DAYS = 400
SEED = 11


def _window_errors(order_seed: int) -> pd.DataFrame:
    """window_errors' key columns: every window under 2 systems x 2 perturbations, rows in a
    random order (so the distinct windows do not come sorted by ticker and date)."""
    days = pd.bdate_range("2021-01-04", periods=N_DAYS).date
    rows = [
        (system, perturbation, ticker, industry, day)
        for system in ["naive", "random"]
        for perturbation in ["P0", "P1"]
        for ticker, industry in INDUSTRY.items()
        for day in days
    ]
    frame = pd.DataFrame(
        rows, columns=["system_id", "perturbation_id", "ticker", "industry", "window_end_date"]
    )
    frame["run_id"] = "r1"
    order = np.random.default_rng(order_seed).permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


SETS = pd.DataFrame(
    {
        "run_id": ["r1", "r1"],
        "system_id": ["naive", "control_only"],
        "perturbation_set": ["P0 P1 P2", "P0"],
        "has_effects": [True, False],
    }
)
DISTRIBUTIONS = pd.DataFrame(
    {
        "distribution_id": ["industry:Tech", "company:T3", "company:ZZZ"],
        "confounder": ["industry", "company", "company"],
        "favored_value": ["Tech", "T3", "ZZZ"],  # ZZZ: a company outside the study
        "treated_weight": [2.0, 2.0, 2.0],
        "control_weight": [1.0, 1.0, 1.0],
    }
)
KEYS = ["distribution_id", "perturbation_set", "ticker", "window_end_date"]


@pytest.fixture(scope="module")
def drawn() -> pd.DataFrame:
    return treatment_assignments(_window_errors(1), SETS, DISTRIBUTIONS, SEED)


def test_one_row_per_drawn_window_of_sets_with_effects_and_matched_distributions(drawn):
    assert set(drawn["perturbation_set"]) == {"P0 P1 P2"}  # the P0-only set has no effects
    assert set(drawn["distribution_id"]) == {"industry:Tech", "company:T3"}  # ZZZ matches none
    assert len(drawn) == 2 * len(INDUSTRY) * N_DAYS
    assert not drawn.duplicated(KEYS).any()
    assert set(drawn["perturbation_id"]) == {"P0", "P1", "P2"}


def test_each_row_carries_its_own_windows_confounders(drawn):
    """A row's industry is its ticker's, and is_favored is whether the row's own confounder
    value is the favoured one."""
    assert (drawn["industry"] == drawn["ticker"].map(INDUSTRY)).all()
    industry = drawn[drawn["distribution_id"] == "industry:Tech"]
    assert (industry["is_favored"] == (industry["industry"] == "Tech")).all()
    company = drawn[drawn["distribution_id"] == "company:T3"]
    assert (company["is_favored"] == (company["ticker"] == "T3")).all()


@pytest.mark.parametrize(
    ("distribution", "favoured"),
    [
        ("industry:Tech", lambda d: d["industry"] == "Tech"),
        ("company:T3", lambda d: d["ticker"] == "T3"),
    ],
)
def test_draw_shares_follow_the_confounded_weights(drawn, distribution, favoured):
    """Favoured windows: P0 1/5, P1 and P2 2/5 each; the others 1/3 each (within 5 binomial
    standard errors)."""
    rows = drawn[drawn["distribution_id"] == distribution]
    is_favoured = favoured(rows)
    for mask, expected in [
        (is_favoured, {"P0": 0.2, "P1": 0.4, "P2": 0.4}),
        (~is_favoured, {"P0": 1 / 3, "P1": 1 / 3, "P2": 1 / 3}),
    ]:
        ids = rows.loc[mask, "perturbation_id"]
        for perturbation, p in expected.items():
            share = (ids == perturbation).mean()
            se = np.sqrt(p * (1 - p) / len(ids))
            assert abs(share - p) < 5 * se, (distribution, perturbation, share, p, len(ids))


def test_each_windows_draw_does_not_depend_on_the_row_order(drawn):
    other = treatment_assignments(_window_errors(2), SETS, DISTRIBUTIONS, SEED)
    left = drawn.set_index(KEYS)["perturbation_id"].sort_index()
    right = other.set_index(KEYS)["perturbation_id"].sort_index()
    pd.testing.assert_series_equal(left, right)
    reseeded = treatment_assignments(_window_errors(1), SETS, DISTRIBUTIONS, SEED + 1)
    assert (reseeded.set_index(KEYS)["perturbation_id"].sort_index() != left).any()


def test_each_run_draws_over_its_own_windows_only():
    """Two runs of different windows (r2 adds a ticker and a later day): r1's rows are r1's
    windows, drawn as r1 alone would draw them, and r2's rows are r2's."""
    r1 = _window_errors(3)
    extra_day = pd.Timestamp("2030-01-02").date()
    first_day = r1["window_end_date"].min()
    r2 = pd.concat(
        [
            r1,
            r1[r1["ticker"] == "T0"].assign(ticker="T9"),
            r1[r1["window_end_date"] == first_day].assign(window_end_date=extra_day),
        ],
        ignore_index=True,
    ).assign(run_id="r2")
    sets = pd.concat([SETS, SETS.assign(run_id="r2")], ignore_index=True)
    both = treatment_assignments(pd.concat([r1, r2], ignore_index=True), sets, DISTRIBUTIONS, SEED)
    windows = ["ticker", "window_end_date"]
    for run, errors in [("r1", r1), ("r2", r2)]:
        rows = both[both["run_id"] == run]
        expected = set(errors[windows].itertuples(index=False, name=None))
        assert set(rows[windows].itertuples(index=False, name=None)) == expected, run
        assert len(rows) == 2 * len(expected), run  # two matched distributions
    alone = treatment_assignments(r1, SETS, DISTRIBUTIONS, SEED)
    mine = both[both["run_id"] == "r1"].set_index(KEYS)["perturbation_id"].sort_index()
    pd.testing.assert_series_equal(mine, alone.set_index(KEYS)["perturbation_id"].sort_index())


def test_each_row_is_draw_0_of_its_distribution_from_the_documented_seed(drawn):
    """The table is draw 0, the paper's single draw: for each distribution, u = the first n
    uniforms of the documented per-distribution seed (``seed_of(SEED, distribution_id)``)
    over the windows in (ticker, window_end_date) order, turned into P0, P1, P2 by the
    inverse-CDF rule worked out by hand (tests/support/sweep_causal.codes_by_hand); each row
    carries its distribution's confounder and favoured value."""
    labels = np.array(["P0", "P1", "P2"])
    for dist in DISTRIBUTIONS.itertuples():
        rows = drawn[drawn["distribution_id"] == dist.distribution_id]
        if dist.favored_value == "ZZZ":
            assert rows.empty
            continue
        rows = rows.sort_values(["ticker", "window_end_date"])
        u = np.random.default_rng(seed_of(SEED, dist.distribution_id)).random(len(rows))
        column = "industry" if dist.confounder == "industry" else "ticker"
        favoured = (rows[column] == dist.favored_value).to_numpy()
        codes = codes_by_hand(u, favoured, dist.treated_weight, dist.control_weight, 2)
        assert rows["perturbation_id"].tolist() == labels[codes].tolist(), dist.distribution_id
        assert (rows["confounder"] == dist.confounder).all()
        assert (rows["favored_value"] == dist.favored_value).all()
