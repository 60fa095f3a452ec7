"""Round 8 of the mutation sweep over the understanding suite (tests/planted/mutate.py; the
survivors are tests/planted/sweep8_understanding.json): what the older tests left open in
``formats.py``, ``analyst.py`` (lines 267-320), ``tasks.py`` (from line 517) and the
numbers and rules of ``report.py``.

Each expectation is written out by hand from the documented layout or definition (Appendix
F's strings, a looped Pearson r, Wilson's formula, a pooled two-proportion z test), never
read from the product: a changed default, bound, index or comparison changes a checked value.
"""

from __future__ import annotations

import datetime as dt

import pytest

from tsrate.suites.understanding import formats as fmts

DAY = [dt.date(2020, 1, 1)]

# --------------------------------------------------------------------------- formats.py

#: one row, value 1.5, printed with the documented default of 2 decimals ("1.50"): a
#: default of 1 prints "1.5", of 3 "1.500"
DEFAULT_DECIMALS = {
    "csv": "Date,Value\n2020-01-01,1.50\n",
    "plain": "Date:2020-01-01,Value:1.50",
    "tsv": "Date\tValue\n2020-01-01\t1.50\n",
    "json": '{"Date":"2020-01-01","Value":1.50}\n',
    "markdown": "|Date|Value|\n|---|---|\n|2020-01-01|1.50|\n",
    "spaces": "Date,Value\n2020-01-01,1 . 5 0\n",
    "context": "Date,Value\n2020-01-01,[1.50]\n",
    "symbol": "Date,Value,DirectionIndicator\n2020-01-01,1.50,→\n",
    "custom": "Date|Value\n2020-01-01|1.50\n",
}


@pytest.mark.parametrize("fmt", sorted(DEFAULT_DECIMALS))
def test_every_format_function_prints_two_decimals_by_default(fmt):
    """Each format function called without ``decimals`` (and format_series) prints two
    places, as the module docstring says."""
    function = getattr(fmts, f"format_{fmt}")
    assert function(DAY, {"Value": [1.5]}) == DEFAULT_DECIMALS[fmt]
    assert fmts.format_series(fmt, DAY, {"Value": [1.5]}) == DEFAULT_DECIMALS[fmt]


@pytest.mark.parametrize("fmt", sorted(DEFAULT_DECIMALS))
def test_a_one_row_series_reads_back(fmt):
    """A series of a single row (json reads its column names from the first record: there
    is no second one)."""
    dates, columns = fmts.parse_formatted(fmt, DEFAULT_DECIMALS[fmt])
    assert dates == DAY and columns == {"Value": [1.5]}
