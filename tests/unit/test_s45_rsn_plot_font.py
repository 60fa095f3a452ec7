"""The plot-label font: every glyph renders, and the labels drawn in a reasoning plot read
back (by an OCR of the glyph table, tests/support/plot_ocr.py) as the values meant."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.plot_ocr import read_labels, read_line, trimmed_glyphs
from tsrate import TsrateError
from tsrate.inputs.plot_labels import (
    FONT,
    GLYPH_HEIGHT,
    GLYPH_WIDTH,
    LABEL_SCALE,
    labelled_line_plot,
    text_mask,
)


@pytest.mark.parametrize("char", sorted(FONT))
def test_every_glyph_renders_as_its_bitmap_scaled_up(char):
    rows = FONT[char]
    assert len(rows) == GLYPH_HEIGHT and {len(r) for r in rows} == {GLYPH_WIDTH}
    bitmap = np.array([[c == "#" for c in row] for row in rows])
    mask = text_mask(char)
    assert mask.shape == (GLYPH_HEIGHT * LABEL_SCALE, GLYPH_WIDTH * LABEL_SCALE)
    assert mask.any()
    np.testing.assert_array_equal(mask[::LABEL_SCALE, ::LABEL_SCALE], bitmap)
    np.testing.assert_array_equal(mask, np.kron(bitmap, np.ones((2, 2), dtype=bool)))
    # its inked columns are contiguous, so a label can be cut into glyphs at blank columns
    inked = np.flatnonzero(bitmap.any(axis=0))
    assert (np.diff(inked) == 1).all()
    if char.isdigit():
        assert bitmap.any(axis=1).all()  # a digit spans the whole height of a label


def test_the_glyphs_are_the_needed_characters_and_all_different():
    assert set(FONT) == set("0123456789.,-+e")
    shapes = [g.tobytes() + bytes(g.shape) for g in trimmed_glyphs().values()]
    assert len(set(shapes)) == len(shapes)


@pytest.mark.parametrize("text", ["0123456789", "-1.25e+03", "1,200", "-0.5", "5e-05"])
def test_a_rendered_text_reads_back(text):
    assert read_line(text_mask(text)) == text


def test_a_character_without_a_glyph_is_refused_with_a_hint():
    with pytest.raises(TsrateError, match="no glyph for 'x'.*hint"):
        text_mask("1x")


def test_the_labels_of_a_plot_read_back_as_round_values_top_to_bottom():
    """A series from 0 to 800: steps of 100 would give 9 values, 200 gives five."""
    image = labelled_line_plot(np.linspace(0.0, 800.0, 50))
    assert [label.text for label in read_labels(image)] == ["800", "600", "400", "200", "0"]


def test_decimal_labels_read_back():
    """0.9 .. 1.1: a step of 0.05 gives five values, written with two decimals."""
    image = labelled_line_plot(np.linspace(0.9, 1.1, 50))
    texts = [label.text for label in read_labels(image)]
    assert texts == ["1.10", "1.05", "1.00", "0.95", "0.90"]
