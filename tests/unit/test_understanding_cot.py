"""Chain-of-thought prompting of the understanding suite: the template, the strict parser of
CoT replies (last ``Answer:`` line), the offline references' CoT replies, the prompting
grain of the score tables and ratings, the CLI option and old warehouses."""

from __future__ import annotations

import argparse
import hashlib
import json

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.cli import add_run_arguments, overrides_from_args, prompts_text
from tsrate.suites.understanding.formats import FORMATS
from tsrate.suites.understanding.marts import (
    position_bias_table,
    rating_table,
    score_table,
    task_scores,
)
from tsrate.suites.understanding.scoring import parse_answer, parse_cot_answer, parse_reply
from tsrate.suites.understanding.suite import resolve_config
from tsrate.suites.understanding.tasks import TASKS, build_prompts, load_template

COT_LINE = 'Then end your reply with one final line that starts with "Answer:"'


@pytest.fixture(scope="module")
def pool():
    return {d: g.generate_split(d, "test", 5, 3) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}


# ---------------------------------------------------------------------------------------
# the template and the prompt key
# ---------------------------------------------------------------------------------------


def test_cot_prompt_is_the_zero_shot_prompt_plus_the_versioned_instruction(pool):
    sample = pool["trend"][0]
    both = build_prompts(sample, ("csv",), 2, pool, promptings=("zero_shot", "cot"))
    zero = {p.task: p for p in both if p.prompting == "zero_shot"}
    cot = {p.task: p for p in both if p.prompting == "cot"}
    assert set(zero) == set(cot) and len(both) == 2 * len(zero)
    instruction = load_template("cot")
    assert instruction.version == 1 and COT_LINE in instruction.text
    for task, p in cot.items():
        z = zero[task]
        assert p.text == z.text.rstrip("\n") + "\n" + instruction.text
        assert COT_LINE not in z.text
        assert (p.expected, p.options, p.template_id) == (z.expected, z.options, z.template_id)
        assert p.prompt_key != z.prompt_key
    # the zero-shot key is the key of the suite before prompting styles existed (computed
    # here by hand), so an old warehouse's zero-shot answers are reused
    z = zero["detection"]
    blob = json.dumps([z.text, z.task, z.feature, z.expected, z.options], sort_keys=True)
    assert z.prompt_key == hashlib.sha256(blob.encode()).hexdigest()[:20]
    # the default is zero-shot only
    assert {p.prompting for p in build_prompts(sample, ("csv",), 2, pool)} == {"zero_shot"}


def test_prompts_command_shows_the_cot_template():
    shown = prompts_text()
    assert "=== cot (version 1; appended to every template above" in shown
    assert COT_LINE in shown
    assert COT_LINE in prompts_text("retrieval")  # one task's template and the instruction


# ---------------------------------------------------------------------------------------
# parsing CoT replies (hand-worked)
# ---------------------------------------------------------------------------------------


def test_the_last_answer_line_wins():
    reply = "Answer: yes\nOn second thought the slope is tiny.\nAnswer: no"
    assert parse_cot_answer("detection", reply, ("yes", "no")).answer == "no"
    reply = "The values rise from 101.5 to 140.2, so 12 of 14 ...\n  answer:   137.25"
    parsed = parse_cot_answer("retrieval", reply)
    assert parsed.ok and parsed.value == 137.25  # the reasoning's numbers are not read
    reply = "Minimum search: 99.1 on 2020-01-02 looked low but 98.7 is lower.\nAnswer: 98.7 on 2020-01-05"
    parsed = parse_cot_answer("arithmetic_min", reply)
    assert (parsed.value, parsed.date) == (98.7, "2020-01-05")
    assert (
        parse_cot_answer("matching_cross", "A fits the trend, B the season.\nAnswer: B").answer
        == "B"
    )
    reply = "Peaks drift apart.\nAnswer: shifting"
    assert parse_cot_answer("classification", reply, ("fixed", "shifting")).answer == "shifting"


