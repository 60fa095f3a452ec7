"""Strict parsing and per-answer scoring of the understanding tasks (the prompts and what a
correct answer is: :mod:`tsrate.suites.understanding.tasks`).

An answer that does not state exactly one admissible answer in the asked form is
*unparseable*: stored with its raw text and the reason, counted wrong, never guessed.

A classification reply that declines every option ("None of these", "none of the above",
"none of the options") or says it cannot choose ("cannot tell", "can't determine", "unable
to say", even beside a class it names) is an *abstention* (``Parsed.abstained``): unusable
like an unparseable reply, and never read as a class -- not even as the class ``none`` that some
tasks offer (volatility's "no volatility"); a reply that names that class ("none", "Answer:
none") still chooses it. A class name right after a negation ("non-stationary", "not
constant", "isn't fixed") does not name that class: a reply whose only class names are negated
names none of the options (unparseable).

A numeric answer copied from the series as printed reads as that number in every format;
the parser is told the prompt's format, and in the ``spaces`` format (every character of a
number apart) single characters of a number separated by single spaces are joined first:
``1 0 3 . 2 5`` is 103.25, ``- 7 . 5 0`` is -7.5. Two distinct numbers are still two.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import numpy as np

from tsrate import TsrateError
from tsrate.suites.understanding.tasks import PROMPTINGS, TASKS

# --------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Parsed:
    ok: bool
    answer: str | None = None  # yes/no, class label or letter
    value: float | None = None
    date: str | None = None
    error: str | None = None
    abstained: bool = False  # the reply declined every option ("None of these")


def _fail(reason: str) -> Parsed:
    return Parsed(False, error=reason)


_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


#: a number printed in the ``spaces`` format, every character apart: ``1 0 3 . 2 5``, ``- 7``
_SPACED = re.compile(r"(?<![\w.])(?:- )?\d(?: \d)*(?: \. \d(?: \d)*)?(?!\w)")


def _numbers(text: str, fmt: str | None = None) -> list[float]:
    """Every number in ``text``; in the ``spaces`` format a number copied as printed
    (``1 0 3 . 2 5``) is one number (single spaces between single characters joined)."""
    if fmt == "spaces":
        text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    return [float(x) for x in _NUMBER.findall(_THOUSANDS.sub("", text))]


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


#: a reply that declines every option or says it cannot choose (read after :func:`_normal`:
#: lower case, apostrophes kept, straight or curly)
_ABSTAINS = re.compile(
    r"\bnone of (?:the |these |those )?(?:above|these|those|options|them)\b"
    r"|\b(?:cannot|can['\u2019]t|can not|unable to|impossible to) (?:tell|determine|say|decide)\b"
)


#: a negation right before a class name ("non-stationary", "not constant", "isn't fixed"; read
#: after :func:`_normal`, so "non-" is "non ")
_NEGATED = re.compile(r"(?:\b(?:non|not|no)|n['\u2019]t)\s+$")


def _names_plainly(said: str, label: str) -> bool:
    """Whether ``said`` names ``label`` as a whole word at least once NOT right after a
    negation: "non-stationary" does not name ``stationary`` (the class ``none`` is a word of
    its own, not a negation)."""
    return any(
        not _NEGATED.search(said[: m.start()])
        for m in re.finditer(rf"\b{re.escape(_normal(label))}\b", said)
    )


def parse_answer(
    task: str, text: str, options: tuple[str, ...] = (), fmt: str | None = None
) -> Parsed:
    """Read one reply strictly (see the module docstring); never guesses. ``fmt``: the
    format the prompt printed its series in (:data:`.formats.FORMATS`), so that a numeric
    answer copied as printed reads as that number (``spaces``: ``1 0 3 . 2 5`` is 103.25)."""
    if text is None or not str(text).strip():
        return _fail("empty reply")
    reply = str(text).strip()
    if task in ("detection", "search"):
        match = re.match(r"^\W*(yes|no)\b", reply, re.IGNORECASE)
        if not match:
            return _fail("the reply does not start with yes or no")
        return Parsed(True, answer=match.group(1).lower())
    if task == "classification":
        said = _normal(re.sub(r"^(answer|option)\s*:\s*", "", reply, flags=re.IGNORECASE))
        said = said.strip(" .'\"`*")
        if _ABSTAINS.search(said):
            # before the labels: "none of these" names no class, not the class 'none'
            return Parsed(False, error="abstains: declines every option", abstained=True)
        exact = [label for label in options if _normal(label) == said]
        if exact:
            return Parsed(True, answer=exact[0])
        named = [label for label in options if _names_plainly(said, label)]
        # a label that is part of another named label (e.g. 'stationary' in 'non stationary') is not counted twice
        named = [a for a in named if not any(a != b and _normal(a) in _normal(b) for b in named)]
        if len(named) == 1:
            return Parsed(True, answer=named[0])
        if not named:
            return _fail("names none of the options")
        return _fail(f"names several options: {', '.join(named)}")
    if task in ("matching_intra", "matching_cross"):
        for pattern, flags in (
            (r"\(?([ABCD])\)?[.:)]?", 0),  # B  (B)  B.
            (r"(?:answer|option)\s*:?\s*\(?([ABCD])\)?\W*", re.IGNORECASE),  # Answer: B
            (r"\(?([ABCD])[.:)]\s+.*", re.DOTALL),  # B. This time series ...
        ):
            match = re.fullmatch(pattern, reply, flags)
            if match:
                return Parsed(True, answer=match.group(1).upper())
        return _fail("the reply is not a single letter A-D")
    if task == "retrieval":
        without_dates = _ISO.sub(" ", reply)
        # every occurrence counts: a reply repeating one number 20 times is not one answer
        numbers = _numbers(without_dates, fmt)
        if not numbers:
            return _fail("no number in the reply")
        if len(numbers) > 1:
            return _fail(
                f"several numbers in the reply ({len(numbers)}): {', '.join(map(str, numbers[:5]))}"
            )
        return Parsed(True, value=numbers[0])
    if task in ("arithmetic_min", "arithmetic_max"):
        dates = sorted(set(_ISO.findall(reply)))
        numbers = _numbers(_ISO.sub(" ", reply), fmt)  # every occurrence counts
        if len(dates) != 1:
            return _fail("no date in the reply" if not dates else "several dates in the reply")
        if len(numbers) != 1:
            return _fail(
                "no number in the reply" if not numbers else "several numbers in the reply"
            )
        try:
            dt.date.fromisoformat(dates[0])
        except ValueError:
            return _fail(f"{dates[0]} is not a calendar date")
        return Parsed(True, value=numbers[0], date=dates[0])
    raise TsrateError(f"unknown task {task!r}: choose from {', '.join(TASKS)}")


_ANSWER_LINE = re.compile(r"^[ \t]*answer[ \t]*:(.*)$", re.IGNORECASE | re.MULTILINE)


def parse_cot_answer(
    task: str, text: str, options: tuple[str, ...] = (), fmt: str | None = None
) -> Parsed:
    """Read a chain-of-thought reply strictly: the LAST line that starts with ``Answer:``
    (case-insensitive, leading blanks allowed) is read by :func:`parse_answer` for the task;
    the reasoning before it is never read. No such line, or one whose answer is not in the
    task's form, is unparseable (with the reason)."""
    if text is None or not str(text).strip():
        return _fail("empty reply")
    lines = _ANSWER_LINE.findall(str(text))
    if not lines:
        return _fail("no 'Answer:' line in the chain-of-thought reply")
    parsed = parse_answer(task, lines[-1].strip(), options, fmt)
    if not parsed.ok:
        return dataclasses.replace(parsed, error=f"the last 'Answer:' line: {parsed.error}")
    return parsed


