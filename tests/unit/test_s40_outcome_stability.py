"""rating_stability bootstraps the WRS/APE/PIE ratings of EVERY robustness outcome (var
robustness_outcomes), the accuracy ratings once (outcome null), and rates only what the
published marts rate.

The small effect study of tests/support/effect_study.py gets a second outcome ``other`` (a
different transform of the same windows, so other ratings) and ``gappy`` (``other`` with one
window of system "moved" missing: a system without quantile forecasts has no wql). The
published scores come from the published functions (wrs_table, effect_scores); every
resampled score of ``other`` is checked against a plain computation: WRS by the published
t-tests on physically replicated rows, APE/PIE by the slow unit-by-unit loop of
test_stability_draws on the ``other`` column. The report reads the default outcome only.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd

from tests.support.effect_study import DRAWS, SEED, effect_inputs
from tests.support.stability_inputs import accuracy_scores_of, stability_settings
from tests.unit.test_stability import replicate
from tests.unit.test_stability_draws import _slow_scores
from tsrate.methods.causal.effects import effect_scores, study_effects
from tsrate.methods.ratings import date_multiplicities, interval_holding_the_point
from tsrate.methods.wrs import wrs_pair_table, wrs_table
from tsrate.robustness.marts.stability import effect_resamples, rating_stability
from tsrate.robustness.report import data as rd

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})
OUTCOMES = ["max_abs_residual", "other", "gappy"]
RESAMPLES, BLOCK, BOOT_SEED = 6, 4, 3
KEY = ["run_id", "metric", "outcome", "system_id", "perturbation_id", "rating_level"]


def study():
    """(errors, published robustness scores, published effect means, sets, distributions,
    settings) of the effect study with the outcomes of OUTCOMES."""
    errors, sets, distributions, _ = effect_inputs()
    rng = np.random.default_rng(11)
    odd = errors["ticker"].isin(["B", "D", "F"]).to_numpy()
    errors["other"] = errors["max_abs_residual"] ** 1.5 * np.where(odd, 1.6, 1.0)
    errors["gappy"] = errors["other"]
    errors.loc[errors.index[errors["system_id"] == "moved"][5], "gappy"] = np.nan
    errors["smape"] = rng.random(len(errors))
    errors["mase"] = 1.0 + rng.random(len(errors))
    errors["sign_accuracy"] = rng.integers(0, 101, len(errors)).astype(float)
    wrs = wrs_table(wrs_pair_table(errors, LEVELS, OUTCOMES))
    effects = study_effects(
        errors, sets, distributions, SEED, draws=DRAWS, estimand="ATE", outcomes=OUTCOMES
    )
    columns = ["run_id", "metric", "outcome", "system_id", "perturbation_id", "raw_score"]
    scores = pd.concat(
        [wrs[[*columns, "max_score"]], effect_scores(effects, "max")[columns]],
        ignore_index=True,
    )
    settings = stability_settings(
        bootstrap_resamples=RESAMPLES,
        bootstrap_block_length=BLOCK,
        bootstrap_seed=BOOT_SEED,
        robustness_outcomes=" ".join(OUTCOMES),
        causal_seed=SEED,
        treatment_draws=DRAWS,
    )
    return errors, scores, effects, sets, distributions, settings


def stability(errors, scores, effects, sets, distributions, settings, accuracy=None):
    accuracy = accuracy_scores_of(errors) if accuracy is None else accuracy
    return rating_stability(
        errors, scores, effects, LEVELS, sets, distributions, settings, accuracy_scores=accuracy
    )


def weights_of(errors) -> tuple[np.ndarray, np.ndarray]:
    dates = np.unique(errors["window_end_date"].to_numpy().astype("datetime64[D]"))
    return dates, date_multiplicities(dates.size, BLOCK, RESAMPLES, BOOT_SEED)


def interval(point: float, values: list[float], confidence: float = 0.9) -> tuple[float, float]:
    """The percentile interval of ``values`` widened to ``point`` (bootstrap_summary's rule)."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    low, high = interval_holding_the_point(np.array([point]), np.array([low]), np.array([high]))
    return float(low[0]), float(high[0])


def test_wrs_of_another_outcome_is_resampled_on_that_outcome_by_replicated_rows():
    """wrs_industry at ``other``: each resample's WRS is the published t-tests on the rows
    copied as often as their date was drawn (the ``other`` column), and the interval is the
    percentile interval of those; the rows at the default outcome hold other numbers."""
    errors, scores, effects, sets, distributions, settings = study()
    out = stability(errors, scores, effects, sets, distributions, settings)
    dates, weights = weights_of(errors)
    resampled = []
    for r in range(RESAMPLES):
        copies = replicate(errors, dates, weights[r])
        table = wrs_table(wrs_pair_table(copies, LEVELS, ["other"]))
        resampled.append(table.set_index(["metric", "system_id", "perturbation_id"])["raw_score"])
    published = scores.set_index(["metric", "outcome", "system_id", "perturbation_id"])
    rows = out.loc[(out["metric"] == "wrs_industry") & (out["rating_level"] == 1)]
    at_other = rows.loc[rows["outcome"] == "other"]
    assert len(at_other) == 6  # 2 systems x 3 perturbations
    for row in at_other.itertuples():
        point = published.loc[("wrs_industry", "other", row.system_id, row.perturbation_id)]
        values = [
            float(s.loc[("wrs_industry", row.system_id, row.perturbation_id)]) for s in resampled
        ]
        assert row.raw_score == point["raw_score"]
        np.testing.assert_allclose(
            (row.ci_low, row.ci_high), interval(point["raw_score"], values), rtol=1e-12
        )
        assert row.n_valid == RESAMPLES
    default = rows.loc[rows["outcome"] == "max_abs_residual"].set_index(
        ["system_id", "perturbation_id"]
    )
    other = at_other.set_index(["system_id", "perturbation_id"])
    assert not np.allclose(default["raw_score"], other.loc[default.index, "raw_score"])


def test_ape_and_pie_of_another_outcome_match_the_slow_loop_on_that_outcome():
    """ape_company / pie_industry at ``other``, resample by resample, are the slow
    unit-by-unit estimate on the ``other`` column (test_stability_draws._slow_scores reads
    max_abs_residual: it is handed ``other`` under that name)."""
    errors, _, effects, sets, distributions, settings = study()
    dates, weights = weights_of(errors)
    resamples = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, weights, settings
    )
    as_default = errors.assign(max_abs_residual=errors["other"])
    checked = 3  # the slow loop takes seconds per resample
    slow = [_slow_scores(as_default, distributions, weights[r]) for r in range(checked)]
    for metric in ("ape_company", "pie_industry"):
        keys, boot = resamples[metric]
        at = (keys["outcome"] == "other").to_numpy()
        assert at.sum() == 4  # 2 systems x 2 treatments
        pairs = list(zip(keys["system_id"][at], keys["perturbation_id"][at], strict=True))
        for r in range(checked):
            want = [slow[r][metric][pair] for pair in pairs]
            np.testing.assert_allclose(boot[r, at], want, rtol=1e-9, err_msg=f"{metric} {r}")
        # the default outcome's columns are other numbers
        default = (keys["outcome"] == "max_abs_residual").to_numpy()
        assert not np.allclose(boot[:, default], boot[:, at])


