"""The dbt Python model int_perturbation_effects_estimated (the propensity-score effects step
behind the public mart perturbation_effects) against an independent computation.

Round 11 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep11_effects.json). The model reads its five settings from its config and
its three parents through ``dbt.ref``; here a stand-in ``dbt`` object hands it real DuckDB
relations of a tiny study (4 tickers in 2 industries x 30 days x P0/P1/P2, two outcomes)
and the config values as dbt renders them (strings). Every published number is recomputed
in this file from the definitions alone: the confounded draws from their documented seeds
(``sha256`` of the distribution id, ``#r`` for draw r > 0) and the inverse CDF through the
weights, APE_o as the treated-minus-control difference of means (an OLS slope, statsmodels),
APE_m by unit-level nearest-propensity matching with the propensity fitted by an
unpenalised logistic regression on the strata (statsmodels), PIE %, the oracle from the
full grid, and the mean and sample sd over draws; each draw's own values (the rows beside
the means, published as perturbation_effect_draws) too. Settings away from the defaults (ATT,
company strata, three draws, two outcomes) show that each one reaches the estimator; a
missing setting is refused in one line that names them all.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from tests.support.effects_draws import draw_codes, draw_seed

MODEL_FILE = (
    Path(__file__).resolve().parents[2]
    / "python_models"
    / "intermediate"
    / "int_perturbation_effects_estimated.py"
)
TICKERS = {"A": "Tech", "B": "Tech", "C": "Bank", "D": "Bank"}
LABELS = ["P0", "P1", "P2"]
OUTCOMES = ["max_abs_residual", "relative_max_abs_residual"]
#: distribution_id, confounder, favored_value, treated_weight, control_weight
DISTRIBUTIONS = [
    ("co-B", "company", "B", 3.0, 1.0),
    ("ind-Tech", "industry", "Tech", 2.0, 1.0),
]
N_DAYS = 30


def _model():
    spec = importlib.util.spec_from_file_location("int_perturbation_effects_estimated", MODEL_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


def _window_errors() -> pd.DataFrame:
    """Every window of 4 tickers x 30 days under P0, P1 and P2 for one system: a level per
    ticker (so the confounder matters), noise, and a true effect of P1 / P2 that differs by
    ticker; the relative outcome is the first divided by the ticker's price level."""
    rng = np.random.default_rng(2026)
    days = pd.bdate_range("2022-03-01", periods=N_DAYS)
    frames = []
    for i, (ticker, industry) in enumerate(TICKERS.items()):
        base = 1.0 + 2.5 * i + rng.gamma(2.0, 0.4, N_DAYS)
        for k, label in enumerate(LABELS):
            y = base + k * (0.5 + 0.7 * i) + rng.normal(0.0, 0.2, N_DAYS)
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": "r1",
                        "system_id": "s1",
                        "ticker": ticker,
                        "industry": industry,
                        "window_end_date": days.date,
                        "perturbation_id": label,
                        "max_abs_residual": np.abs(y),
                        "relative_max_abs_residual": np.abs(y) / (10.0 * (i + 1)),
                        "unused_metric": -1.0,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