def parse_reply(
    task: str,
    text: str,
    options: tuple[str, ...] = (),
    prompting: str = "zero_shot",
    fmt: str | None = None,
) -> Parsed:
    """Parse a reply to a prompt of ``prompting`` style, its series printed in format
    ``fmt``: :func:`parse_answer` for zero-shot replies, :func:`parse_cot_answer` for
    chain-of-thought ones."""
    if prompting == "zero_shot":
        return parse_answer(task, text, options, fmt)
    if prompting == "cot":
        return parse_cot_answer(task, text, options, fmt)
    raise TsrateError(f"unknown prompting {prompting!r}: choose from {', '.join(PROMPTINGS)}")


# --------------------------------------------------------------------------------------
# Scoring one answer
# --------------------------------------------------------------------------------------


def score_answer(task: str, expected: dict, parsed: Parsed, decimals: int) -> dict:
    """``correct`` (unparseable = False), ``date_correct`` (arithmetic only) and
    ``abs_pct_error`` (numeric tasks, parsed answers, truth not 0; percent)."""
    out = {"correct": False, "date_correct": None, "abs_pct_error": None}
    if task in ("arithmetic_min", "arithmetic_max"):
        out["date_correct"] = False
    if not parsed.ok:
        return out
    if task in ("detection", "classification", "matching_intra", "matching_cross", "search"):
        out["correct"] = parsed.answer == expected["answer"]
        return out
    truth = float(expected["value"])
    answer = float(parsed.value)
    out["correct"] = abs(round(answer, decimals) - round(truth, decimals)) < 0.5 * 10.0**-decimals
    if truth != 0:
        out["abs_pct_error"] = abs(answer - truth) / abs(truth) * 100.0
    if task != "retrieval":
        out["date_correct"] = parsed.date in expected["dates"]
    return out


def f1_macro(truth: list[str], predicted: list[str | None], labels: list[str]) -> float:
    """Macro F1 over ``labels``; a prediction outside ``labels`` (None = unparseable) is a
    miss for the true class and a false positive for none. A label with no true and no
    predicted item is left out of the mean (sklearn's zero_division=0 would count it 0)."""
    scores = []
    for label in labels:
        tp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == label and p == label)
        fp = sum(1 for t, p in zip(truth, predicted, strict=True) if t != label and p == label)
        fn = sum(1 for t, p in zip(truth, predicted, strict=True) if t == label and p != label)
        if tp + fp + fn == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")
