"""Value labels stay sensible for awkward series: a constant one, negative values, huge and
tiny magnitudes. Read back from the pixels (tests/support/plot_ocr.py): 2 to 5 distinct
labels, none overlapping another or leaving the image, never "-0", each a value within the
series' limits, written at the row where that value is drawn."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.support.plot_ocr import read_labels
from tsrate import TsrateError
from tsrate.inputs.images import LINE_COLOUR
from tsrate.suites.reasoning.encoding import plot_images

SIZE = 256
MARGIN = 4

CASES = {
    # name: (series, the labels expected top to bottom)
    "constant": (np.full(30, 547.0), ["555", "550", "545", "540"]),
    "zero": (np.zeros(30), ["1.0", "0.5", "0.0", "-0.5", "-1.0"]),
    "negative": (np.linspace(-3.2, 1.7, 30), ["1", "0", "-1", "-2", "-3"]),
    "all_negative": (np.linspace(-0.37, -0.02, 30), ["-0.1", "-0.2", "-0.3"]),
    "across_zero": (np.linspace(-0.35, 0.45, 30), ["0.4", "0.2", "0.0", "-0.2"]),
    "huge": (np.linspace(1e12, 5e12, 30), ["5e+12", "4e+12", "3e+12", "2e+12", "1e+12"]),
    "huge_narrow": (
        np.linspace(1.2e9, 1.29e9, 30),
        ["1.28e+09", "1.26e+09", "1.24e+09", "1.22e+09", "1.20e+09"],
    ),
    "tiny": (np.linspace(-2e-5, 3e-5, 30), ["2e-05", "0", "-2e-05"]),
    "millions": (np.linspace(-1234567.0, -1234000.0, 30), ["-1234000", "-1234200", "-1234400"]),
    "constant_tiny": (
        np.full(30, -3e-7),
        ["-2.90e-07", "-2.95e-07", "-3.00e-07", "-3.05e-07", "-3.10e-07"],
    ),
}


def limits_of(name: str) -> tuple[float, float]:
    series = CASES[name][0]
    low, high = float(series.min()), float(series.max())
    if low == high:  # widened by 10% of the value's power of ten, ±1 around zero
        half = 10.0 ** (np.floor(np.log10(abs(low))) - 1) if low else 1.0
        return low - half, high + half
    return low, high


@pytest.mark.parametrize("name", sorted(CASES))
def test_labels_are_sensible(name):
    series, expected = CASES[name]
    (image,) = plot_images(series)
    labels = read_labels(image)
    texts = [label.text for label in labels]
    assert texts == expected
    assert 2 <= len(texts) <= 5 and len(set(texts)) == len(texts)
    assert not any(re.fullmatch(r"-0(\.0*)?(e[+-]\d+)?", t) for t in texts)
    low, high = limits_of(name)
    step = abs(float(texts[0]) - float(texts[1]))
    for above, below in zip(labels[:-1], labels[1:], strict=True):
        assert above.bottom < below.top  # a blank row at least between two labels
    for label in labels:
        assert 0 <= label.top and label.bottom <= SIZE
        value = float(label.text)
        assert low - 1e-9 * step <= value <= high + 1e-9 * step
        # the row a series equal to the label is drawn at, worked out here
        row = MARGIN + (1 - (value - low) / (high - low)) * (SIZE - 2 * MARGIN - 1)
        assert abs(min(max(row - 7, 0), SIZE - 14) - label.top) <= 0.5


@pytest.mark.parametrize("name", ["constant", "zero", "constant_tiny"])
def test_a_constant_series_is_a_flat_line_in_the_middle(name):
    (image,) = plot_images(CASES[name][0])
    rows = np.flatnonzero((image[:, -SIZE:] == LINE_COLOUR).all(axis=2).any(axis=1))
    middle = MARGIN + 0.5 * (SIZE - 2 * MARGIN - 1)  # 127.5, rounded to even: 128
    assert rows.tolist() == [round(middle) - 1, round(middle), round(middle) + 1]


def test_an_infinite_value_is_refused_with_a_hint():
    with pytest.raises(TsrateError, match="infinite value; hint"):
        plot_images(np.array([1.0, np.inf, 2.0]))


def test_a_missing_value_is_filled_as_the_bare_plot_fills_it():
    (image,) = plot_images(np.array([np.nan, 10.0, np.nan, 30.0, np.nan]))
    assert [label.text for label in read_labels(image)] == ["30", "25", "20", "15", "10"]