@pytest.mark.parametrize(
    ("task", "reply", "reason"),
    [
        ("detection", "The series rises steadily, so yes.", "no 'Answer:' line"),
        ("detection", "", "empty reply"),
        ("detection", "Thinking...\nThe answer: yes", "no 'Answer:' line"),  # not at line start
        (
            "detection",
            "Answer: probably yes",
            "last 'Answer:' line: the reply does not start with yes or no",
        ),
        ("retrieval", "Answer: 12.5 or 12.6", "last 'Answer:' line: several numbers"),
        ("retrieval", "Answer: 12.5\nAnswer:", "last 'Answer:' line: empty reply"),
        ("arithmetic_max", "Answer: 130.2", "last 'Answer:' line: no date in the reply"),
        (
            "matching_intra",
            "Answer: the second one",
            "last 'Answer:' line: the reply is not a single letter",
        ),
    ],
)
def test_a_cot_reply_without_a_strict_answer_line_is_unparseable(task, reply, reason):
    parsed = parse_cot_answer(task, reply, ("yes", "no"))
    assert not parsed.ok and parsed.answer is None and parsed.value is None
    assert reason in parsed.error


def test_parse_reply_dispatches_on_the_prompting():
    assert parse_reply("detection", "Answer: yes", ("yes", "no"), "cot").answer == "yes"
    # a zero-shot reply must itself be the answer: "Answer: yes" does not start with yes/no
    assert not parse_reply("detection", "Answer: yes", ("yes", "no"), "zero_shot").ok
    assert parse_reply("detection", "yes", ("yes", "no")).answer == "yes"
    with pytest.raises(TsrateError, match="unknown prompting"):
        parse_reply("detection", "yes", ("yes", "no"), "few_shot")


# ---------------------------------------------------------------------------------------
# offline references answer CoT prompts
# ---------------------------------------------------------------------------------------


def test_references_reply_in_cot_form_with_the_zero_shot_answer(pool):
    prompts = []
    for dataset in ("trend", "anomalies", "statistical_properties", "correlation"):
        prompts += build_prompts(
            pool[dataset][1], tuple(FORMATS), 2, pool, promptings=("zero_shot", "cot")
        )
    position = g.generate_split("outlier", "test", 2, 3, position_length=40)
    prompts += build_prompts(position[0], ("csv", "json"), 2, pool, TASKS, ("zero_shot", "cot"))
    zero = {
        (p.series_key, p.task, p.feature, p.format): p
        for p in prompts
        if p.prompting == "zero_shot"
    }
    analyst = StatisticalAnalyst()
    checked = 0
    for p in prompts:
        if p.prompting != "cot":
            continue
        reply = analyst.answer(p)
        lines = reply.splitlines()
        assert len(lines) == 2 and lines[1].startswith("Answer: ")
        z = zero[(p.series_key, p.task, p.feature, p.format)]
        # the CoT instruction does not change what the analyst reads: the same answer
        assert lines[1] == "Answer: " + analyst.answer(z)
        assert parse_reply(p.task, reply, p.options, "cot") == parse_answer(
            p.task, analyst.answer(z), p.options
        )
        random = RandomAnswerer(0).answer(p)
        assert random.splitlines()[-1].startswith("Answer: ")
        assert parse_reply(p.task, random, p.options, "cot").ok
        checked += 1
    assert {t for (_, t, _, _) in zero} >= {"detection", "classification", "retrieval", "search"}
    assert checked == len(zero)


# ---------------------------------------------------------------------------------------
# score tables and ratings never mix prompting styles
# ---------------------------------------------------------------------------------------


