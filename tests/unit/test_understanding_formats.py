"""The nine formats of the paper's Appendix F, byte for byte, and reading them back."""

from __future__ import annotations

import datetime as dt

import pytest

from tsrate import TsrateError
from tsrate.suites.understanding.formats import FORMATS, format_series, parse_formatted

DATES = [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(4)]
VALUES = {"Value": [100, 105, 103, 103]}

# Appendix F's examples (integers: decimals=0)
GOLDEN = {
    "csv": "Date,Value\n2020-01-01,100\n2020-01-02,105\n2020-01-03,103\n2020-01-04,103\n",
    "plain": "Date:2020-01-01,Value:100\nDate:2020-01-02,Value:105\nDate:2020-01-03,Value:103\nDate:2020-01-04,Value:103",
    "tsv": "Date\tValue\n2020-01-01\t100\n2020-01-02\t105\n2020-01-03\t103\n2020-01-04\t103\n",
    "json": '{"Date":"2020-01-01","Value":100}\n{"Date":"2020-01-02","Value":105}\n'
    '{"Date":"2020-01-03","Value":103}\n{"Date":"2020-01-04","Value":103}\n',
    "markdown": "|Date|Value|\n|---|---|\n|2020-01-01|100|\n|2020-01-02|105|\n|2020-01-03|103|\n|2020-01-04|103|\n",
    "spaces": "Date,Value\n2020-01-01,1 0 0\n2020-01-02,1 0 5\n2020-01-03,1 0 3\n2020-01-04,1 0 3\n",
    "context": "Date,Value\n2020-01-01,[100]\n2020-01-02,[105]\n2020-01-03,[103]\n2020-01-04,[103]\n",
    "symbol": "Date,Value,DirectionIndicator\n2020-01-01,100,→\n2020-01-02,105,↑\n2020-01-03,103,↓\n2020-01-04,103,→\n",
    "custom": "Date|Value\n2020-01-01|100\n2020-01-02|105\n2020-01-03|103\n2020-01-04|103\n",
}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_appendix_f_golden_strings(fmt):
    assert format_series(fmt, DATES, VALUES, decimals=0) == GOLDEN[fmt]


def test_every_format_has_a_golden_string():
    assert set(GOLDEN) == set(FORMATS) and len(FORMATS) == 9


def test_decimals_negative_values_and_pairs():
    pair = {"Series1": [1.234, -0.5], "Series2": [10.0, 9.996]}
    assert format_series("spaces", DATES[:2], pair) == (
        "Date,Series1,Series2\n2020-01-01,1 . 2 3,1 0 . 0 0\n2020-01-02,- 0 . 5 0,1 0 . 0 0\n"
    )
    assert format_series("symbol", DATES[:2], pair) == (
        "Date,Series1,Series2,Series1Direction,Series2Direction\n"
        "2020-01-01,1.23,10.00,→,→\n2020-01-02,-0.50,10.00,↓,→\n"  # 9.996 prints 10.00: unchanged
    )
    first = {name: values[:1] for name, values in pair.items()}
    assert format_series("plain", DATES[:1], first) == "Date:2020-01-01,Series1:1.23,Series2:10.00"
    assert format_series("csv", DATES[:1], {"Value": [-0.001]}) == "Date,Value\n2020-01-01,0.00\n"


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_formats_read_back(fmt):
    pair = {"Series1": [1.25, -3.5, 7.0, 0.0], "Series2": [100.0, 101.5, 99.25, 1e3]}
    dates, columns = parse_formatted(fmt, format_series(fmt, DATES, pair))
    assert dates == DATES and columns == pair
    dates, columns = parse_formatted(fmt, GOLDEN[fmt])
    assert columns == {"Value": [100.0, 105.0, 103.0, 103.0]}


def test_bad_input_is_named():
    with pytest.raises(TsrateError, match="unknown format 'yaml'"):
        format_series("yaml", DATES, VALUES)
    with pytest.raises(TsrateError, match="has 3 values for 4 dates"):
        format_series("csv", DATES, {"Value": [1, 2, 3]})
    with pytest.raises(TsrateError, match="not a YYYY-MM-DD date"):
        parse_formatted("csv", "Date,Value\n01/02/2020,3\n")
    with pytest.raises(TsrateError, match="not in brackets"):
        parse_formatted("context", "Date,Value\n2020-01-01,3\n")
