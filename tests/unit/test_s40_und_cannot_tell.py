"""A classification reply that says it cannot choose is an abstention, like "None of these".

The understanding parser never guesses: "I cannot tell" names no class, and a reply that
names a class while saying it cannot tell has not chosen it either.
"""

import pytest

from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.tasks import CLASSIFICATIONS

TREND = tuple(CLASSIFICATIONS["trend"].classes)


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot tell.",
        "Can't tell from this series",
        "I can\u2019t determine the trend",
        "Unable to say",
        "It is impossible to decide",
        "cannot tell - maybe up",
        "I can not determine whether it is up or down",
    ],
)
def test_saying_it_cannot_choose_is_an_abstention(reply):
    parsed = parse_answer("classification", reply, TREND)
    assert not parsed.ok and parsed.abstained and parsed.answer is None
    # the reason the SQL flag (int_und_answers_selected) reads
    assert parsed.error == "abstains: declines every option"


@pytest.mark.parametrize("reply", ["up", "I can tell: up", "Answer: up"])
def test_a_reply_that_chooses_is_not_an_abstention(reply):
    assert "up" in TREND
    parsed = parse_answer("classification", reply, TREND)
    assert parsed.ok and parsed.answer == "up" and not parsed.abstained


def test_a_cot_answer_line_that_cannot_tell_abstains_but_its_reasoning_may_say_so():
    # only the Answer line is read: reasoning that weighs "cannot tell" still chooses
    chose = parse_reply("classification", "At first I cannot tell.\nAnswer: up", TREND, "cot")
    assert chose.ok and chose.answer == "up"
    declined = parse_reply(
        "classification", "It moves both ways.\nAnswer: cannot tell", TREND, "cot"
    )
    assert not declined.ok and declined.abstained


def test_yes_no_tasks_are_unchanged():
    parsed = parse_answer("detection", "I cannot tell", ())
    assert not parsed.ok and not parsed.abstained
    assert parsed.error == "the reply does not start with yes or no"
