"""Prompts, strict parsing, scoring, the reference answerers and the score tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.suites import get_suite
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst, series_in
from tsrate.suites.understanding.cli import prompts_text
from tsrate.suites.understanding.formats import FORMATS
from tsrate.suites.understanding.marts import rating_table, score_table, task_scores
from tsrate.suites.understanding.scoring import f1_macro, parse_answer, score_answer
from tsrate.suites.understanding.suite import SMALL, generate_all, plan_prompts, resolve_config
from tsrate.suites.understanding.tasks import TASKS, build_prompts, templates

CLASSES = ("fixed", "varying_amplitude", "shifting", "multiple")


@pytest.mark.parametrize(
    ("reply", "answer"),
    [("yes", "yes"), ("No.", "no"), ("  YES, there is a clear trend", "yes"), ("**no**", "no")],
)
def test_detection_reads_a_leading_yes_or_no(reply, answer):
    assert parse_answer("detection", reply, ("yes", "no")).answer == answer


@pytest.mark.parametrize("reply", ["", "maybe", "I think yes", "The answer is no"])
def test_detection_never_guesses(reply):
    parsed = parse_answer("detection", reply, ("yes", "no"))
    assert not parsed.ok and parsed.error and parsed.answer is None


def test_classification_needs_exactly_one_option():
    assert (
        parse_answer("classification", "varying amplitude", CLASSES).answer == "varying_amplitude"
    )
    assert parse_answer("classification", "Answer: shifting.", CLASSES).answer == "shifting"
    assert (
        parse_answer("classification", "It is MULTIPLE seasonality", CLASSES).answer == "multiple"
    )
    several = parse_answer("classification", "fixed or shifting", CLASSES)
    assert not several.ok and "several options" in several.error
    assert parse_answer("classification", "sideways", CLASSES).error == "names none of the options"
    # declining every option is an abstention (never a class)
    assert (
        parse_answer("classification", "none of these", CLASSES).error
        == "abstains: declines every option"
    )
    stationary = ("stationary", "non_stationary")
    assert parse_answer("classification", "non-stationary", stationary).answer == "non_stationary"


def test_numbers_and_dates_are_read_strictly():
    assert parse_answer("retrieval", "103.25").value == 103.25
    assert parse_answer("retrieval", "The value on 2020-01-03 is -4.5.").value == -4.5
    assert parse_answer("retrieval", "1,234.5").value == 1234.5
    assert "several numbers" in parse_answer("retrieval", "between 3 and 4").error
    assert parse_answer("retrieval", "no idea").error == "no number in the reply"
    parsed = parse_answer("arithmetic_max", "The maximum is 12.5 on 2021-03-04.")
    assert (parsed.value, parsed.date) == (12.5, "2021-03-04")
    assert parse_answer("arithmetic_min", "12.5").error == "no date in the reply"
    assert (
        parse_answer("arithmetic_min", "12.5 on 2021-02-30").error
        == "2021-02-30 is not a calendar date"
    )


@pytest.mark.parametrize(
    ("reply", "letter"),
    [("B", "B"), ("(c)", None), ("Answer: d", "D"), ("A. This time series", "A"), ("(C)", "C")],
)
def test_matching_letters(reply, letter):
    parsed = parse_answer("matching_intra", reply, ("A", "B", "C", "D"))
    assert parsed.answer == letter and parsed.ok == (letter is not None)
    assert not parse_answer("matching_cross", "A time series with a trend").ok


def test_scoring_uses_the_printed_precision_and_counts_unparsed_wrong():
    ok = parse_answer("retrieval", "103.25")
    assert score_answer("retrieval", {"value": 103.25}, ok, 2)["correct"]
    assert not score_answer("retrieval", {"value": 103.24}, ok, 2)["correct"]
    assert score_answer("retrieval", {"value": 100.0}, parse_answer("retrieval", "110"), 2)[
        "abs_pct_error"
    ] == pytest.approx(10)
    arithmetic = score_answer(
        "arithmetic_min",
        {"value": 1.0, "dates": ["2020-01-02"]},
        parse_answer("arithmetic_min", "1 on 2020-01-03"),
        2,
    )
    assert arithmetic["correct"] and arithmetic["date_correct"] is False
    bad = score_answer("detection", {"answer": "yes"}, parse_answer("detection", "hmm"), 2)
    assert bad == {"correct": False, "date_correct": None, "abs_pct_error": None}


def test_macro_f1_matches_sklearn_and_counts_unparsed_as_misses():
    from sklearn.metrics import f1_score

    truth = ["yes", "yes", "no", "no", "yes", "no"]
    predicted = ["yes", None, "no", "yes", "yes", "no"]
    expected = f1_score(
        truth,
        ["unparsed" if p is None else p for p in predicted],
        labels=["yes", "no"],
        average="macro",
    )
    assert f1_macro(truth, predicted, ["yes", "no"]) == pytest.approx(expected)
    assert (
        f1_macro(["a"], ["a"], ["a", "b"]) == 1.0
    )  # a class absent from truth and predictions is left out


def test_templates_are_versioned_and_shown():
    shown = prompts_text()
    for template_id, template in templates().items():
        assert template.version >= 1 and f"=== {template_id} (version {template.version}" in shown
    assert "yes or no" in prompts_text("detection")
    with pytest.raises(TsrateError, match="unknown task"):
        prompts_text("forecasting")
    assert get_suite("understanding").dbt_tag == "understanding"


def test_prompts_ask_the_same_question_in_every_format():
    pool = {d: g.generate_split(d, "test", 5, 3) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}
    sample = pool["seasonality"][0]
    prompts = build_prompts(sample, tuple(FORMATS), 2, pool)
    by_task = {}
    for p in prompts:
        by_task.setdefault(p.task, set()).add(json.dumps(p.expected, sort_keys=True))
        assert p.options or p.task.startswith(("retrieval", "arithmetic"))
    assert all(len(v) == 1 for v in by_task.values())  # one expected answer per task
    assert len({p.prompt_key for p in prompts}) == len(prompts)
    assert {p.format for p in prompts} == set(FORMATS)
    again = build_prompts(sample, tuple(FORMATS), 2, pool)
    assert [p.prompt_key for p in again] == [p.prompt_key for p in prompts]
    pair = build_prompts(pool["correlation"][0], ("csv",), 2, pool)
    assert {p.task for p in pair} <= {
        "detection",
        "classification",
        "matching_intra",
        "matching_cross",
    }


def test_analyst_reads_the_series_back_from_every_format():
    pool = {d: g.generate_split(d, "test", 4, 5) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}
    sample = pool["trend"][1]
    analyst = StatisticalAnalyst()
    for p in build_prompts(sample, tuple(FORMATS), 2, pool, tasks=("retrieval", "arithmetic_max")):
        dates, columns = series_in(p.text, p.format)
        assert dates == sample.dates
        np.testing.assert_allclose(columns["Value"], sample.values, atol=0.0051)
        scored = score_answer(
            p.task, p.expected, parse_answer(p.task, analyst.answer(p), p.options), 2
        )
        assert scored["correct"] and scored["date_correct"] in (True, None)


def test_random_answerer_is_seeded_and_admissible():
    pool = {d: g.generate_split(d, "test", 4, 5) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}
    prompts = [p for s in pool["anomalies"] for p in build_prompts(s, ("json",), 2, pool)]
    first, second = RandomAnswerer(3).answer_all(prompts), RandomAnswerer(3).answer_all(prompts)
    assert first == second != RandomAnswerer(4).answer_all(prompts)
    assert all(parse_answer(p.task, a, p.options).ok for p, a in zip(prompts, first, strict=True))


def test_configurations_are_checked():
    assert SMALL.test < resolve_config("paper").test == 200
    with pytest.raises(TsrateError, match="unknown formats"):
        resolve_config("small", {"formats": ["xml"]})
    with pytest.raises(TsrateError, match="unknown configuration fields"):
        resolve_config("small", {"epochs": 3})
    config = resolve_config(
        "small",
        {
            "train": 0,
            "validation": 0,
            "test": 4,
            "datasets": ["trend", "seasonality", "anomalies", "volatility", "outlier"],
            "formats": ["csv"],
        },
    )
    generated = generate_all(config)
    assert (
        len(generated["outlier"]["test"]) == 8 * config.position_per_cell
        and len(generated["trend"]["train"]) == 0
    )
    prompts = plan_prompts(config, generated)
    assert {p.task for p in prompts} == set(TASKS)


def test_score_tables_and_ratings():
    answers = pd.DataFrame(
        [
            # system a: right twice; system b: one wrong, one unparseable
            (
                "r",
                "k1",
                "a",
                "trend",
                "detection",
                "trend",
                "csv",
                2,
                '{"answer": "yes"}',
                None,
                50,
                True,
                None,
                "yes",
                None,
                None,
            ),
            (
                "r",
                "k2",
                "a",
                "trend",
                "detection",
                "trend",
                "csv",
                2,
                '{"answer": "no"}',
                None,
                50,
                True,
                None,
                "no",
                None,
                None,
            ),
            (
                "r",
                "k1",
                "b",
                "trend",
                "detection",
                "trend",
                "csv",
                2,
                '{"answer": "yes"}',
                None,
                50,
                True,
                None,
                "no",
                None,
                None,
            ),
            (
                "r",
                "k2",
                "b",
                "trend",
                "detection",
                "trend",
                "csv",
                2,
                '{"answer": "no"}',
                None,
                50,
                False,
                "the reply does not start with yes or no",
                None,
                None,
                None,
            ),
            (
                "r",
                "k3",
                "a",
                "trend",
                "retrieval",
                "trend",
                "csv",
                2,
                '{"value": 100.0, "date": "2020-01-01"}',
                1,
                50,
                True,
                None,
                None,
                110.0,
                None,
            ),
            (
                "r",
                "k3",
                "b",
                "trend",
                "retrieval",
                "trend",
                "csv",
                2,
                '{"value": 100.0, "date": "2020-01-01"}',
                1,
                50,
                True,
                None,
                None,
                100.0,
                None,
            ),
        ],
        columns=[
            "suite_run_id",
            "prompt_key",
            "system_id",
            "dataset",
            "task",
            "feature",
            "format",
            "decimals",
            "expected",
            "quadrant",
            "series_length",
            "parse_ok",
            "parse_error",
            "answer",
            "answer_value",
            "answer_date",
        ],
    )
    scored = score_table(answers)
    assert scored["correct"].tolist() == [True, True, False, False, False, True]
    options = pd.DataFrame(
        {"prompt_key": ["k1", "k2", "k3"], "options": [["yes", "no"], ["yes", "no"], []]}
    )
    scores = task_scores(scored, options).set_index(["system_id", "task"])
    assert scores.loc[("a", "detection"), "f1"] == 1.0
    assert scores.loc[("b", "detection"), ["n_unparsed", "accuracy", "f1"]].tolist() == [
        1,
        0.0,
        0.0,
    ]
    assert scores.loc[("a", "retrieval"), "mape"] == pytest.approx(10.0)
    ratings = rating_table(scores.reset_index(), 3).set_index(["metric", "system_id"])
    assert (
        ratings.loc[("detection_f1", "a"), "rating"] > ratings.loc[("detection_f1", "b"), "rating"]
    )
    assert bool(ratings.loc[("retrieval_mape", "a"), "higher_is_better"]) is False
    assert ratings.loc[("retrieval_mape", "b"), "rating"] == 1  # lowest MAPE
    empty = rating_table(scores.reset_index().iloc[0:0], 3)
    assert empty.empty and list(empty.columns)[:2] == ["suite_run_id", "metric"]
