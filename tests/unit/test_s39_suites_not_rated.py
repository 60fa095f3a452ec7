"""An undefined score of a suite is listed, not rated, never silently dropped.

The core's ``ratings`` lists a system whose score is null or NaN with a null rating and a
``rating_reason`` "not rated: " + why, not among the systems rated together. The suites'
rating kit dropped such a score with no row and no reason. Below: small frames with one NaN
score each, the other systems' ratings worked by hand (3 levels; distinct raw scores sorted
best first and split into 3 groups with array_split, rating 1 = the lowest raw score)."""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.support.verdict_text import unmarked
from tsrate.suites import rating as kit
from tsrate.suites.interpretability import marts as interp_marts
from tsrate.suites.interpretability import report as interp_report
from tsrate.suites.reasoning import marts as rsn_marts
from tsrate.suites.reasoning import report as rsn_report
from tsrate.suites.understanding import marts as und_marts
from tsrate.suites.understanding import report as und_report
from tsrate.suites.verdict import summary_table_html, verdict_html

KEYS = ["suite_run_id", "metric", "task"]


def forecast_errors(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(suite_run_id="r", metric="mae", task="forecast_x", system_id=s, raw_score=v)
            for s, v in values.items()
        ]
    )


def test_a_nan_score_keeps_its_row_with_a_null_rating_and_the_reason():
    # a = 1, b = 2, c = NaN, d = 4 (lower is better): the three defined scores split into
    # three groups, a -> 1, b -> 2, d -> 3; c listed, not rated
    scores = forecast_errors({"a": 1.0, "b": 2.0, "c": np.nan, "d": 4.0})
    table = kit.rating_table(scores, "reasoning", KEYS, "system_id", 3).set_index("system_id")
    assert list(table.index) == ["a", "b", "d", "c"]  # the unrated after the rated
    assert [int(table.loc[s, "rating"]) for s in "abd"] == [1, 2, 3]
    assert [int(table.loc[s, "rank"]) for s in "abd"] == [1, 2, 3]
    c = table.loc["c"]
    assert pd.isna(c["raw_score"]) and pd.isna(c["rating"]) and pd.isna(c["rank"])
    assert c["rating_reason"] == (
        "not rated: the score is undefined (null or NaN), so it cannot be compared with the others"
    )
    assert not bool(c["higher_is_better"]) and int(c["rating_levels"]) == 3
    # the others are rated as if c were not there at all
    without = kit.rating_table(scores[scores["system_id"] != "c"], "reasoning", KEYS,
                               "system_id", 3).set_index("system_id")  # fmt: skip
    pd.testing.assert_frame_equal(table.loc[["a", "b", "d"]], without, check_dtype=False)


def test_an_infinite_score_and_a_given_reason_say_so():
    scores = forecast_errors({"a": 1.0, "b": np.inf, "c": None, "d": 4.0}).assign(
        undefined_reason=[None, None, "no usable forecast", None]
    )
    table = kit.rating_table(scores, "reasoning", KEYS, "system_id", 3).set_index("system_id")
    assert table.loc["b", "rating_reason"].startswith("not rated: the score is infinite (inf)")
    assert table.loc["c", "rating_reason"] == "not rated: no usable forecast"
    # a and d alone: two groups of three, the worst level left empty: 1 and 2
    assert int(table.loc["a", "rating"]) == 1 and int(table.loc["d", "rating"]) == 2


def test_a_group_with_every_score_undefined_is_listed():
    scores = forecast_errors({"a": np.nan, "b": np.nan})
    table = kit.rating_table(scores, "reasoning", KEYS, "system_id", 3)
    assert list(table["system_id"]) == ["a", "b"]
    assert (
        table["rating"].isna().all() and table["rating_reason"].str.startswith("not rated: ").all()
    )


