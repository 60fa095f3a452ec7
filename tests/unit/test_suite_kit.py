"""The suite kit: lifecycle, raw tables, rating helper and spec, publish filter."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.methods.ratings import ratings_frame
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect
from tsrate.suites import SUITES, unbuilt_suite_marts
from tsrate.suites.lifecycle import (
    ensure_suite_tables,
    finish_suite_run,
    new_suite_run_id,
    start_suite_run,
    suite_run_status,
)
from tsrate.suites.rating import RatingSpecError, load_rating_specs, rate_scores


def _specs(**directions: bool) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "suite": "reasoning",
            "metric": list(directions),
            "higher_is_better": list(directions.values()),
            "ideal": np.nan,
        }
    )


def _independent_ratings(
    scores: dict[str, float], levels: int, higher_is_better: bool = False
) -> dict[str, int]:
    """Algorithm 5 by hand: distinct scores best first, split into ``levels`` groups; the
    best group is level 1 (lower is better) or level ``levels`` (higher is better)."""
    distinct = sorted(set(scores.values()), reverse=higher_is_better)
    if len(distinct) == 1:
        return {s: 1 if v == 0 else levels for s, v in scores.items()}
    size, extra = divmod(len(distinct), levels)
    rating, start = {}, 0
    for level in range(levels):
        stop = start + size + (1 if level < extra else 0)
        for value in distinct[start:stop]:
            rating[value] = levels - level if higher_is_better else level + 1
        start = stop
    return {s: rating[v] for s, v in scores.items()}


def test_the_raw_schema_has_every_suite_raw_table_and_connect_creates_none(tmp_path):
    with connect(tmp_path / "w.duckdb") as con:
        assert not con.execute("select * from duckdb_tables()").fetchall()  # connect only opens
        create_raw_tables(con)
        tables = {
            r[0]
            for r in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'raw'"
            ).fetchall()
        }
    assert "suite_runs" in tables
    for suite in SUITES.values():
        assert any(t.startswith(f"{suite.prefix}_") for t in tables), suite.name
    assert not any(t.endswith("_suite_runs") and t != "suite_runs" for t in tables)


def test_lifecycle_records_one_row_per_run_with_the_suite_and_its_details(tmp_path):
    with connect(tmp_path / "w.duckdb") as con:
        run = new_suite_run_id("reasoning")
        assert run.startswith("rsn-") and run != new_suite_run_id("reasoning")
        start_suite_run(con, "reasoning", run, {"seed": 1}, {"n_items": 4, "source": "procedural"})
        assert suite_run_status(con, run) == "running"
        finish_suite_run(con, run, "failed", "boom")
        row = con.execute(
            "select suite, status, message, finished_at is not null, "
            "details->>'n_items', config->>'seed' from raw.suite_runs"
        ).fetchone()
        assert row == ("reasoning", "failed", "boom", True, "4", "1")
        with pytest.raises(TsrateError, match="no suite run 'nope'"):
            finish_suite_run(con, "nope", "succeeded")
        with pytest.raises(TsrateError, match="unknown suite"):
            start_suite_run(con, "astrology", "x", {}, {})


def test_runs_of_a_per_suite_table_from_an_older_warehouse_are_copied_once(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema raw")
    con.execute(
        "create table raw.und_suite_runs (suite_run_id varchar, started_at timestamp, "
        "finished_at timestamp, status varchar, config_name varchar, config json, "
        "n_prompts integer, message varchar)"
    )
    con.execute(
        "insert into raw.und_suite_runs values ('und-1', '2026-01-01', null, 'succeeded', "
        "'small', '{\"a\": 1}', 12, null)"
    )
    ensure_suite_tables(con)
    ensure_suite_tables(con)  # idempotent: copied once
    rows = con.execute(
        "select suite, suite_run_id, status, details->>'config_name', "
        "cast(details->>'n_prompts' as integer) from raw.suite_runs"
    ).fetchall()
    con.close()
    assert rows == [("understanding", "und-1", "succeeded", "small", 12)]


def test_rate_scores_rates_each_key_group_in_the_spec_direction():
    scores = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": ["accuracy"] * 4 + ["mae"] * 4 + ["accuracy"] * 2,
            "task": ["t1"] * 4 + ["t1"] * 4 + ["t2"] * 2,
            "system_id": ["a", "b", "c", "d"] * 2 + ["a", "b"],
            "raw_score": [0.1, 0.5, 0.9, 0.5, 3.0, 1.0, 2.0, np.inf, 0.2, 0.4],
        }
    )
    specs = _specs(accuracy=True, mae=False)
    rated = rate_scores(
        scores, "reasoning", ["suite_run_id", "metric", "task"], "system_id", 3, specs
    )
    # key columns keep their names and order; ratings_frame's own columns pass through
    rating_columns = [
        c
        for c in ratings_frame(
            scores.iloc[:0].assign(perturbation_id="")[
                ["metric", "perturbation_id", "system_id", "raw_score"]
            ],
            3,
            {},
        ).columns
        if c not in {"metric", "perturbation_id", "system_id"}
    ]
    assert list(rated.columns) == ["suite_run_id", "metric", "task", "system_id", *rating_columns]
    got = rated.set_index(["metric", "task", "system_id"])
    for (metric, task), block in scores[np.isfinite(scores["raw_score"])].groupby(
        ["metric", "task"]
    ):
        expected = _independent_ratings(
            dict(zip(block["system_id"], block["raw_score"], strict=True)), 3, metric == "accuracy"
        )
        for system, rating in expected.items():
            assert got.loc[(metric, task, system), "rating"] == rating
    assert ("mae", "t1", "d") not in got.index  # undefined score: not rated
    assert got.loc[("accuracy", "t1", "c"), "higher_is_better"]
    assert not got.loc[("mae", "t1", "b"), "higher_is_better"]
    # the spec decides the direction: flip it and the flag flips; three distinct scores fill
    # all three levels, so c's rating is 3 either way
    flipped = rate_scores(
        scores,
        "reasoning",
        ["suite_run_id", "metric", "task"],
        "system_id",
        3,
        _specs(accuracy=False, mae=False),
    ).set_index(["metric", "task", "system_id"])
    assert not flipped.loc[("accuracy", "t1", "c"), "higher_is_better"]
    assert flipped.loc[("accuracy", "t1", "c"), "rating"] == 3
    # two distinct scores: the better takes the best level in either direction
    assert [got.loc[("accuracy", "t2", s), "rating"] for s in "ab"] == [2, 3]
    assert [flipped.loc[("accuracy", "t2", s), "rating"] for s in "ab"] == [1, 2]


def test_rate_scores_names_the_metric_without_a_spec_and_keeps_an_empty_frame_typed():
    scores = pd.DataFrame(
        {
            "suite_run_id": ["r"],
            "metric": ["speed"],
            "model_id": ["m"],
            "variant_id": ["v"],
            "raw_score": [1.0],
        }
    )
    with pytest.raises(RatingSpecError, match=r"no rating direction for metrics \['speed'\]"):
        rate_scores(
            scores, "reasoning", ["suite_run_id", "variant_id"], "model_id", 3, _specs(mae=False)
        )
    with pytest.raises(RatingSpecError, match="no rating spec for suite 'nope'"):
        rate_scores(scores, "nope", ["suite_run_id"], "model_id", 3, _specs(mae=False))
    empty = rate_scores(
        scores.iloc[:0],
        "reasoning",
        ["suite_run_id", "variant_id"],
        "model_id",
        3,
        _specs(mae=False),
    )
    assert empty.empty
    assert list(empty.columns)[:4] == ["suite_run_id", "variant_id", "metric", "model_id"]


def test_the_rating_spec_seed_covers_every_suite_once():
    specs = load_rating_specs()
    assert not specs.duplicated(["suite", "metric"]).any()
    assert set(specs["suite"]) == set(SUITES)
    assert specs["higher_is_better"].dtype == bool
    bounded = specs.dropna(subset=["ideal"])
    # an ideal is the best end: 1 for a higher-is-better share, 0 for an error
    assert (bounded.loc[bounded["higher_is_better"], "ideal"] == 1).all()
    assert (bounded.loc[~bounded["higher_is_better"], "ideal"] == 0).all()


def test_marts_of_suites_without_a_succeeded_run_are_not_published(tmp_path):
    with connect(tmp_path / "w.duckdb") as con:
        con.execute("create schema marts")
        for name in ("ratings", "rsn_ratings", "und_ratings", "interp_ratings"):
            con.execute(f"create table marts.{name} (x integer)")
        start_suite_run(con, "reasoning", "rsn-1", {}, {})
        finish_suite_run(con, "rsn-1", "succeeded")
        start_suite_run(con, "understanding", "und-1", {}, {})
        finish_suite_run(con, "und-1", "failed")
        assert unbuilt_suite_marts(con, con.execute("select current_database()").fetchone()[0]) == {
            "und_ratings",
            "interp_ratings",
        }


def test_a_core_publish_leaves_out_never_run_suites_and_keeps_built_ones(tmp_path):
    from tsrate.platform.publish import publish

    warehouse = tmp_path / "w.duckdb"
    with connect(warehouse) as con:
        con.execute("create schema marts")
        con.execute("create table marts.ratings as select 1 as x")
        con.execute("create table marts.und_scores (x integer)")  # built empty, never ran
        con.execute("create table marts.rsn_ratings as select 'rsn-1' as suite_run_id")
        start_suite_run(con, "reasoning", "rsn-1", {}, {})
        finish_suite_run(con, "rsn-1", "succeeded")
    result = publish(warehouse, "core-run", parquet=False)
    snapshot = duckdb.connect(str(result.path), read_only=True)
    try:
        marts = {
            r[0]
            for r in snapshot.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts'"
            ).fetchall()
        }
    finally:
        snapshot.close()
    assert marts == {"ratings", "rsn_ratings"}
    assert "marts.und_scores" not in result.row_counts


def test_reasoning_rating_scores_stack_each_metric_under_its_task():
    from tsrate.suites.reasoning.marts import rating_scores

    accuracy = pd.DataFrame(
        {
            "suite_run_id": "r",
            "system_id": ["a", "a"],
            "task": ["etiological", "qa_two"],
            "accuracy": [0.5, 0.75],
            "series_gap": [np.nan, 0.25],
        }
    )
    errors = pd.DataFrame(
        {
            "suite_run_id": "r",
            "system_id": ["a"],
            "condition": ["with_context"],
            "mae": [1.5],
            "mse": [3.0],
            "crps": [1.25],
        }
    )
    context = pd.DataFrame({"suite_run_id": "r", "system_id": ["a"], "mae_gain": [0.2]})
    got = rating_scores(accuracy, errors, context).set_index(["metric", "task"])["raw_score"]
    assert got.to_dict() == {
        ("accuracy", "etiological"): 0.5,
        ("accuracy", "qa_two"): 0.75,
        ("series_gap", "qa_two"): 0.25,  # qa tasks only
        ("mae", "forecast_with_context"): 1.5,
        ("mse", "forecast_with_context"): 3.0,
        ("crps", "forecast_with_context"): 1.25,
        ("context_gain", "forecast"): 0.2,
    }


def test_interpretability_rating_scores_keep_the_main_study_only():
    from tsrate.suites.interpretability.marts import rating_scores

    keys = {"suite_run_id": "r", "variant_id": "d4", "model_id": "m"}
    prediction = pd.DataFrame(
        [
            {**keys, "in_main_study": True, "test_mse_mean": 0.1, "test_mse_cv": 0.2},
            {
                **keys,
                "variant_id": "d4_f06",
                "in_main_study": False,
                "test_mse_mean": 9.0,
                "test_mse_cv": 9.0,
            },
        ]
    )
    correctness = pd.DataFrame(
        [
            {**keys, "in_main_study": True, "measure": m, "mean_value": v, "mean_margin": g}
            for m, v, g in [
                ("beta_spearman", 0.8, 0.7),
                ("beta_auroc", 0.9, 0.35),
                ("beta_topk", 0.5, 0.1),
                ("beta_entropy", 0.6, None),
            ]
        ]
    )
    stability = pd.DataFrame(
        [
            {**keys, "in_main_study": True, "attention": a, "mean_std": v}
            for a, v in [("beta", 0.05), ("alpha", 0.5)]
        ]
    )
    got = rating_scores(prediction, correctness, stability)
    assert set(got["variant_id"]) == {"d4"}
    assert got.set_index("metric")["raw_score"].to_dict() == {
        "test_mse": 0.1,
        "test_mse_cv": 0.2,
        "beta_spearman_margin": 0.7,  # correctness is rated as the margin over chance
        "beta_auroc_margin": 0.35,
        "beta_std": 0.05,
    }
    assert got["unrated_reason"].isna().all()  # beta_entropy 0.6: a peaked attention


# --- the interval macros of macros/suites.sql, rendered with plain Jinja and run in DuckDB


def _interval_macros():
    """The template module of macros/suites.sql (its interval macros use no dbt context)."""
    from pathlib import Path

    import jinja2

    text = (Path(__file__).parents[2] / "macros" / "suites.sql").read_text()
    return jinja2.Environment().from_string(text).module


def test_t_quantile_macro_equals_scipy():
    from scipy import stats

    macros = _interval_macros()
    got = duckdb.sql(
        f"select df, {macros.t_quantile_975('df')} as t from range(0, 2001) r(df) order by df"
    ).df()
    assert pd.isna(got["t"][0])  # no degrees of freedom: null
    got = got[got["df"] >= 1]
    np.testing.assert_allclose(got["t"], stats.t.ppf(0.975, got["df"]), rtol=2e-8)
    # the table holds the exact values (df <= 30); a normal quantile there would be 2-85 % off
    small = got[got["df"] <= 30]
    np.testing.assert_allclose(small["t"], stats.t.ppf(0.975, small["df"]), rtol=1e-14)


def test_wilson_macro_equals_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    macros = _interval_macros()
    got = duckdb.sql(
        f"select k, n, {macros.wilson_interval('k', 'n', 'low')} as low, "
        f"{macros.wilson_interval('k', 'n', 'high')} as high "
        "from range(0, 61) a(n), range(0, 61) b(k) where k <= n order by n, k"
    ).df()
    empty = got[got["n"] == 0]
    assert empty["low"].isna().all() and empty["high"].isna().all()
    got = got[got["n"] > 0]
    expected = np.array(
        [proportion_confint(k, n, method="wilson") for k, n in zip(got["k"], got["n"], strict=True)]
    )
    np.testing.assert_allclose(got[["low", "high"]].to_numpy(float), expected, atol=1e-12)
    assert (got.loc[got["k"] == 0, "low"] == 0).all()
    assert (got.loc[got["k"] == got["n"], "high"] == 1).all()


def test_mean_t_interval_macro_equals_scipy():
    from scipy import stats

    macros = _interval_macros()
    rng = np.random.default_rng(5)
    rows = [
        (group, float(value))
        for group, size in enumerate([1, 2, 3, 5, 12, 31, 45])
        for value in rng.normal(0.3, 1.0, size)
    ]
    frame = pd.DataFrame(rows, columns=["g", "x"])  # noqa: F841 - read by DuckDB
    got = (
        duckdb.sql(
            f"select g, count(*) as n, {macros.mean_t_interval('x', 'low')} as low, "
            f"{macros.mean_t_interval('x', 'high')} as high from frame group by g order by g"
        )
        .df()
        .set_index("g")
    )
    assert got.loc[0, ["low", "high"]].isna().all()  # one value: no interval
    for group, block in frame.groupby("g"):
        if len(block) < 2:
            continue
        x = block["x"].to_numpy()
        expected = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        np.testing.assert_allclose(got.loc[group, ["low", "high"]], expected, rtol=0, atol=1e-9)


def test_the_worst_value_of_a_suite_metric_gives_a_lone_system_its_scale():
    # Hand-worked on L = 3: accuracy (ideal 1, worst 0, higher is better): a lone 0.9 sits in
    # the first third of [1, 0] from the ideal -> level 1 -> mirrored to rating 3 (best);
    # 0.5 -> level ceil(1.5) = 2 -> rating 2; 0.1 -> level 3 -> rating 1. MAE (ideal 0, no
    # worst): a lone 0.4 has no scale -> null with the no-scale reason; 0 -> rating 1.
    specs = pd.DataFrame(
        {
            "suite": "reasoning",
            "metric": ["accuracy", "mae"],
            "higher_is_better": [True, False],
            "ideal": [1.0, 0.0],
            "worst": [0.0, np.nan],
        }
    )
    scores = pd.DataFrame(
        {
            "task": ["a", "b", "c", "d", "e"],
            "metric": ["accuracy", "accuracy", "accuracy", "mae", "mae"],
            "system_id": "only",
            "raw_score": [0.9, 0.5, 0.1, 0.4, 0.0],
        }
    )
    out = rate_scores(scores, "reasoning", ["task"], "system_id", 3, specs).set_index("task")
    assert out["rating"].tolist()[:3] == [3, 2, 1]
    assert (
        pd.isna(out.loc["d", "rating"]) and "no known worst value" in out.loc["d", "rating_reason"]
    )
    assert out.loc["e", "rating"] == 1
    # without the worst column every metric is unbounded: the lone accuracies lose their scale
    unscaled = rate_scores(
        scores, "reasoning", ["task"], "system_id", 3, specs.drop(columns="worst")
    )
    assert unscaled.set_index("task").loc[["a", "b", "c"], "rating"].isna().all()
    # the stability rule carries the worst value too
    from tsrate.suites.rating import metric_rule, suite_spec

    spec = suite_spec("reasoning", specs)
    assert metric_rule(spec, "accuracy") == (1.0, True, 0.0)
    assert metric_rule(spec, "mae") == (0.0, False, None)


def test_unbounded_suite_metrics_are_those_the_property_test_knows():
    # every metric of the seed with an ideal but no worst value is in the property test's
    # hand-written list (so a lone system on it must be unrated in the marts), and every
    # bounded one has its worst value at the other end of [0, 1]
    from tests.support.rating_properties import UNBOUNDED_METRICS

    specs = load_rating_specs()
    ideal = specs["ideal"].notna()
    unbounded = set(specs.loc[ideal & specs["worst"].isna(), "metric"])
    assert unbounded and unbounded <= UNBOUNDED_METRICS
    bounded = specs[specs["worst"].notna()]
    assert (bounded["worst"] == 1 - bounded["ideal"]).all()
    assert set(bounded["metric"]).isdisjoint(UNBOUNDED_METRICS)
