"""The yes/no tasks' parser reads the word itself, not the text before it: a reply may open
with markdown or a list dash ("**Yes**", "- no."), as the module doc allows (any non-word
characters before the answer), and the answer is still the bare lower-case word."""

from __future__ import annotations

import pytest

from tsrate.suites.understanding.scoring import parse_answer


@pytest.mark.parametrize(
    ("task", "reply", "word"),
    [
        ("detection", "**Yes**, there is a spike", "yes"),
        ("search", "- no.", "no"),
        ("detection", '"NO"', "no"),
    ],
)
def test_a_yes_no_reply_after_punctuation_is_the_bare_word(task, reply, word):
    parsed = parse_answer(task, reply)
    assert parsed.ok
    assert parsed.answer == word