def _answers(rows):
    columns = [
        "suite_run_id", "prompt_key", "prompting", "series_key", "system_id", "dataset", "task",
        "feature", "format", "decimals", "expected", "quadrant", "series_length", "parse_ok",
        "parse_error", "answer", "answer_value", "answer_date",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def test_scores_and_ratings_are_split_by_prompting():
    rows = []
    # two detection prompts, each asked zero-shot and CoT; system a right zero-shot and wrong
    # (unparseable) with CoT; system b wrong zero-shot and right with CoT
    for prompting in ("zero_shot", "cot"):
        for i, truth in enumerate(("yes", "no")):
            key = f"{prompting}-{i}"
            expected = json.dumps({"answer": truth})
            wrong = "no" if truth == "yes" else "yes"
            a_ok, a_answer = (True, truth) if prompting == "zero_shot" else (False, None)
            b_answer = wrong if prompting == "zero_shot" else truth
            base = ["run", key, prompting, f"s{i}"]
            tail = ["trend", "detection", "trend", "csv", 2, expected, None, 50]
            rows.append(
                [
                    *base,
                    "a",
                    *tail,
                    a_ok,
                    None if a_ok else "no 'Answer:' line",
                    a_answer,
                    None,
                    None,
                ]
            )
            rows.append([*base, "b", *tail, True, None, b_answer, None, None])
    scored = score_table(_answers(rows))
    assert set(scored["prompting"]) == {"zero_shot", "cot"}
    options = pd.DataFrame(
        {"prompt_key": scored["prompt_key"].unique(), "options": [["yes", "no"]] * 4}
    )
    scores = task_scores(scored, options).set_index(["prompting", "system_id"])
    assert len(scores) == 4
    assert scores.loc[("zero_shot", "a"), "accuracy"] == 1.0
    assert (
        scores.loc[("cot", "a"), "accuracy"] == 0.0 and scores.loc[("cot", "a"), "n_unparsed"] == 2
    )
    assert scores.loc[("zero_shot", "b"), "accuracy"] == 0.0
    assert scores.loc[("cot", "b"), "accuracy"] == 1.0 and scores.loc[("cot", "b"), "f1"] == 1.0
    ratings = rating_table(scores.reset_index(), 3)
    rated = ratings.set_index(["prompting", "metric", "system_id"])["rating"]
    # within each prompting the better system is rated higher; the styles are never pooled
    assert rated[("zero_shot", "detection_f1", "a")] > rated[("zero_shot", "detection_f1", "b")]
    assert rated[("cot", "detection_f1", "b")] > rated[("cot", "detection_f1", "a")]
    assert set(ratings.groupby(["prompting", "metric"]).size()) == {2}


def test_position_bias_keeps_promptings_apart():
    rows = []
    for prompting in ("zero_shot", "cot"):
        for q in (1, 2, 3, 4):
            expected = json.dumps({"value": 10.0, "date": "2020-01-01"})
            row = [
                "run",
                f"{prompting}{q}",
                prompting,
                f"s{q}",
                "a",
                "outlier",
                "retrieval",
                "outlier",
            ]
            rows.append([*row, "csv", 2, expected, q, 40, True, None, None, 10.0, None])
    bias = position_bias_table(score_table(_answers(rows)))
    assert len(bias) == 8 and set(bias.groupby("prompting")["quadrant"].count()) == {4}


# ---------------------------------------------------------------------------------------
# the CLI option, the configuration and old warehouses
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "promptings"),
    [
        ([], None),
        (["--prompting", "cot"], ["cot"]),
        (["--prompting", "both"], ["zero_shot", "cot"]),
    ],
)
def test_prompting_option(flag, promptings):
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    overrides = overrides_from_args(parser.parse_args(flag))
    assert overrides.get("promptings") == promptings
    assert resolve_config("small", overrides).promptings == tuple(promptings or ["zero_shot"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--prompting", "few_shot"])


def test_configuration_checks_promptings():
    with pytest.raises(TsrateError, match="unknown promptings"):
        resolve_config("small", {"promptings": ["few_shot"]})
    with pytest.raises(TsrateError, match="no prompting"):
        resolve_config("small", {"promptings": []})


def test_an_old_warehouse_gains_the_prompting_column(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema raw")
    con.execute(  # raw.und_prompts as created before prompting styles existed
        "create table raw.und_prompts (prompt_key varchar primary key, series_key varchar not null, "
        "dataset varchar not null, task varchar not null, feature varchar not null, "
        "format varchar not null, decimals integer not null, template_id varchar not null, "
        "template_version integer not null, prompt_text varchar not null, expected json not null, "
        "options varchar[] not null, quadrant integer, series_length integer not null, "
        "created_at timestamp not null)"
    )
    con.execute(
        "insert into raw.und_prompts values ('k', 's', 'trend', 'detection', 'trend', 'csv', 2, "
        "'detection', 1, 'text', '{\"answer\": \"yes\"}', ['yes', 'no'], null, 50, now())"
    )
    con.execute(  # raw.und_responses as created before the CoT parser existed
        "create table raw.und_responses (response_key varchar primary key, prompt_key varchar "
        "not null, system_id varchar not null, fingerprint varchar not null, raw_text varchar, "
        "parse_ok boolean not null, parse_error varchar, answer varchar, answer_value double, "
        "answer_date date, answered_at timestamp not null)"
    )
    con.execute(
        "insert into raw.und_responses values ('r', 'k', 'a', 'f', 'yes', true, null, 'yes', "
        "null, null, now())"
    )
    con.close()
    with connect(path) as con:
        create_raw_tables(con)  # what every writing edge (a suite run's start) does first
        rows = con.execute("select prompt_key, prompting from raw.und_prompts").fetchall()
        responses = con.execute(
            "select response_key, parsed_by, parser, parser_text from raw.und_responses"
        ).fetchall()
    assert rows == [("k", "zero_shot")]
    assert responses == [("r", None, None, None)]


# ---------------------------------------------------------------------------------------
# the parser model (a tiny local checkpoint that always extracts "yes")
# ---------------------------------------------------------------------------------------

#: bigram successors: after the chat template's "assistant:" the model writes "yes" and stops
SAYS_YES = {":": "y", "y": "e", "e": "s", "s": "<eos>"}


@pytest.fixture(scope="module")
def yes_parser_folder(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import save_bigram_model

    return save_bigram_model(tmp_path_factory.mktemp("cot-parser"), SAYS_YES)


def test_the_parser_model_is_asked_only_when_no_answer_line_parses(
    pool, yes_parser_folder, monkeypatch
):
    from tsrate.suites.understanding.cot_parser import CotParser, extraction_chat, question_of

    monkeypatch.setenv("TSRATE_TINY_COT_PARSER_MODEL_PATH", str(yes_parser_folder))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "6")
    prompts = build_prompts(pool["trend"][0], ("csv",), 2, pool, promptings=("cot",))
    by_task = {p.task: p for p in prompts}
    detection, retrieval = by_task["detection"], by_task["retrieval"]
    # the parser sees the question and the reply, never the series nor the CoT instruction
    chat = extraction_chat(detection, "It rises.")[0]["content"]
    assert "```" not in chat and COT_LINE not in chat and "It rises." in chat
    assert question_of(detection).startswith("Question: Is there a clear upward")
    assert question_of(detection).endswith("Answer with a single word: yes or no.")
    batch = [detection, retrieval, detection, detection]
    replies = [
        "The slope is clearly positive, so there is a trend.",  # no Answer line: asked -> yes
        "The value is around twelve.",  # asked -> "yes" is no number: unparseable
        "The series is flat.\nAnswer: no",  # the strict rule reads it: not asked
        "",  # empty: nothing to extract, not asked
    ]
    first = [
        parse_reply(p.task, r, p.options, p.prompting) for p, r in zip(batch, replies, strict=True)
    ]
    assert [a.ok for a in first] == [False, False, True, False]
    parser = CotParser("hf_local:tiny_cot_parser")
    assert parser.availability().available, parser.availability().reason
    parsed, parsed_by, texts = parser.rescue(batch, replies, first)
    assert parsed_by == ["llm", None, "regex", None]
    assert texts == ["yes", "yes", None, None]
    assert parsed[0].ok and parsed[0].answer == "yes"
    assert not parsed[1].ok
    assert "no 'Answer:' line" in parsed[1].error
    assert "the parser model's extraction: no number in the reply" in parsed[1].error
    assert parsed[2].answer == "no" and parsed[3].error == "empty reply"
    assert parser.label().startswith("tiny_cot_parser@")


def test_prompts_command_shows_the_parser_template():
    shown = prompts_text()
    assert "=== cot_parser (version 2; asked of the --cot-parser model" in shown
    assert "Do not answer the question yourself." in shown