def test_reasoning_lists_a_series_gap_without_a_usable_answer():
    accuracy = pd.DataFrame(
        dict(suite_run_id="r", system_id=["a", "b", "c"], task="qa_single",
             accuracy=[0.9, 0.5, 0.0], series_gap=[0.3, 0.1, np.nan])
    )  # fmt: skip
    errors = pd.DataFrame(columns=["suite_run_id", "system_id", "condition", "mae", "mse",
                                   "crps"])  # fmt: skip
    context = pd.DataFrame(columns=["suite_run_id", "system_id", "mae_gain"])
    scores = rsn_marts.rating_scores(accuracy, errors, context)
    table = rsn_marts.rating_table(scores, 3).set_index(["metric", "system_id"])
    gap = table.loc[("series_gap", "c")]
    assert pd.isna(gap["rating"]) and gap["rating_reason"] == (
        f"not rated: {rsn_marts.NO_GAP_EVIDENCE}"
    )
    # a and b rated together without c (higher is better: 0.3 the best level 3, 0.1 the
    # next, 2; the worst level left empty)
    assert int(table.loc[("series_gap", "a"), "rating"]) == 3
    assert int(table.loc[("series_gap", "b"), "rating"]) == 2
    assert int(table.loc[("accuracy", "c"), "rating"]) == 1  # a defined 0 is rated


def test_understanding_lists_a_score_undefined_in_every_format():
    def row(system, fmt, mape):
        return dict(suite_run_id="r", prompting="zero_shot", feature="trend",
                    system_id=system, task="retrieval", format=fmt, mape=mape, accuracy=0.5)  # fmt: skip

    scores = pd.DataFrame(
        [row("a", "csv", 10.0), row("a", "json", 30.0), row("b", "csv", np.nan),
         row("b", "json", 50.0), row("c", "csv", np.nan), row("c", "json", np.nan)]
    )  # fmt: skip
    table = und_marts.rating_table(scores, 3)
    mape = table[table["metric"] == "retrieval_mape"].set_index("system_id")
    # a: mean of 10 and 30 = 20; b: the defined format only, 50; c: none defined
    assert mape.loc["a", "raw_score"] == 20.0 and mape.loc["b", "raw_score"] == 50.0
    assert int(mape.loc["a", "rating"]) == 1 and int(mape.loc["b", "rating"]) == 2
    assert pd.isna(mape.loc["c", "raw_score"]) and pd.isna(mape.loc["c", "rating"])
    assert mape.loc["c", "rating_reason"] == f"not rated: {und_marts.UNDEFINED_EVERYWHERE}"


def test_interpretability_gives_the_correctness_marts_reason():
    keys = dict(suite_run_id="r", variant_id="v", in_main_study=True)
    prediction = pd.DataFrame(
        [dict(keys, model_id=m, test_mse_mean=v, test_mse_cv=0.1) for m, v in
         (("m1", 0.1), ("m2", 0.2))]
    )  # fmt: skip
    correctness = pd.DataFrame(
        [dict(keys, model_id=m, measure=measure, mean_margin=margin, mean_value=0.5,
              undefined_reason=reason)
         for m, margin, reason in (("m1", 0.4, None), ("m2", np.nan, "one candidate"))
         for measure in ("beta_spearman", "beta_auroc")]
        + [dict(keys, model_id=m, measure="beta_entropy", mean_margin=np.nan,
                mean_value=0.5, undefined_reason=None) for m in ("m1", "m2")]
    )  # fmt: skip
    stability = pd.DataFrame(
        [dict(keys, model_id=m, attention="beta", mean_std=0.05) for m in ("m1", "m2")]
    )
    scores = interp_marts.rating_scores(prediction, correctness, stability)
    table = interp_marts.rating_table(scores, 3).set_index(["metric", "model_id"])
    undefined = table.loc[("beta_spearman_margin", "m2")]
    assert pd.isna(undefined["rating"]) and undefined["rating_reason"] == (
        "not rated: one candidate"
    )


TASKS = pd.DataFrame(columns=["suite_run_id", "task", "system_id", "accuracy"])


