"""The chain-of-thought parser model's "no final answer" word is a sentinel that is no class
and no number (``NO_ANSWER``), not ``none`` -- a volatility class, under which an answerless
reply was scored as the answer ``none``. The parser model here is a tiny fake."""

from __future__ import annotations

import pytest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.tasks import CLASSIFICATIONS, build_prompts, load_template


class FakeParserModel:
    """Extracts the same text for every reply; records what it was asked."""

    system_id = "fake_cot_parser"

    def __init__(self, extraction: str):
        self.extraction = extraction
        self.asked: list = []

    def complete_all(self, chats):
        self.asked.extend(chats)
        return [self.extraction] * len(chats)

    def fingerprint(self) -> str:
        return "f" * 8


class ObedientParserModel(FakeParserModel):
    """Finds no final answer in any reply and writes what the template says to write then."""

    def __init__(self):
        super().__init__("")

    def complete_all(self, chats):
        self.asked.extend(chats)
        said = "If the reply gives no final answer, write: "
        return [c[0]["content"].split(said, 1)[1].split()[0] for c in chats]


def _parser(monkeypatch, extraction: str | None):
    import tsrate.systems.language as language
    from tsrate.suites.understanding.cot_parser import CotParser

    model = ObedientParserModel() if extraction is None else FakeParserModel(extraction)
    monkeypatch.setattr(language, "open_language_model", lambda spec: model)
    return CotParser("endpoint:fake_cot_parser"), model


@pytest.fixture(scope="module")
def volatility_prompt():
    pool = {d: g.generate_split(d, "test", 4, 3) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}
    for sample in pool["volatility"]:
        prompts = build_prompts(
            sample, ("csv",), 2, pool, tasks=("classification",), promptings=("cot",)
        )
        if prompts:
            assert "none" in prompts[0].options
            return prompts[0]
    raise AssertionError("no volatility series with a classification prompt")


def _rescue(monkeypatch, prompt, reply: str, extraction: str | None):
    parser, model = _parser(monkeypatch, extraction)
    first = [parse_reply(prompt.task, reply, prompt.options, prompt.prompting, prompt.format)]
    assert not first[0].ok  # no Answer: line: the parser model is asked
    parsed, parsed_by, texts = parser.rescue([prompt], [reply], first)
    assert len(model.asked) == 1
    return parsed[0], parsed_by[0], texts[0]


def test_the_template_asks_for_the_sentinel_not_none():
    from tsrate.suites.understanding.cot_parser import NO_ANSWER

    text = load_template("cot_parser").text
    assert f"write: {NO_ANSWER}" in text
    assert "write: none" not in text


def test_the_sentinel_is_no_class_and_no_number():
    from tsrate.suites.understanding.cot_parser import NO_ANSWER

    for cls in CLASSIFICATIONS.values():
        assert not parse_answer("classification", NO_ANSWER, tuple(cls.classes)).ok
    for task in ("retrieval", "arithmetic_min", "detection", "search", "matching_cross"):
        assert not parse_answer(task, NO_ANSWER).ok


def test_a_parser_model_obeying_the_template_on_an_answerless_reply_gives_no_class(
    monkeypatch, volatility_prompt
):
    """With the old template ("write: none") this reply was scored as the volatility class
    ``none`` and counted parsed by the parser model."""
    reply = "The changes look odd; hard to say more."
    parsed, parsed_by, text = _rescue(monkeypatch, volatility_prompt, reply, None)
    assert not parsed.ok and parsed.answer is None, parsed
    assert parsed_by is None


@pytest.mark.parametrize("extraction", ["NO_ANSWER", " NO_ANSWER\n", "no_answer.", "`NO_ANSWER`"])
def test_a_reply_without_a_final_answer_stays_unparseable(
    monkeypatch, volatility_prompt, extraction
):
    parsed, parsed_by, text = _rescue(
        monkeypatch, volatility_prompt, "The changes look odd; hard to say more.", extraction
    )
    assert not parsed.ok and parsed.answer is None
    assert parsed_by is None  # not counted as parsed by the parser model
    assert "no final answer" in parsed.error
    assert text == extraction  # what the parser model wrote is kept


def test_a_reply_that_does_answer_none_is_still_read_as_the_class_none(
    monkeypatch, volatility_prompt
):
    reply = "The series moves smoothly with no random changes, so the class is none."
    parsed, parsed_by, text = _rescue(monkeypatch, volatility_prompt, reply, "none")
    assert parsed.ok and parsed.answer == "none"
    assert parsed_by == "llm" and text == "none"