def test_a_system_without_an_outcome_gets_no_rows_there_and_keeps_the_others():
    """ "moved" lacks one ``gappy`` window: like the published scores (robustness_scores
    rates a system on an outcome only over all of its windows) it has no ``gappy`` rows,
    no crash, no invented firmness; "flat" keeps its ``gappy`` rows, and "moved" its rows
    at the other outcomes."""
    errors, scores, effects, sets, distributions, settings = study()
    out = stability(errors, scores, effects, sets, distributions, settings)
    gappy = out.loc[out["outcome"] == "gappy"]
    assert set(gappy["system_id"]) == {"flat"}
    assert set(gappy["metric"]) == {
        "wrs_industry", "wrs_company", "ape_industry", "ape_company", "pie_industry", "pie_company"
    }  # fmt: skip
    # flat is alone at gappy: separable (no other system), rated by its distance from 0
    assert gappy["separable"].eq(True).all()
    moved = out.loc[out["system_id"] == "moved", "outcome"]
    assert set(moved.dropna()) == {"max_abs_residual", "other"}


def test_every_row_has_one_key_and_accuracy_alone_has_no_outcome():
    """The grain (run, metric, outcome, system, perturbation, level) is unique, accuracy
    rows carry a null outcome and robustness rows one of the configured outcomes."""
    errors, scores, effects, sets, distributions, settings = study()
    out = stability(errors, scores, effects, sets, distributions, settings)
    assert not out.duplicated(KEY).any()
    accuracy = out["metric"].isin(["smape", "mase", "sign_accuracy"])
    assert out.loc[accuracy, "outcome"].isna().all()
    assert set(out.loc[~accuracy, "outcome"]) == set(OUTCOMES)
    # each accuracy rating once, not once per outcome
    assert len(out.loc[accuracy]) == 3 * 2 * 3 * 3  # metrics x systems x perturbations x L


