"""Reasoning suite: the two line plots of a two-series prompt share one vertical scale.

Drawn each on its own scale, a series and its ``level_raised`` what-if (the same noise
draw, every value 1.5 times as large) are the same picture, and the items that ask which
change produced the second series, or how much higher it is, cannot be answered."""

from __future__ import annotations

import base64
import dataclasses
import struct
import zlib

import numpy as np
import pytest

from tests.support.reasoning_items import PLAIN
from tsrate import TsrateError
from tsrate.inputs.images import LINE_COLOUR, LINE_PLOT_MARGIN, line_plot_images
from tsrate.inputs.plot_labels import GRID_COLOUR, LABELLED_PLOT_SIZE
from tsrate.suites.reasoning.encoding import plot_data_url
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.scenario_model import noise_draw, observed_series, what_ifs
from tsrate.suites.reasoning.tasks import choice_messages


def png_pixels(url: str) -> np.ndarray:
    """The (H x W x 3) pixels of a data URL written by ``write_png`` (one IDAT chunk, every
    row with filter type 0), read back independently of the drawing code."""
    png = base64.b64decode(url.split(",", 1)[1])
    width, height = struct.unpack(">II", png[16:24])
    start = png.index(b"IDAT") + 4
    (length,) = struct.unpack(">I", png[start - 8 : start - 4])
    rows = np.frombuffer(zlib.decompress(png[start : start + length]), dtype=np.uint8)
    rows = rows.reshape(height, 1 + 3 * width)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, 3)


def plot_area(image: np.ndarray) -> np.ndarray:
    """The square plot area: the rightmost columns, right of the value-label panel."""
    return image[:, -image.shape[0] :]


def line_rows(image: np.ndarray) -> np.ndarray:
    """The pixel rows (0 = top) of the plot area that hold any part of the line."""
    return np.flatnonzero((plot_area(image) == LINE_COLOUR).all(axis=2).any(axis=1))


def level_raised_item() -> Item:
    scenario = dataclasses.replace(PLAIN, amplitude=0.1)
    _, raised = what_ifs(scenario)["level_raised"]
    noise = noise_draw(scenario)
    first, second = observed_series(scenario, noise), observed_series(raised, noise)
    np.testing.assert_allclose(second / first, 1.5, rtol=1e-3)  # the same shape, 1.5x
    return Item(
        task="qa_two",
        category="which_change",
        series=tuple(float(v) for v in first),
        series_b=tuple(float(v) for v in second),
        question="Which change produced the second series?",
        options=("level 50% higher", "no cycle", "trend reversed", "cycle added"),
        answer_index=0,
        context="Daily hospital admissions.",
    )


def test_a_level_raised_series_is_not_the_same_picture_as_its_original():
    item = level_raised_item()
    parts = choice_messages(item, "with_series", "plot")[-1]["content"]
    low, high = (png_pixels(p["image_url"]["url"]) for p in parts if p["type"] == "image_url")
    assert (low != high).any(axis=2).sum() > 100  # not a few pixels of rounding apart
    # the raised series sits wholly above the original: its lowest line pixel is above
    # (a smaller row than) the original's highest one
    assert line_rows(high).max() < line_rows(low).min()
    assert "share one vertical scale" in parts[0]["text"]


def test_both_plots_are_drawn_between_the_same_limits():
    """0 -> 1 and 0 -> 2 on one scale 0..2: both lines start at the bottom row, the second
    reaches the top row and the first only the middle (hand-worked from the margin)."""
    size = 128
    urls = plot_data_url(np.linspace(0.0, 1.0, 40), np.linspace(0.0, 2.0, 40), size=size)
    a, b = (png_pixels(url) for url in urls)
    plot_height = size - 2 * LINE_PLOT_MARGIN
    bottom = LINE_PLOT_MARGIN + plot_height - 1  # the row of the lowest value
    middle = LINE_PLOT_MARGIN + 0.5 * (plot_height - 1)
    assert line_rows(a).max() == line_rows(b).max() == bottom
    assert line_rows(b).min() == LINE_PLOT_MARGIN
    assert abs(line_rows(a).min() - middle) <= 2


def test_a_lone_series_still_fills_its_plot():
    from tsrate.suites.reasoning.encoding import plot_images

    values = np.linspace(3.0, 7.0, 40)
    (image,) = plot_images(values)
    size = LABELLED_PLOT_SIZE
    assert image.shape[0] == size
    # the plot area is the bare line plot of the series between its own lowest and
    # highest value, with grid lines on some background pixels
    bare = line_plot_images(values[None], size, size)[0]
    differ = (plot_area(image) != bare).any(axis=2)
    assert (plot_area(image)[differ] == GRID_COLOUR).all()
    assert line_rows(image).min() == LINE_PLOT_MARGIN
    assert line_rows(image).max() == size - 1 - LINE_PLOT_MARGIN


def test_limits_must_be_an_ordered_finite_pair():
    with pytest.raises(TsrateError, match="y_limits"):
        line_plot_images(np.ones((1, 10)), y_limits=(2.0, 1.0))
    with pytest.raises(TsrateError, match="y_limits"):
        line_plot_images(np.ones((1, 10)), y_limits=(0.0, np.inf))