class _Dbt:
    """What a dbt Python model is handed: ``config.get`` (the YAML's values, rendered as
    strings) and ``ref`` (a DuckDB relation of the parent)."""

    def __init__(self, config: dict[str, str | None]) -> None:
        self.con = duckdb.connect()
        sets = pd.DataFrame(
            {"run_id": ["r1"], "system_id": ["s1"], "perturbation_set": ["P0 P1 P2"]}
            | {"has_effects": [True]}
        )
        columns = ["distribution_id", "confounder", "favored_value"]
        dists = pd.DataFrame(DISTRIBUTIONS, columns=[*columns, "treated_weight", "control_weight"])
        for name, frame in [
            ("window_errors", _window_errors()),
            ("int_perturbation_sets_derived", sets),
            ("int_confounder_distributions", dists),
        ]:
            self.con.register(f"{name}_frame", frame)
            self.con.execute(f"create table {name} as select * from {name}_frame")
        self.config = SimpleNamespace(get=config.get)

    def ref(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.table(name)


SETTINGS = {
    "robustness_outcomes": " ".join(OUTCOMES),
    "matching_estimand": "ATT",
    "causal_seed": "11",
    "treatment_draws": "3",
    "effect_strata": "company",
}


# ---------------------------------------------------------------- the independent side


def _propensity(treated: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """P(treated | stratum) by an unpenalised logistic regression on one-hot strata
    (statsmodels GLM); a stratum with one arm only has the limit 0 or 1."""
    values = np.unique(strata)
    both = [s for s in values if 0 < treated[strata == s].mean() < 1]
    score = treated.astype(float).copy()  # one-arm strata: their limit, 0 or 1
    if both:
        rows = np.isin(strata, both)
        design = (strata[rows, None] == np.array(both)[None, :]).astype(float)
        fit = sm.GLM(treated[rows].astype(float), design, family=sm.families.Binomial()).fit()
        score[rows] = fit.predict(design)
    return score


def _matched(y: np.ndarray, treated: np.ndarray, strata: np.ndarray, estimand: str) -> float:
    """APE_m unit by unit: each unit's missing outcome is the mean outcome of all units of
    the other arm at the nearest propensity (ties to 1e-9 averaged); ATT averages over the
    treated units, ATE over all."""
    score = _propensity(treated, strata)
    effects = []
    for i in range(y.size):
        others = np.flatnonzero(treated != treated[i])
        distance = np.abs(score[others] - score[i])
        matched = y[others][distance <= distance.min() + 1e-9].mean()
        if treated[i]:
            effects.append(y[i] - matched)
        elif estimand == "ATE":
            effects.append(matched - y[i])
    return float(np.mean(effects))


def _expected(settings: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per (outcome, distribution, treatment): means and sds over the draws; and one
    per (outcome, distribution, treatment, draw): that draw's own values."""
    errors = _window_errors()
    seed, draws = int(settings["causal_seed"]), int(settings["treatment_draws"])
    estimand, strata = settings["matching_estimand"], settings["effect_strata"]
    k = len(LABELS) - 1
    rows, draw_rows = [], []
    for outcome in settings["robustness_outcomes"].split():
        wide = errors.pivot_table(
            index=["ticker", "window_end_date"], columns="perturbation_id", values=outcome
        )  # (ticker, date) order: the units' order of the draws
        grid = wide[LABELS].to_numpy()
        tickers = wide.index.get_level_values("ticker").to_numpy()
        industries = np.array([TICKERS[t] for t in tickers])
        for dist_id, confounder, favoured_value, tw, cw in DISTRIBUTIONS:
            column = tickers if confounder == "company" else industries
            match_on = tickers if strata == "company" else column
            per_draw = {j: [] for j in range(1, k + 1)}
            for r in range(draws):
                name = dist_id if r == 0 else f"{dist_id}#{r}"
                u = np.random.default_rng(draw_seed(seed, name)).random(grid.shape[0])
                codes = draw_codes(u, column == favoured_value, tw, cw, k)
                for j in range(1, k + 1):
                    keep = (codes == j) | (codes == 0)
                    treated = codes[keep] == j
                    y = grid[keep, j] * treated + grid[keep, 0] * ~treated
                    x = sm.add_constant(treated.astype(float))
                    ape_o = float(sm.OLS(y, x).fit().params[1])
                    ape_m = _matched(y, treated, match_on[keep], estimand)
                    effect = grid[:, j] - grid[:, 0]
                    oracle = effect[codes == j].mean() if estimand == "ATT" else effect.mean()
                    pie = abs(abs(ape_o) - abs(ape_m)) * 100.0
                    per_draw[j].append((treated.sum(), (~treated).sum(), ape_o, ape_m, oracle, pie))
                    draw_rows.append(
                        {"outcome": outcome, "distribution_id": dist_id}
                        | {"perturbation_id": LABELS[j], "draw": r}
                        | {"n_treated": int(treated.sum()), "n_control": int((~treated).sum())}
                        | {"ape_observational": ape_o, "ape_matched": ape_m}
                        | {"ape_oracle": oracle, "matching_error": ape_m - oracle}
                        | {"pie_percent": pie}
                    )
            for j, values in per_draw.items():
                v = np.array(values, dtype=float)
                rows.append(
                    {
                        "outcome": outcome,
                        "distribution_id": dist_id,
                        "perturbation_id": LABELS[j],
                        "n_treated": round(v[:, 0].mean()),
                        "n_control": round(v[:, 1].mean()),
                        "ape_observational": v[:, 2].mean(),
                        "ape_matched": v[:, 3].mean(),
                        "ape_oracle": v[:, 4].mean(),
                        "matching_error": v[:, 3].mean() - v[:, 4].mean(),
                        "pie_percent": v[:, 5].mean(),
                        "ape_observational_sd": v[:, 2].std(ddof=1),
                        "ape_matched_sd": v[:, 3].std(ddof=1),
                        "pie_percent_sd": v[:, 5].std(ddof=1),
                        "n_draws": draws,
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(draw_rows)


def _means(frame: pd.DataFrame) -> pd.DataFrame:
    """The model's mean rows (draw null), as perturbation_effects selects them."""
    return frame.loc[frame["draw"].isna()].reset_index(drop=True)


# ---------------------------------------------------------------------------- the tests

NUMBERS = ["ape_observational", "ape_matched", "ape_oracle", "matching_error", "pie_percent"]
NUMBERS += ["ape_observational_sd", "ape_matched_sd", "pie_percent_sd"]


@pytest.mark.parametrize(
    "changes",
    [{}, {"matching_estimand": "ATE", "effect_strata": "confounder", "causal_seed": "4"}],
    ids=["att-company-3-draws", "ate-confounder"],
)
def test_model_equals_an_independent_computation(changes: dict[str, str]) -> None:
    settings = SETTINGS | changes
    out = _model()(_Dbt(settings), None)
    want, want_draws = _expected(settings)
    keys = ["outcome", "distribution_id", "perturbation_id"]
    got = _means(out).sort_values(keys).reset_index(drop=True)
    want = want.sort_values(keys).reset_index(drop=True)
    assert got[keys].values.tolist() == want[keys].values.tolist()
    assert set(got["run_id"]) == {"r1"} and set(got["system_id"]) == {"s1"}
    assert set(got["estimand"]) == {settings["matching_estimand"]}
    assert set(got["perturbation_set"]) == {"P0 P1 P2"}
    by_id = {d[0]: d for d in DISTRIBUTIONS}
    assert got["confounder"].tolist() == [by_id[d][1] for d in got["distribution_id"]]
    assert got["favored_value"].tolist() == [by_id[d][2] for d in got["distribution_id"]]
    for column in ["n_treated", "n_control", "n_draws"]:
        assert got[column].tolist() == want[column].tolist(), column
    assert (got["n_draws_left_out"] == 0).all()
    for column in NUMBERS:
        np.testing.assert_allclose(got[column], want[column], rtol=1e-9, atol=1e-9, err_msg=column)
    # the rows beside the means (perturbation_effect_draws): each draw's own values
    draws = out.loc[out["draw"].notna()].sort_values([*keys, "draw"]).reset_index(drop=True)
    want_draws = want_draws.sort_values([*keys, "draw"]).reset_index(drop=True)
    assert draws[[*keys, "draw"]].astype(str).values.tolist() == (
        want_draws[[*keys, "draw"]].astype(str).values.tolist()
    )
    for column in ["n_treated", "n_control"]:
        assert draws[column].tolist() == want_draws[column].tolist(), column
    assert draws[["n_draws", "ape_matched_sd", "n_draws_left_out"]].isna().all().all()
    for column in NUMBERS[:5]:
        np.testing.assert_allclose(
            draws[column].astype(float), want_draws[column], rtol=1e-9, atol=1e-9, err_msg=column
        )


def test_each_setting_changes_the_estimate() -> None:
    """The settings are not decorative: another seed, estimand, strata or number of draws
    each gives other numbers (so the test above pins what each one passes)."""
    base = _means(_model()(_Dbt(SETTINGS), None))["ape_matched"].to_numpy()
    for key, value in [
        ("causal_seed", "12"),
        ("matching_estimand", "ATE"),
        ("effect_strata", "confounder"),
        ("treatment_draws", "2"),
    ]:
        other = _means(_model()(_Dbt(SETTINGS | {key: value}), None))["ape_matched"].to_numpy()
        assert other.shape == base.shape and not np.allclose(other, base), key


#: each setting unset (None), and the text ones empty too (an empty seed is not None)
MISSING = [(name, None) for name in sorted(SETTINGS)]
MISSING += [(name, "") for name in ("robustness_outcomes", "matching_estimand", "effect_strata")]


@pytest.mark.parametrize(("missing", "value"), MISSING)
def test_a_missing_setting_is_refused_in_one_line(missing: str, value: str | None) -> None:
    settings = SETTINGS | {missing: value}
    with pytest.raises(ValueError) as caught:
        _model()(_Dbt(settings), None)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("int_perturbation_effects_estimated: set config")
    for name in SETTINGS:
        assert name in message


def test_a_seed_or_draw_count_of_zero_is_a_setting_not_a_missing_one() -> None:
    """``causal_seed: 0`` is a seed (only None is missing); zero draws reach the library,
    which refuses them with its own message."""
    out = _model()(_Dbt(SETTINGS | {"causal_seed": 0}), None)
    assert len(_means(out)) == 2 * 2 * 2 and len(out) == 2 * 2 * 2 * (1 + 3)
    with pytest.raises(ValueError, match="treatment_draws must be an integer >= 1"):
        _model()(_Dbt(SETTINGS | {"treatment_draws": 0}), None)