def test_an_accuracy_mean_the_published_mart_cannot_rate_is_not_rated_here():
    """One NaN smape window of "flat" at P1 makes accuracy_scores' mean NaN there (SQL's avg
    propagates NaN): marts.ratings leaves flat out of smape/P1, so the bootstrap must too --
    no flat row, and "moved" rated as the lone system it is in the published ratings (an
    accuracy metric has no ideal: null rating, no share on any level). Rated from its finite
    windows, flat would give moved a rating."""
    errors, scores, effects, sets, distributions, settings = study()
    at = (errors["system_id"] == "flat") & (errors["perturbation_id"] == "P1")
    errors.loc[errors.index[at][3], "smape"] = np.nan
    published = accuracy_scores_of(errors)
    assert np.isnan(
        published.set_index(["system_id", "perturbation_id", "metric"]).loc[
            ("flat", "P1", "smape"), "mean"
        ]
    )
    out = stability(errors, scores, effects, sets, distributions, settings, published)
    smape = out.loc[(out["metric"] == "smape") & (out["perturbation_id"] == "P1")]
    assert set(smape["system_id"]) == {"moved"}
    # no resample rates a lone accuracy score, so there is no share to give (not 0)
    assert smape["rating"].isna().all() and smape["share"].isna().all()
    # the other perturbations and metrics keep both systems
    p2 = out.loc[(out["metric"] == "smape") & (out["perturbation_id"] == "P2")]
    assert set(p2["system_id"]) == {"flat", "moved"}


def _snapshot(path, rows) -> str:
    """A hand-written snapshot: ratings of wrs_company (two outcomes, max_abs_residual the
    default) and smape; rating_stability rows at both outcomes with different shares."""
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.execute(
        "create table published_runs as select 'r1' as run_id, "
        "timestamp '2026-01-02' as published_at, ? as study",
        [json.dumps({"systems": ["a", "b"]})],
    )
    con.execute(
        "create table marts.ratings (run_id varchar, metric varchar, perturbation_id varchar, "
        "system_id varchar, raw_score double, rating integer, outcome varchar, "
        "is_default_outcome boolean)"
    )
    for outcome in ("max_abs_residual", "relative_max_abs_residual"):
        for system, rating in (("a", 1), ("b", 3)):
            con.execute(
                "insert into marts.ratings values ('r1', 'wrs_company', 'P1', ?, 1.0, ?, ?, ?)",
                [system, rating, outcome, outcome == "max_abs_residual"],
            )
    con.execute(
        "create table marts.rating_stability (run_id varchar, metric varchar, outcome varchar, "
        "system_id varchar, perturbation_id varchar, rating bigint, rating_level bigint, "
        "share double, ci_low double, ci_high double, n_valid bigint, n_resamples bigint, "
        "confidence double)"
    )
    con.executemany(
        "insert into marts.rating_stability values ('r1', ?, ?, ?, 'P1', ?, ?, ?, 0, 1, 9, 9, 0.95)",
        rows,
    )
    for name in ("system_summary", "perturbation_summary", "confounder_comparison"):
        con.execute(f"create table marts.{name} as select 'r1' as run_id")
    con.close()
    return path


def test_the_report_reads_the_default_outcomes_firmness_once(tmp_path):
    """rating_stability holds every outcome: the report (the default view) takes the
    default outcome's share at the published rating, one row per rating, and the accuracy
    rows (outcome null) as they are."""
    rows = []
    for outcome, share in (("max_abs_residual", 0.9), ("relative_max_abs_residual", 0.4)):
        for system, rating in (("a", 1), ("b", 3)):
            rows += [
                ("wrs_company", outcome, system, rating, level, share if level == rating else 0.0)
                for level in (1, 2, 3)
            ]
    rows += [("smape", None, "a", 1, 1, 0.7), ("smape", None, "a", 1, 2, 0.3)]
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", rows))
    got = data.stability.sort_values(["metric", "system_id"])
    assert not got.duplicated(["metric", "perturbation_id", "system_id"]).any()
    assert got[["metric", "system_id", "share"]].values.tolist() == [
        ["smape", "a", 0.7],
        ["wrs_company", "a", 0.9],
        ["wrs_company", "b", 0.9],
    ]


def test_each_outcome_resamples_its_own_worst_distributions():
    """With one worst distribution per confounder (var bootstrap_effect_distributions = 1)
    the distributions resampled are chosen per outcome from that outcome's published means
    (they differ here: flat's worst company at P2 is B by |APE_m| at max_abs_residual, C at
    other): every outcome of the batched pass equals the resampling of that outcome alone."""
    errors, _, effects, sets, distributions, settings = study()
    dates, weights = weights_of(errors)
    batched = effect_resamples(
        errors, effects, 1, sets, distributions, "r1", dates, weights, settings
    )
    for outcome in ("max_abs_residual", "other"):
        alone = effect_resamples(
            errors.assign(max_abs_residual=errors[outcome]),
            effects.loc[effects["outcome"] == outcome].assign(outcome="max_abs_residual"),
            1,
            sets,
            distributions,
            "r1",
            dates,
            weights,
            settings | {"robustness_outcomes": "max_abs_residual"},
        )
        for metric, (keys, boot) in batched.items():
            at = (keys["outcome"] == outcome).to_numpy()
            np.testing.assert_allclose(boot[:, at], alone[metric][1], rtol=1e-12, err_msg=metric)
