"""A negated class name ("non-stationary", "not constant") is not the class itself: the
strict classification parser, run on the suite's REAL class lists."""

from __future__ import annotations

import pytest

from tsrate.suites.understanding.scoring import parse_answer
from tsrate.suites.understanding.tasks import CLASSIFICATIONS


def _options(dataset: str) -> tuple[str, ...]:
    return tuple(CLASSIFICATIONS[dataset].classes)


@pytest.mark.parametrize(
    ("dataset", "reply"),
    [
        ("statistical_properties", "non-stationary"),
        ("statistical_properties", "not stationary"),
        ("statistical_properties", "The series is not stationary"),
        ("statistical_properties", "Answer: non-stationary"),
        ("statistical_properties", "non stationary"),
        ("statistical_properties", "It isn't stationary."),
        ("volatility", "not constant"),
        ("volatility", "non-constant"),
        ("seasonality", "non-fixed"),
        ("seasonality", "no fixed cycle"),
    ],
)
def test_a_negated_class_alone_is_unparseable(dataset, reply):
    parsed = parse_answer("classification", reply, _options(dataset))
    assert not parsed.ok, parsed
    assert parsed.answer is None


@pytest.mark.parametrize(
    ("dataset", "reply", "answer"),
    [
        # the negated name does not count; the other, un-negated one does
        ("statistical_properties", "not stationary, changing_mean", "changing_mean"),
        ("statistical_properties", "changing variance (non-stationary)", "changing_variance"),
        ("statistical_properties", "seasonal, not trend_and_seasonality", "seasonal"),
        ("volatility", "not constant: increasing", "increasing"),
        ("seasonality", "non-fixed, shifting", "shifting"),
        # an un-negated name after a negated mention of it still counts
        ("statistical_properties", "not fat tailed; stationary", "stationary"),
        # the plain names still parse
        ("statistical_properties", "stationary", "stationary"),
        ("statistical_properties", "Answer: stationary", "stationary"),
        ("volatility", "constant", "constant"),
        ("seasonality", "fixed", "fixed"),
        # the class 'none' (volatility) is named 'none', not read as a negation
        ("volatility", "none", "none"),
        ("volatility", "Answer: none", "none"),
        ("volatility", "The answer is none.", "none"),
    ],
)
def test_un_negated_classes_still_parse(dataset, reply, answer):
    parsed = parse_answer("classification", reply, _options(dataset))
    assert parsed.ok, parsed
    assert parsed.answer == answer


def test_no_real_class_name_starts_with_a_negation_word():
    """The negation rule would hide a class named ``no_...``/``not_...``/``non_...``: none
    exists (``none`` is a whole word of its own and still parses, above)."""
    for cls in CLASSIFICATIONS.values():
        for label in cls.classes:
            first = label.split("_")[0]
            assert first not in ("no", "not", "non"), label
