"""An LLM reply with one decimal price per line is read as those prices.

Models often answer a forecast one value per line ("101.25\\n101.50\\n..."). Such a line
must not be taken for a numbered-list item ("1. 101.2"): reading "101.25" as item 101 with
value 25 turns every forecast into its cents. The expected values are the reply's own
numbers, written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.systems.llm_replies import parse_forecast


@pytest.mark.parametrize(
    "reply",
    [
        "101.25\n101.50\n102.75",
        "101.25,\n101.50,\n102.75,",
        "Forecast:\n101.25\n101.50\n102.75\n",
        "```\n101.25\n101.50\n102.75\n```",
    ],
)
def test_one_decimal_value_per_line(reply):
    np.testing.assert_array_equal(parse_forecast(reply, 3), [101.25, 101.5, 102.75])


def test_numbered_lists_still_read_their_values():
    np.testing.assert_array_equal(
        parse_forecast("1. 101.25\n2) 101.50\n3: 102.75", 3), [101.25, 101.5, 102.75]
    )
    np.testing.assert_array_equal(
        parse_forecast("1.\t99.5\n2.  98\n3. 97.25", 3), [99.5, 98.0, 97.25]
    )
