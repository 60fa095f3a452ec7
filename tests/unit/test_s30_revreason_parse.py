"""A reply's English article "a" after "answer is" / "choice is" is not option A.

Expected readings written by hand from the parsing rules of docs/suites/reasoning.md
("the reply must name exactly one option letter ... Anything else ... is unparseable").
"""

from __future__ import annotations

import pytest

from tsrate.suites.reasoning.answerers import Request, parse_reply
from tsrate.suites.reasoning.encoding import ReplyParseError
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.tasks import parse_choice


@pytest.mark.parametrize(
    "reply",
    [
        "The answer is a steady rise after the event.",
        "My answer is a guess: C",  # the C is not stated as the answer: unparseable
        "The best choice is a caption about retail sales.",
        "The answer is a 50% higher level.",
    ],
)
def test_the_article_a_after_answer_is_names_no_option(reply):
    with pytest.raises(ReplyParseError, match="no option letter"):
        parse_choice(reply, 4)


def test_the_article_beside_a_stated_letter_leaves_that_letter():
    # before: the article read as A beside the stated C, "several options named: A, C"
    assert parse_choice("The answer is a rising trend, so the answer is C.", 4) == 2


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The answer is a.", 0),
        ("answer: a", 0),
        ("The answer is (a)", 0),
        ("The answer is (a) because the level doubles.", 0),
        ("The answer is **a** since it rises.", 0),
        ("Option a", 0),
        ("The answer is A steady rise", 0),  # a capital letter is a letter
        ("The answer is b because the level doubles.", 1),
        ("a", 0),
    ],
)
def test_a_lowercase_letter_standing_as_the_answer_still_counts(reply, expected):
    assert parse_choice(reply, 4) == expected


def test_such_a_reply_is_stored_unparseable_not_as_option_a():
    item = Item(
        task="etiological",
        category="etiological",
        series=(1.0, 2.0, 3.0),
        question="Which scenario produced the series?",
        options=("rises", "falls", "flat", "cycles"),
        answer_index=0,
    )
    request = Request("m", item, "with_series", "plain", None, None, "hash0")
    response = parse_reply(request, "The answer is a series that rises.")
    assert response.choice is None
    assert not response.parse_ok
    assert "no option letter" in response.parse_error