def judged_ratings() -> pd.DataFrame:
    """Reasoning ratings: a, b, d rated on mae; c's mae undefined."""
    scores = forecast_errors({"a": 1.0, "b": 2.0, "c": np.nan, "d": 4.0})
    return kit.rating_table(scores, "reasoning", KEYS, "system_id", 3)


def test_the_verdict_and_summary_leave_the_unrated_out_and_the_reports_list_it():
    ratings = judged_ratings()
    verdict = verdict_html(ratings, "the forecasts", "x")
    assert "Of 3 systems" in unmarked(verdict) and "(3 rated scores)" in unmarked(verdict)
    assert "<code>c</code>" not in summary_table_html(ratings)
    page = rsn_report.render_report(
        {"tasks": TASKS, "forecasts": pd.DataFrame(), "context": pd.DataFrame(),
         "ratings": ratings, "stability": pd.DataFrame()}
    )  # fmt: skip
    listed = re.search(r'<section id="not-rated">.*?</section>', page, re.S).group(0)
    assert 'data-derived="not_rated" data-value="1.0"' in listed
    assert "<code>c</code>" in listed and "not rated: the score is undefined" in listed
    every = page.split("Every rating")[1]
    assert "not rated: the score is undefined" in every
    # without an undefined score there is no such section
    rated = ratings[ratings["system_id"] != "c"]
    page = rsn_report.render_report(
        {"tasks": TASKS, "forecasts": pd.DataFrame(), "context": pd.DataFrame(),
         "ratings": rated, "stability": pd.DataFrame()}
    )  # fmt: skip
    assert 'id="not-rated"' not in page


def test_the_interpretability_report_lists_an_undefined_score():
    ratings = judged_ratings().rename(columns={"system_id": "model_id", "task": "variant_id"})
    empty = pd.DataFrame()
    page = interp_report.render_report(
        {"cells": empty, "scores": pd.DataFrame(columns=["dataset_id", "variant_id"]),
         "correctness": pd.DataFrame(
            columns=["variant_id", "model_id", "measure", "mean_value", "std_value",
                     "mean_chance", "mean_margin"]),
         "ratings": ratings}
    )  # fmt: skip
    listed = re.search(r'<section id="not-rated">.*?</section>', page, re.S).group(0)
    assert "<code>c</code>" in listed and "not rated: the score is undefined" in listed


def test_the_understanding_report_lists_an_undefined_score(tmp_path):
    warehouse = tmp_path / "und.duckdb"
    ratings = und_marts.rating_table(
        pd.DataFrame(
            [dict(suite_run_id="r", prompting="zero_shot", feature="trend", system_id=s,
                  task="retrieval", format="csv", mape=v, accuracy=0.5)
             for s, v in (("a", 10.0), ("b", 20.0), ("c", np.nan))]
        ),
        3,
    )  # fmt: skip
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.register("ratings_frame", ratings.astype({"rating": "float", "rank": "float"}))
        con.execute("create table marts.und_ratings as select * from ratings_frame")
        con.execute(
            "create table marts.und_rating_stability as select suite_run_id, prompting, "
            "metric, feature, system_id, raw_score, rating, rating_levels, rating_reason, "
            "cast(null as double) as share_at_rating from ratings_frame"
        )
    page = und_report.write_report(warehouse, tmp_path / "r.html").read_text(encoding="utf-8")
    listed = re.search(r'<section id="not-rated">.*?</section>', page, re.S).group(0)
    assert "<code>c</code>" in listed
    assert und_marts.UNDEFINED_EVERYWHERE in listed


def test_an_undefined_score_of_a_metric_without_a_spec_is_the_same_error():
    scores = forecast_errors({"a": np.nan}).assign(metric="unknown")
    with pytest.raises(kit.RatingSpecError, match="no rating direction for metrics"):
        kit.rating_table(scores, "reasoning", KEYS, "system_id", 3)
