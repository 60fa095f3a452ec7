"""The understanding suite's reply parser: "None of these" is an abstention, never the class
``none`` that the volatility task offers; a reply naming that class still chooses it."""

from __future__ import annotations

import pandas as pd
import pytest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.marts import score_table, task_scores
from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.tasks import CLASSIFICATIONS, build_prompts

VOLATILITY = tuple(CLASSIFICATIONS["volatility"].classes)
TREND = tuple(CLASSIFICATIONS["trend"].classes)


def test_only_volatility_offers_a_class_literally_named_none():
    # the task where "None of these" used to read as a class: the others never name it
    offering = sorted(d for d, c in CLASSIFICATIONS.items() if "none" in c.classes)
    assert offering == ["volatility"]


@pytest.mark.parametrize(
    "reply",
    [
        "None of these",
        "None of these.",
        "none of the above",
        "Answer: None of the above",
        "None of the options fits",
        "**None of these options**",
    ],
)
def test_declining_every_option_is_an_abstention_not_the_class_none(reply):
    parsed = parse_answer("classification", reply, VOLATILITY)
    assert not parsed.ok
    assert parsed.abstained
    assert parsed.answer is None
    assert parsed.error == "abstains: declines every option"


@pytest.mark.parametrize("reply", ["none", "None.", "Answer: none", "none: no volatility"])
def test_naming_the_class_none_still_chooses_it(reply):
    parsed = parse_answer("classification", reply, VOLATILITY)
    assert parsed.ok and parsed.answer == "none" and not parsed.abstained


def test_an_abstention_where_no_class_is_named_none_is_an_abstention_too():
    parsed = parse_answer("classification", "None of these", TREND)
    assert not parsed.ok and parsed.abstained
    # an ordinary unparseable reply is not an abstention
    other = parse_answer("classification", "sideways", TREND)
    assert not other.ok and not other.abstained and other.error == "names none of the options"


def test_a_cot_answer_line_that_abstains_keeps_the_flag():
    reply = "The changes look alike throughout.\nAnswer: None of the above"
    parsed = parse_reply("classification", reply, VOLATILITY, "cot")
    assert not parsed.ok and parsed.abstained
    assert parsed.error == "the last 'Answer:' line: abstains: declines every option"
    chosen = parse_reply("classification", "Smooth.\nAnswer: none", VOLATILITY, "cot")
    assert chosen.ok and chosen.answer == "none"


def _answers(replies: list[str], truths: list[str]) -> pd.DataFrame:
    rows = []
    for i, (reply, truth) in enumerate(zip(replies, truths, strict=True)):
        parsed = parse_answer("classification", reply, VOLATILITY)
        rows.append(
            {
                "suite_run_id": "r1",
                "prompt_key": f"p{i}",
                "series_key": f"s{i}",
                "prompting": "zero_shot",
                "system_id": "s1",
                "dataset": "volatility",
                "task": "classification",
                "feature": "volatility",
                "format": "csv",
                "quadrant": None,
                "series_length": 10,
                "answered": True,
                "parse_ok": parsed.ok,
                "parsed_by": "regex" if parsed.ok else None,
                "answer": parsed.answer,
                "answer_value": None,
                "answer_date": None,
                "parse_error": parsed.error,
                "expected": {"answer": truth},
                "decimals": 2,
            }
        )
    return pd.DataFrame(rows)


def test_an_abstention_is_no_false_positive_for_the_class_none():
    # truths: constant, none, none; replies: abstain, none, none
    # as the class 'none' the abstention was a false positive: F1(none) = 2*2/(2*2+1) = 0.8,
    # F1(constant) = 0 -> macro 0.4. As an abstention: F1(none) = 1, F1(constant) = 0 -> 0.5
    scored = score_table(_answers(["None of these", "none", "none"], ["constant", "none", "none"]))
    assert scored["predicted"].isna().tolist() == [True, False, False]
    options = pd.DataFrame({"prompt_key": ["p0", "p1", "p2"], "options": [VOLATILITY] * 3})
    row = task_scores(scored, options).iloc[0]
    assert row["f1"] == pytest.approx(0.5)
    assert row["accuracy"] == pytest.approx(2 / 3)
    assert int(row["n_unparsed"]) == 1 and row["coverage"] == pytest.approx(2 / 3)


@pytest.fixture(scope="module")
def parser_folder(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import save_bigram_model

    # after the chat template's "assistant:" the model writes "yes" and stops
    says = {":": "y", "y": "e", "e": "s", "s": "<eos>"}
    return save_bigram_model(tmp_path_factory.mktemp("cot-parser-abstain"), says)


def test_the_parser_model_is_not_asked_about_an_abstention(parser_folder, monkeypatch):
    from tsrate.suites.understanding.cot_parser import CotParser

    monkeypatch.setenv("TSRATE_TINY_COT_PARSER_MODEL_PATH", str(parser_folder))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "6")
    pool = {d: g.generate_split(d, "test", 5, 3) for d in g.UNIVARIATE}
    sample = next(s for s in pool["volatility"] if s.sub_feature != "constant")
    prompts = build_prompts(sample, ("csv",), 2, pool, promptings=("cot",))
    question = next(p for p in prompts if p.task == "classification")
    replies = ["Nothing fits.\nAnswer: None of these"]
    first = [parse_reply(question.task, replies[0], question.options, "cot")]
    parsed, parsed_by, texts = CotParser("hf_local:tiny_cot_parser").rescue(
        [question], replies, first
    )
    # asked, its extraction ("yes") would be kept in texts and the reason would name it
    assert texts == [None] and parsed_by == [None]
    assert not parsed[0].ok and parsed[0].abstained
