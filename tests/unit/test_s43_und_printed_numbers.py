"""A numeric answer copied from the series as the prompt printed it parses to that value in
EVERY format of the suite -- the ``spaces`` format (``1 0 3 . 2 5``) included, whose prompt
asks for the number "as printed in the series" -- and two distinct numbers still do not."""

from __future__ import annotations

import datetime as dt

import pytest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.formats import FORMATS, format_series
from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.tasks import build_prompts

#: the value field of one printed row, per format (a format added without one fails below)
FIELD = {
    "csv": lambda row: row.split(",")[1],
    "plain": lambda row: row.split(",")[1].split(":", 1)[1],
    "tsv": lambda row: row.split("\t")[1],
    "json": lambda row: row.rsplit(":", 1)[1].rstrip("}"),
    "markdown": lambda row: row.strip("|").split("|")[1],
    "spaces": lambda row: row.split(",")[1],
    "context": lambda row: row.split(",")[1],
    "symbol": lambda row: row.split(",")[1],
    "custom": lambda row: row.split("|")[1],
}

DAY = dt.date(2020, 1, 31)


def test_every_format_has_a_field_reader():
    assert set(FIELD) == set(FORMATS)


def _printed(fmt: str, value: float, decimals: int) -> str:
    """``value`` exactly as the prompt's series block prints it in ``fmt``."""
    text = format_series(fmt, [DAY], {"Value": [value]}, decimals)
    row = [line for line in text.splitlines() if str(DAY) in line][-1]
    return FIELD[fmt](row)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize(
    ("value", "decimals"), [(103.25, 2), (-7.5, 2), (0.4, 2), (1234.0, 0), (-12.0, 0)]
)
def test_a_copied_printed_value_round_trips(fmt, value, decimals):
    printed = _printed(fmt, value, decimals)
    for task, reply in (
        ("retrieval", printed),
        ("retrieval", f"The value is {printed}."),
        ("arithmetic_max", f"{printed} on {DAY}"),
        ("arithmetic_min", f"Answer: {printed} on {DAY}."),
    ):
        parsed = parse_answer(task, reply, (), fmt)
        assert parsed.ok, (fmt, reply, parsed.error)
        assert parsed.value == pytest.approx(value), (fmt, reply)
    cot = parse_reply("retrieval", f"I look up the row.\nAnswer: {printed}", (), "cot", fmt)
    assert cot.ok and cot.value == pytest.approx(value), (fmt, cot)


def test_the_spaces_example_of_the_audit():
    assert parse_answer("retrieval", "1 0 3 . 2 5", (), "spaces").value == 103.25
    arith = parse_answer("arithmetic_min", "1 0 3 . 2 5 on 2020-01-31", (), "spaces")
    assert arith.ok and arith.value == 103.25 and arith.date == "2020-01-31"


@pytest.mark.parametrize(
    "reply",
    [
        "1 0 3 . 2 5 or 9 8 . 1 0",
        "1 0 3 . 2 5, 1 0 4 . 0 0",
        "12 13",
        "1 0 3 . 2 5 (row 4)",
    ],
)
def test_several_distinct_numbers_stay_unparseable_in_the_spaces_format(reply):
    parsed = parse_answer("retrieval", reply, (), "spaces")
    assert not parsed.ok and "several numbers" in parsed.error


def test_real_retrieval_prompts_round_trip_in_every_format():
    """The suite's own prompts: copy the queried date's printed value out of each prompt's
    series block; the parser, told the prompt's format, reads the expected value."""
    pool = {d: g.generate_split(d, "test", 4, 3) for d in g.UNIVARIATE}
    sample = pool[g.UNIVARIATE[0]][0]
    prompts = build_prompts(sample, tuple(FORMATS), 2, pool, tasks=("retrieval",))
    assert {p.format for p in prompts} == set(FORMATS)
    for p in prompts:
        date = p.expected["date"]
        block = p.text.split("```")[1]
        row = next(line for line in block.splitlines() if date in line)
        parsed = parse_reply(p.task, FIELD[p.format](row), p.options, p.prompting, p.format)
        assert parsed.ok, (p.format, row, parsed.error)
        assert parsed.value == p.expected["value"], p.format
