"""The core's thin dbt Python models (round 12 of the mutation sweep; survivors in
tests/planted/sweep12_python_models.json) against independent computations.

Each model reads its settings from ``dbt.config.get`` (the YAML's values, rendered as
strings by dbt) and its parents through ``dbt.ref``; the integration builds only ever
give them the project's defaults, every setting at once. Here a stand-in ``dbt`` object
hands each model real DuckDB relations of a tiny study and settings away from the
defaults, and every published number is recomputed in this file from its definition:

* int_leaderboard_scored: relative errors to the configured baseline clipped to
  [0.01, 100], skill = 1 - the geometric mean (scipy.stats.gmean), fev's win rate pair by
  pair, and the block-bootstrap intervals resample by resample (tickers drawn with
  ``default_rng(seed).integers`` as documented, each drawn ticker's tasks taken whole);
* int_wrs_pairs_tested / int_wrs_scores_summed: every configured outcome, the industry
  pairs' Student t-tests (scipy.stats.ttest_ind), ``p < 1 - confidence`` at every level of
  the confidence_levels seed, the columns of the public mart wrs_pairs (no pandas index
  among them), and the WRS as the sum of a system and perturbation's weighted rejections;
* int_confounder_distributions: the derived distributions (one per industry, at most K
  companies round-robin over the sorted industries) and the seed's, restricted to the study;
* int_treatments_assigned: draw 0 of each distribution from its documented seed
  (``sha256`` of the distribution id) through the inverse CDF of the weights;
* int_perturbation_effects_aggregated: the worst case (max |APE_m|, max PIE %) over the
  distributions, or their means;
* int_ratings_bootstrapped: the distributions it resamples are chosen by the published
  means, whatever the per-draw rows beside them hold;
* int_ratings_assigned / int_rating_leave_one_out: Algorithm 5 on the configured number of
  levels (the distinct scores split as numpy.array_split does), and the ratings with each
  other system removed.

A missing setting is refused in one line naming the settings, whichever one is missing
(the others given)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from tests.support.effect_study import SEED as EFFECT_SEED
from tests.support.effect_study import effect_inputs
from tests.support.effects_draws import draw_codes, draw_seed
from tests.support.stability_inputs import accuracy_scores_of
from tsrate.methods.causal.effects import effect_means, effect_scores, study_effects, with_draws

ROOT = Path(__file__).resolve().parents[2]


def _model(name: str):
    path = ROOT / "python_models" / "intermediate" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


class _Dbt:
    """What a dbt Python model is handed: ``config.get`` and ``ref`` (a DuckDB relation of
    each parent, registered from the frames given)."""

    def __init__(self, config: dict[str, str | None], parents: dict[str, pd.DataFrame]) -> None:
        self.con = duckdb.connect()
        for name, frame in parents.items():
            self.con.register(f"{name}_frame", frame)
            self.con.execute(f"create table {name} as select * from {name}_frame")
        self.config = SimpleNamespace(get=config.get)

    def ref(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.table(name)


def _refused(name: str, settings: dict, parents: dict, missing: str, value=None) -> str:
    with pytest.raises(ValueError) as raised:
        _model(name)(_Dbt(settings | {missing: value}, parents), None)
    message = str(raised.value)
    assert "\n" not in message and name in message
    return message


# ------------------------------------------------------------------ the leaderboard

#: test_error per (ticker, system): the baseline "base", and "good" / "poor" around it; one
#: ratio is clipped at 100 and one at 0.01, and one task is tied ("good" = "poor").
TASK_ERRORS = {
    "T1": {"base": 2.0, "good": 1.0, "poor": 3.0},
    "T2": {"base": 4.0, "good": 0.02, "poor": 6.0},
    "T3": {"base": 0.5, "good": 0.25, "poor": 80.0},
    "T4": {"base": 1.0, "good": 1.5, "poor": 1.5},
}
LEADERBOARD_SETTINGS = {
    "leaderboard_baseline": "base",
    "leaderboard_bootstrap_resamples": "9",
    "leaderboard_bootstrap_seed": "5",
}


def _tasks() -> pd.DataFrame:
    rows = [
        {
            "run_id": "r1",
            "metric": "mase",
            "ticker": ticker,
            "perturbation_id": "P0",
            "system_id": system,
            "test_error": error,
        }
        for ticker, errors in TASK_ERRORS.items()
        for system, error in errors.items()
    ]
    return pd.DataFrame(rows)


def _skill(relative: np.ndarray) -> np.ndarray:
    return 1.0 - stats.gmean(relative, axis=0)


def _win_rates(relative: np.ndarray) -> np.ndarray:
    """fev's win rate: per other system, the share of tasks with a lower error (a tie one
    half), averaged over the other systems."""
    n = relative.shape[1]
    out = []
    for i in range(n):
        shares = []
        for j in range(n):
            if i != j:
                a, b = relative[:, i], relative[:, j]
                shares.append(np.mean((a < b) + 0.5 * (a == b)))
        out.append(np.mean(shares))
    return np.array(out)


def test_leaderboard_scores_against_the_configured_baseline_and_bootstrap() -> None:
    settings = LEADERBOARD_SETTINGS
    got = _model("int_leaderboard_scored")(_Dbt(settings, {"leaderboard_tasks": _tasks()}), None)
    systems = ["base", "good", "poor"]
    tickers = list(TASK_ERRORS)
    errors = np.array([[TASK_ERRORS[t][s] for s in systems] for t in tickers])
    relative = np.clip(errors / errors[:, [0]], 0.01, 100.0)
    skill, wins = _skill(relative), _win_rates(relative)
    ranks = np.array([stats.rankdata(row) for row in relative]).mean(axis=0)
    # the bootstrap, resample by resample: tickers drawn with replacement, their tasks whole
    resamples, seed = int(settings["leaderboard_bootstrap_resamples"]), 5
    drawn = np.random.default_rng(seed).integers(0, len(tickers), size=(resamples, len(tickers)))
    boot_skill = np.array([_skill(relative[row]) for row in drawn])
    boot_wins = np.array([_win_rates(relative[row]) for row in drawn])
    assert sorted(set(got["scope"])) == ["P0", "all"]  # one perturbation: the same numbers
    for _, scope in got.groupby("scope"):
        scope = scope.set_index("system_id").loc[systems]
        assert (scope["baseline_system_id"] == "base").all()
        assert scope["reason"].isna().all()
        assert scope["n_tasks"].tolist() == [4, 4, 4]
        np.testing.assert_allclose(scope["skill_score"], skill, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(scope["win_rate"], wins, rtol=1e-12)
        np.testing.assert_allclose(scope["average_rank"], ranks, rtol=1e-12)
        for column, values, q in [
            ("skill_score_lower", boot_skill, 0.025),
            ("skill_score_upper", boot_skill, 0.975),
            ("win_rate_lower", boot_wins, 0.025),
            ("win_rate_upper", boot_wins, 0.975),
        ]:
            want = np.quantile(values, q, axis=0)
            np.testing.assert_allclose(scope[column], want, rtol=1e-12, atol=1e-12, err_msg=column)
    assert got.loc[got["system_id"] == "base", "skill_score"].abs().max() < 1e-15


@pytest.mark.parametrize("missing", sorted(LEADERBOARD_SETTINGS))
def test_leaderboard_refuses_a_missing_setting(missing: str) -> None:
    message = _refused(
        "int_leaderboard_scored",
        LEADERBOARD_SETTINGS,
        {"leaderboard_tasks": _tasks()},
        missing,
    )
    assert all(name in message for name in LEADERBOARD_SETTINGS)


# ------------------------------------------------------------------------------ WRS

INDUSTRIES = {"A": "Tech", "B": "Tech", "C": "Bank", "D": "Bank", "E": "Energy", "F": "Energy"}
OUTCOMES = ["max_abs_residual", "smape"]


def _window_errors() -> pd.DataFrame:
    """Two systems x P0/P1 x 6 tickers in 3 industries x 8 windows; the industries' levels
    differ by outcome, system and perturbation so that the tests reject at some levels."""
    rng = np.random.default_rng(7)
    days = pd.bdate_range("2023-01-02", periods=8)
    rows = []
    for s, system in enumerate(["s1", "s2"]):
        for p, perturbation in enumerate(["P0", "P1"]):
            for i, (ticker, industry) in enumerate(INDUSTRIES.items()):
                level = {"Tech": 1.0, "Bank": 1.0 + 0.3 * (s + p), "Energy": 1.6}[industry]
                for day in days:
                    rows.append(
                        {
                            "run_id": "r1",
                            "system_id": system,
                            "perturbation_id": perturbation,
                            "ticker": ticker,
                            "industry": industry,
                            "window_end_date": day.date(),
                            "max_abs_residual": level + rng.normal(0.0, 0.4),
                            "smape": 0.1 * level * (1 + i % 2) + rng.normal(0.0, 0.05),
                            "wql": -1.0,
                        }
                    )
    return pd.DataFrame(rows)


def _confidence_levels() -> pd.DataFrame:
    return pd.read_csv(ROOT / "seeds" / "confidence_levels.csv")


def _wrs_dbt(settings: dict) -> _Dbt:
    parents = {"window_errors": _window_errors(), "confidence_levels": _confidence_levels()}
    return _Dbt(settings, parents)


def _mart_columns(name: str) -> list[str]:
    spec = yaml.safe_load((ROOT / "models" / "marts" / f"{name}.yml").read_text())
    (model,) = [m for m in spec["models"] if m["name"] == name]
    return [column["name"] for column in model["columns"]]


def test_wrs_pairs_are_student_t_tests_of_every_configured_outcome() -> None:
    settings = {"robustness_outcomes": " ".join(OUTCOMES)}
    table = _model("int_wrs_pairs_tested")(_wrs_dbt(settings), None)
    # the Arrow table DuckDB stores: the public mart's columns, no pandas index beside them
    assert sorted(table.column_names) == sorted(_mart_columns("wrs_pairs"))
    got = table.to_pandas()
    assert sorted(set(got["outcome"])) == sorted(OUTCOMES)
    errors = _window_errors()
    levels = _confidence_levels()
    assert sorted(set(got["analysis"])) == ["company", "industry"]
    checked = 0
    # industry pairs pool their tickers' windows; company pairs are tickers of one industry
    for analysis, column in [("industry", "industry"), ("company", "ticker")]:
        rows = got[got["analysis"] == analysis]
        for (outcome, system, perturbation, a, b), pair in rows.groupby(
            ["outcome", "system_id", "perturbation_id", "group_a", "group_b"]
        ):
            cell = errors[
                (errors["system_id"] == system) & (errors["perturbation_id"] == perturbation)
            ]
            x = cell.loc[cell[column] == a, outcome].to_numpy()
            y = cell.loc[cell[column] == b, outcome].to_numpy()
            if analysis == "company":
                assert INDUSTRIES[a] == INDUSTRIES[b] == pair["within_group"].iloc[0]
            test = stats.ttest_ind(x, y, equal_var=True)
            pair = pair.sort_values("confidence", ascending=False)
            assert pair["confidence"].tolist() == sorted(levels["confidence"], reverse=True)
            np.testing.assert_allclose(pair["p_value"], test.pvalue, rtol=1e-9)
            np.testing.assert_allclose(pair["t_statistic"], test.statistic, rtol=1e-9)
            rejected = test.pvalue < 1.0 - pair["confidence"].to_numpy()
            weights = levels.set_index("confidence").loc[pair["confidence"], "weight"].to_numpy()
            assert pair["rejected"].tolist() == rejected.tolist()
            np.testing.assert_allclose(pair["weighted_rejection"], weights * rejected)
            checked += 1
    # outcomes x systems x perturbations x (3 industry pairs + one company pair per industry)
    assert checked == len(OUTCOMES) * 2 * 2 * (3 + 3)
    assert got["rejected"].any() and not got["rejected"].all()


def test_wrs_is_the_sum_of_weighted_rejections() -> None:
    settings = {"robustness_outcomes": " ".join(OUTCOMES)}
    pairs = _model("int_wrs_pairs_tested")(_wrs_dbt(settings), None).to_pandas()
    dbt = _Dbt({}, {"int_wrs_pairs_tested": pairs})
    got = _model("int_wrs_scores_summed")(dbt, None)
    keys = ["run_id", "analysis", "outcome", "system_id", "perturbation_id"]
    want = pairs.groupby(keys)["weighted_rejection"].sum().rename("want").reset_index()
    merged = want.merge(got, on=keys, how="outer", validate="one_to_one")
    assert len(merged) == len(want) == len(got)
    assert merged["want"].sum() > 0
    np.testing.assert_allclose(merged["raw_score"], merged["want"], rtol=1e-12)


@pytest.mark.parametrize("value", [None, "", "   "])
def test_wrs_pairs_refuse_no_outcomes(value) -> None:
    message = _refused("int_wrs_pairs_tested", {}, {}, "robustness_outcomes", value)
    assert "robustness_outcomes" in message


# -------------------------------------------------------------- the confounder side

#: ticker -> industry of the study; the seed's frame lists one more industry and company.
COMPANIES = {"A": "Tech", "B": "Tech", "C": "Bank"}
SEED_DISTRIBUTIONS = pd.DataFrame(
    [
        ("DI1", "industry", "Tech", 2.0, 1.0),
        ("DI9", "industry", "Energy", 2.0, 1.0),
        ("DC1", "company", "C", 3.0, 1.0),
        ("DC9", "company", "Z", 2.0, 1.0),
    ],
    columns=["distribution_id", "confounder", "favored_value", "treated_weight", "control_weight"],
)
DISTRIBUTION_SETTINGS = {"confounder_distributions": "derived", "max_company_distributions": "2"}


def _distribution_parents() -> dict[str, pd.DataFrame]:
    windows = pd.DataFrame({"ticker": ["A", "A", "B", "C", "C"]})
    # the selected companies include one without a window (D): no distribution favours it
    selected = COMPANIES | {"D": "Energy"}
    companies = pd.DataFrame(
        {"ticker": list(selected), "industry": list(selected.values()), "company_name": "x"}
    )
    return {
        "int_windows_located": windows,
        "int_companies_selected": companies,
        "confounder_distributions": SEED_DISTRIBUTIONS,
    }


def test_derived_distributions_bound_the_companies_round_robin() -> None:
    dbt = _Dbt(DISTRIBUTION_SETTINGS, _distribution_parents())
    got = _model("int_confounder_distributions")(dbt, None)
    # industries sorted (Bank, Tech), their tickers sorted, taken round-robin: C, A, then B;
    # K = 2 keeps C and A; every industry has its own distribution
    rows = got[["distribution_id", "confounder", "favored_value"]].values.tolist()
    assert sorted(map(tuple, rows)) == [
        ("company:A", "company", "A"),
        ("company:C", "company", "C"),
        ("industry:Bank", "industry", "Bank"),
        ("industry:Tech", "industry", "Tech"),
    ]
    assert got["treated_weight"].tolist() == [2.0] * 4
    assert got["control_weight"].tolist() == [1.0] * 4


def test_seed_distributions_are_restricted_to_the_study() -> None:
    settings = DISTRIBUTION_SETTINGS | {"confounder_distributions": "seed"}
    got = _model("int_confounder_distributions")(_Dbt(settings, _distribution_parents()), None)
    assert sorted(got["distribution_id"]) == ["DC1", "DI1"]
    assert got.set_index("distribution_id").loc["DC1", "treated_weight"] == 3.0


@pytest.mark.parametrize("missing", sorted(DISTRIBUTION_SETTINGS))
def test_distributions_refuse_a_missing_setting(missing: str) -> None:
    message = _refused(
        "int_confounder_distributions", DISTRIBUTION_SETTINGS, _distribution_parents(), missing
    )
    assert all(name in message for name in DISTRIBUTION_SETTINGS)


def test_treatments_are_draw_zero_of_each_distribution_from_its_seed() -> None:
    days = pd.bdate_range("2023-03-01", periods=12)
    units = pd.DataFrame(
        [
            {"run_id": "r1", "ticker": t, "industry": i, "window_end_date": d.date(), "x": k}
            for t, i in COMPANIES.items()
            for d in days
            for k in range(2)  # two rows per window: the model takes the distinct units
        ]
    )
    sets = pd.DataFrame(
        {"run_id": ["r1", "r1"], "system_id": ["s1", "s2"]}
        | {"perturbation_set": ["P0 P1 P2", "P0 P3"], "has_effects": [True, False]}
    )
    distributions = pd.DataFrame(
        [("co-C", "company", "C", 3.0, 1.0), ("ind-Tech", "industry", "Tech", 2.0, 1.0)],
        columns=SEED_DISTRIBUTIONS.columns,
    )
    parents = {
        "window_errors": units,
        "int_perturbation_sets_derived": sets,
        "int_confounder_distributions": distributions,
    }
    got = _model("int_treatments_assigned")(_Dbt({"causal_seed": "17"}, parents), None)
    got = got.read_all().to_pandas()
    labels = ["P0", "P1", "P2"]
    grid = sorted((t, d.date()) for t in COMPANIES for d in days)  # (ticker, date): draw order
    tickers = np.array([t for t, _ in grid])
    industries = np.array([COMPANIES[t] for t in tickers])
    assert set(got["perturbation_set"]) == {"P0 P1 P2"}  # the set with effects only
    assert len(got) == len(grid) * len(distributions)
    for dist_id, confounder, favoured, tw, cw in distributions.itertuples(index=False):
        column = tickers if confounder == "company" else industries
        u = np.random.default_rng(draw_seed(17, dist_id)).random(len(grid))
        codes = draw_codes(u, column == favoured, tw, cw, len(labels) - 1)
        mine = got[got["distribution_id"] == dist_id]
        keys = zip(mine["ticker"], mine["window_end_date"], strict=True)
        drawn = dict(zip(keys, mine["perturbation_id"], strict=True))
        assert [drawn[key] for key in grid] == [labels[c] for c in codes], dist_id
        assert (
            mine["is_favored"].tolist()
            == (mine["ticker"] if confounder == "company" else mine["industry"])
            .eq(favoured)
            .tolist()
        )


def test_treatments_refuse_a_missing_seed() -> None:
    assert "causal_seed" in _refused("int_treatments_assigned", {}, {}, "causal_seed")


# ------------------------------------------------------------------ the aggregation


def _estimated() -> pd.DataFrame:
    """Two distributions x one treatment: APE_m of -3 (d1) and 2 (d2), PIE % 10 and 40."""
    base = {"run_id": "r1", "system_id": "s1", "perturbation_set": "P0 P1"}
    base |= {"perturbation_id": "P1", "outcome": "max_abs_residual", "estimand": "ATE"}
    rows = []
    for dist, ape_m, pie, ape_o in [("d1", -3.0, 10.0, -2.5), ("d2", 2.0, 40.0, 2.2)]:
        rows.append(
            base
            | {
                "distribution_id": dist,
                "confounder": "industry",
                "favored_value": dist.upper(),
                "n_treated": 5,
                "n_control": 6,
                "ape_observational": ape_o,
                "ape_matched": ape_m,
                "ape_oracle": 1.0,
                "matching_error": ape_m - 1.0,
                "pie_percent": pie,
                "strata_without_overlap": 0,
                "n_strata": 2,
                "n_draws": 2,
                "ape_observational_sd": 0.1,
                "ape_matched_sd": 0.2,
                "pie_percent_sd": 0.3,
                "n_draws_left_out": 0,
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("aggregation", "ape", "pie", "worst"),
    [("max", 3.0, 40.0, ["d1", "d2"]), ("mean", 2.5, 25.0, [None, None])],
)
def test_aggregation_takes_the_configured_case(aggregation, ape, pie, worst) -> None:
    """max: the worst case, max |APE_m| (3, of d1) and max PIE % (40, of d2); mean: the
    means of |APE_m| (2.5) and PIE % (25)."""
    parents = {"int_perturbation_effects_estimated": _estimated()}
    dbt = _Dbt({"distribution_aggregation": aggregation}, parents)
    got = _model("int_perturbation_effects_aggregated")(dbt, None).set_index("measure")
    assert got.loc[["ape", "pie"], "raw_score"].tolist() == [ape, pie]
    assert [
        None if pd.isna(w) else w for w in got.loc[["ape", "pie"], "worst_distribution_id"]
    ] == worst


def test_aggregation_rates_the_mean_rows_not_the_draws_beside_them() -> None:
    """int_perturbation_effects_estimated holds the means (draw null) and, beside them, the
    draws they average (perturbation_effect_draws): only the means are rated. Draws far from
    their means (APE_m 50, PIE % 900) would change every score."""
    means = _estimated()
    spread = ["n_draws", "ape_observational_sd", "ape_matched_sd", "pie_percent_sd"]
    draw = means.drop(columns=[*spread, "n_draws_left_out"])
    draw = draw.assign(ape_matched=50.0, pie_percent=900.0)
    both = pd.concat(
        [means.assign(draw=None), draw.assign(draw=0), draw.assign(draw=1)], ignore_index=True
    ).astype({"draw": "Int64"})
    settings = {"distribution_aggregation": "max"}
    model = _model("int_perturbation_effects_aggregated")
    alone = model(_Dbt(settings, {"int_perturbation_effects_estimated": means}), None)
    got = model(_Dbt(settings, {"int_perturbation_effects_estimated": both}), None)
    assert got["raw_score"].tolist() == [3.0, 40.0]
    pd.testing.assert_frame_equal(got, alone)


#: int_ratings_bootstrapped's settings: one worst distribution per confounder, so which one
#: is chosen changes the resamples
BOOTSTRAP_SETTINGS = {
    "rating_levels": "3",
    "bootstrap_resamples": "20",
    "bootstrap_block_length": "3",
    "bootstrap_seed": "4",
    "bootstrap_confidence": "0.9",
    "robustness_outcome": "max_abs_residual",
    "robustness_outcomes": "max_abs_residual",
    "matching_estimand": "ATE",
    "distribution_aggregation": "max",
    "bootstrap_effect_distributions": "1",
    "causal_seed": str(EFFECT_SEED),
    "treatment_draws": "3",
    "effect_strata": "confounder",
}


def _bootstrap_parents(estimated: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """int_ratings_bootstrapped's parents on the small effect study (tests/support/
    effect_study.py), with ``estimated`` as int_perturbation_effects_estimated."""
    errors, sets, distributions, _ = effect_inputs()
    rng = np.random.default_rng(3)
    errors = errors.assign(
        smape=rng.random(len(errors)), mase=rng.random(len(errors)), sign_accuracy=0.5
    )
    scores = effect_scores(effect_means(estimated), "max")
    return {
        "window_errors": errors,
        "robustness_scores": scores.assign(is_default_outcome=True, max_score=np.nan),
        "int_perturbation_effects_estimated": estimated,
        "confidence_levels": pd.DataFrame(
            {"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]}
        ),
        "int_perturbation_sets_derived": sets,
        "int_confounder_distributions": distributions,
        "accuracy_scores": accuracy_scores_of(errors),
    }


def test_rating_stability_resamples_the_distributions_worst_by_their_means() -> None:
    """int_ratings_bootstrapped picks the distributions it resamples (the k worst per
    confounder, var bootstrap_effect_distributions) from the published means (draw null),
    not from the per-draw rows beside them: a draw far from its mean (the first
    distribution's draw 0 given the largest |APE_m| and PIE %) changes nothing, nor do the
    real draws."""
    errors, sets, distributions, _ = effect_inputs()
    draw_rows: list[pd.DataFrame] = []
    effects = study_effects(
        errors, sets, distributions, EFFECT_SEED, draws=3, estimand="ATE", draw_rows=draw_rows
    )
    estimated = with_draws(effects, draw_rows)
    means = estimated.loc[estimated["draw"].isna()].reset_index(drop=True)
    draws = estimated.loc[estimated["draw"].notna()]
    first = draws["distribution_id"] == sorted(draws["distribution_id"])[0]
    extreme = draws.loc[first & (draws["draw"] == 0)].assign(ape_matched=1e6, pie_percent=1e8)
    planted = pd.concat([means, extreme], ignore_index=True).astype({"draw": "Int64"})
    model = _model("int_ratings_bootstrapped")
    alone = model(_Dbt(BOOTSTRAP_SETTINGS, _bootstrap_parents(means)), None)
    assert alone["metric"].str.startswith(("ape_", "pie_")).any()
    for given in (planted, estimated):
        got = model(_Dbt(BOOTSTRAP_SETTINGS, _bootstrap_parents(given)), None)
        pd.testing.assert_frame_equal(got, alone)


@pytest.mark.parametrize("value", [None, ""])
def test_aggregation_refuses_no_setting(value) -> None:
    message = _refused(
        "int_perturbation_effects_aggregated", {}, {}, "distribution_aggregation", value
    )
    assert "distribution_aggregation" in message


# ---------------------------------------------------------------------- the ratings

#: raw scores (lower is better, all distinct): five systems on a robustness metric, four on
#: an accuracy metric
ROBUST = {"s1": 0.5, "s2": 1.0, "s3": 2.0, "s4": 3.0, "s5": 4.0}
ACCURATE = {"s1": 1.4, "s2": 1.1, "s3": 1.3, "s4": 1.2}


def _rate(scores: dict[str, float], levels: int) -> dict[str, int]:
    """Algorithm 5: the distinct scores sorted ascending, split into ``levels`` contiguous
    groups as numpy.array_split does (the first groups one longer); rating = group + 1."""
    distinct = sorted(set(scores.values()))
    rating = {}
    for index, group in enumerate(np.array_split(np.array(distinct), levels)):
        rating |= {float(v): index + 1 for v in group}
    return {system: rating[score] for system, score in scores.items()}


def _score_parents() -> dict[str, pd.DataFrame]:
    base = {"run_id": "r1", "perturbation_id": "P1", "higher_is_better": False}
    robustness = pd.DataFrame(
        [
            base
            | {"metric": "wrs_industry", "system_id": s, "raw_score": v}
            | {"outcome": "max_abs_residual", "is_default_outcome": True}
            | {"max_score": np.nan, "score_spread": np.nan}
            for s, v in ROBUST.items()
        ]
    )
    accuracy = pd.DataFrame(
        [base | {"metric": "mase", "system_id": s, "mean": v} for s, v in ACCURATE.items()]
    )
    return {"robustness_scores": robustness, "accuracy_scores": accuracy}


@pytest.mark.parametrize("levels", [2, 4])
def test_ratings_use_the_configured_levels(levels: int) -> None:
    dbt = _Dbt({"rating_levels": str(levels)}, _score_parents())
    got = _model("int_ratings_assigned")(dbt, None)
    for metric, scores in [("wrs_industry", ROBUST), ("mase", ACCURATE)]:
        mine = got[got["metric"] == metric].set_index("system_id")["rating"]
        assert mine.to_dict() == _rate(scores, levels), metric


@pytest.mark.parametrize("levels", [2, 4])
def test_leave_one_out_rerates_with_the_configured_levels(levels: int) -> None:
    assigned = _score_parents()["robustness_scores"].assign(max_score=np.nan)
    dbt = _Dbt({"rating_levels": str(levels)}, {"int_ratings_assigned": assigned})
    got = _model("int_rating_leave_one_out")(dbt, None).set_index("system_id")
    published = _rate(ROBUST, levels)
    for system in ROBUST:
        removed = [
            _rate({s: v for s, v in ROBUST.items() if s != gone}, levels)[system]
            for gone in ROBUST
            if gone != system
        ]
        row = got.loc[system]
        assert row["rating"] == published[system]
        assert (row["rating_min_one_removed"], row["rating_max_one_removed"]) == (
            min(removed),
            max(removed),
        )
        assert row["n_removals_changing"] == sum(r != published[system] for r in removed)


@pytest.mark.parametrize("name", ["int_ratings_assigned", "int_rating_leave_one_out"])
def test_ratings_refuse_no_levels(name: str) -> None:
    assert "rating_levels" in _refused(name, {}, {}, "rating_levels")
