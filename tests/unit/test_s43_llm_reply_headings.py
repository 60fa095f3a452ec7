"""A reply's heading is not its forecast, and an index-and-value table is a list
(tsrate.systems.llm_replies, reply_parser=4).

A heading line ending in a number ("... days 81-100", "t+1 to t+5") used to join the list
on the next line, so that number became step 1 and the last value was dropped; a table of
``index<tab>value`` lines was read with its indices interleaved. Each reply below is checked
against the values written into it, and the shapes the parser read before stay as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.systems.llm_replies import ReplyParseError, parse_forecast

CONTEXT = np.round(100 + np.cumsum(np.random.default_rng(0).normal(0, 1, 80)), 2)
VALUES = [round(float(CONTEXT[-1]) + 0.1 * i, 2) for i in range(1, 21)]
BODY = ", ".join(f"{v:.2f}" for v in VALUES)


def _read(reply: str) -> list[float]:
    return [round(float(v), 2) for v in parse_forecast(reply, 20, CONTEXT, 2)]


@pytest.mark.parametrize(
    "heading",
    [
        "Predicted closing prices for days 81-100",
        "Forecast t+1 to t+5",
        "Forecast for the next 20 trading days",
        "The 20 values (2 decimals)",
    ],
)
def test_a_heading_ending_in_a_number_is_not_step_one(heading):
    assert _read(f"{heading}\n{BODY}") == VALUES
    assert _read(f"{heading}\n\n{BODY}\n") == VALUES


@pytest.mark.parametrize("sep", ["\t", " ", "  "])
def test_an_index_and_value_table_reads_its_values(sep):
    table = "\n".join(f"{i}{sep}{v:.2f}" for i, v in enumerate(VALUES, start=1))
    assert _read(f"Day{sep}Price\n{table}") == VALUES
    assert _read(table) == VALUES
    # indices need not start at 1 (days 81-100), but must count up by one
    shifted = "\n".join(f"{i}{sep}{v:.2f}" for i, v in enumerate(VALUES, start=81))
    assert _read(shifted) == VALUES


def test_two_values_a_line_are_values_not_an_index():
    pairs = "\n".join(f"{VALUES[i]:.2f} {VALUES[i + 1]:.2f}" for i in range(0, len(VALUES), 2))
    assert _read(pairs) == VALUES


def test_a_list_wrapped_over_lines_still_goes_on():
    head, tail = VALUES[:10], VALUES[10:]
    wrapped = (
        "Here are the next 20 values: "
        + ", ".join(f"{v:.2f}" for v in head)
        + ",\n"
        + ", ".join(f"{v:.2f}" for v in tail)
    )
    assert _read(wrapped) == VALUES
    assert _read("\n".join(f"{v:.2f}" for v in VALUES)) == VALUES  # one value a line
    assert _read("[\n" + ",\n".join(f"  {v:.2f}" for v in VALUES) + "\n]") == VALUES
    assert _read(f"The forecast is {BODY}. Done.") == VALUES


def test_a_list_cut_by_a_sentence_is_too_short():
    """Words between two parts end the run: neither part alone is 20 values."""
    head, tail = VALUES[:10], VALUES[10:]
    reply = (
        ", ".join(f"{v:.2f}" for v in head)
        + "\nthen, after the holiday:\n"
        + ", ".join(f"{v:.2f}" for v in tail)
    )
    with pytest.raises(ReplyParseError, match="short answer"):
        parse_forecast(reply, 20, CONTEXT, 2)


def test_whole_numbers_two_a_line_are_not_a_table():
    """Only indices that count up by one make a table: 100 101 / 102 103 / ... are values
    (the first 20 of 40 kept), not index 100 with value 101."""
    whole = [100 + i for i in range(40)]
    lines = "\n".join(f"{whole[i]} {whole[i + 1]}" for i in range(0, 40, 2))
    assert [int(v) for v in parse_forecast(lines, 20)] == whole[:20]
