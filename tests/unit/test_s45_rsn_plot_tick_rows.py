"""A value label sits at the row where the line of a series equal to it is drawn.

Hand-worked for limits 0..800 in a 256-pixel plot area with a 4-pixel margin: value v is
drawn at row round(4 + (1 - v / 800) * 247), so 800 -> 4, 600 -> 65.75 -> 66,
400 -> 127.5 -> 128 (numpy rounds half to even), 200 -> 189.25 -> 189, 0 -> 251."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.plot_ocr import read_labels
from tsrate.inputs.images import LINE_COLOUR
from tsrate.inputs.plot_labels import labelled_line_plot
from tsrate.suites.reasoning.encoding import plot_images

SIZE = 256
HAND_ROWS = {"800": 4, "600": 66, "400": 128, "200": 189, "0": 251}


def tick_mark_rows(image: np.ndarray) -> list[int]:
    """Rows of the grey tick marks: the panel's column two pixels left of the plot area."""
    column = image[:, image.shape[1] - SIZE - 3]
    return np.flatnonzero((column != 255).any(axis=1) & (column != 0).any(axis=1)).tolist()


def line_rows(image: np.ndarray) -> list[int]:
    plot = image[:, -SIZE:]
    return np.flatnonzero((plot == LINE_COLOUR).all(axis=2).any(axis=1)).tolist()


def test_tick_marks_and_labels_sit_at_the_hand_worked_rows():
    image = labelled_line_plot(np.linspace(0.0, 800.0, 50), (0.0, 800.0), SIZE)
    assert tick_mark_rows(image) == sorted(HAND_ROWS.values())
    for label in read_labels(image):
        expected = HAND_ROWS[label.text]
        # centred on its row, moved inside the image at the edges (14 rows high)
        assert label.bottom - label.top == 14
        assert label.top == min(max(expected - 7, 0), SIZE - 14)


@pytest.mark.parametrize(
    ("value", "rows"),
    # a flat line is three pixels thick, centred on its row; kept inside the plot area
    [(200.0, [188, 189, 190]), (600.0, [65, 66, 67]), (800.0, [4, 5]), (0.0, [250, 251])],
)
def test_a_series_equal_to_a_tick_is_drawn_on_that_tick(value, rows):
    image = labelled_line_plot(np.full(40, value), (0.0, 800.0), SIZE)
    assert line_rows(image) == rows
    assert HAND_ROWS[f"{value:.0f}"] in rows
    assert HAND_ROWS[f"{value:.0f}"] in tick_mark_rows(image)


def test_in_a_two_series_prompt_a_series_at_a_labelled_value_lies_on_that_label():
    """The two plots share the limits 0..800 (the second series spans them), so the first
    one, constant at 600, is drawn on the row of the label "600" in both plots."""
    first, second = plot_images(np.full(40, 600.0), np.linspace(0.0, 800.0, 40))
    for image in (first, second):
        labels = {label.text: label for label in read_labels(image)}
        assert list(labels) == ["800", "600", "400", "200", "0"]
        assert labels["600"].centre == HAND_ROWS["600"] - 0.5  # 14 rows from 66 - 7
    assert line_rows(first) == [65, 66, 67]
    assert tick_mark_rows(first) == tick_mark_rows(second) == sorted(HAND_ROWS.values())
