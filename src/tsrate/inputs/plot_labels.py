"""Line plots with value labels on the vertical axis, drawn with a small built-in bitmap font.

:func:`tsrate.inputs.images.line_plot_images` draws a bare line (no axes, no numbers): a
model reading it can compare shapes, not values. :func:`labelled_line_plot` draws the
same line and writes a few round values beside it, so a number given in the series' own
units ("about 547 admissions") can be read against the picture. Nothing here changes the
bare plots (the robustness suite's images and ``rendering_fingerprint`` stay as they are).

Conventions:

- Layout: a label panel on the left, then the plot area: exactly
  ``line_plot_images(…, size, size, y_limits=(0, 1))`` of the series mapped onto 0–1
  between the limits (so any magnitude draws the same way), with light grey grid lines at
  the tick rows on its white pixels. The reasoning suite uses ``size`` =
  :data:`LABELLED_PLOT_SIZE` (256): the plot area is 256 × 256 whatever the labels; the
  panel is :func:`panel_width` wide (at least :data:`MIN_LABEL_CHARS` characters, wider
  only for longer labels).
- Limits: the lowest and highest value (after filling missing values as the bare plot
  does); a constant series (its range at most 1e-9 of its magnitude) gets ±10% of the
  value's power of ten around it (±1 around 0), so its line sits in the middle between
  labelled values.
- Ticks (:func:`nice_ticks`): the multiples of the smallest step 1, 2 or 5 × 10^k that
  gives at most :data:`MAX_TICKS` (5) values inside the limits (always at least 2). A tick
  is drawn at the row where the line of a series equal to it would be:
  ``round(m + (1 − (v − low) / (high − low)) · (size − 2m − 1))`` with the margin m =
  :data:`tsrate.inputs.images.LINE_PLOT_MARGIN`.
- Labels (:func:`format_ticks`): plain decimals with as many decimals as the step needs
  (``500``, ``0.25``, ``-40``, ``1234400``) while every label is at most 7 characters without its sign and has at most 4 decimals;
  otherwise scientific with the mantissa digits the step needs (``1.2e+06``, ``5e-05``);
  no thousands separators; zero is ``0``, never ``-0``.
- Font (:data:`FONT`): our own 5 × 7 glyphs for ``0-9 . , - + e``, drawn at
  :data:`LABEL_SCALE` (2: 10 × 14 pixels a glyph, one blank scaled column between glyphs),
  black, right-aligned beside a short grey tick mark, centred on the tick's row (moved
  inside the image at the top and bottom edges).
"""

from __future__ import annotations

import math

import numpy as np

from tsrate import TsrateError
from tsrate.inputs.images import BACKGROUND, LINE_PLOT_MARGIN, fill_missing, line_plot_images

#: the plot area's side in the reasoning suite's plots (the bare plots are 128)
LABELLED_PLOT_SIZE = 256
MAX_TICKS = 5
#: the smallest plot area a labelled plot accepts (five labels 14 pixels high fit beside it)
MIN_SIZE = 64
#: the narrowest label panel holds this many characters, so most plots share one width
MIN_LABEL_CHARS = 5
#: labels longer than this (without the sign) are written in scientific notation
MAX_FIXED_CHARS = 7
#: ... or with more decimals than this (``0.00002`` is hard to count: ``2e-05``)
MAX_FIXED_DECIMALS = 4
LABEL_SCALE = 2
GLYPH_HEIGHT = 7
GLYPH_WIDTH = 5
PANEL_PAD = 4  # blank pixels left of the longest label
TICK_GAP = 4  # blank pixels between a label and its tick mark
TICK_LENGTH = 6
TEXT_COLOUR = np.array([0, 0, 0], dtype=np.uint8)
AXIS_COLOUR = np.array([110, 110, 110], dtype=np.uint8)
GRID_COLOUR = np.array([225, 225, 225], dtype=np.uint8)

# 5 x 7 glyphs, one string a row ("#" = ink). Every glyph's inked columns are contiguous
# (labels can be cut into glyphs at blank columns) and every digit spans all seven rows.
FONT = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("####.", "....#", "....#", ".###.", "....#", "....#", "####."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", "..#..", "..#..", "..#.."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    ",": (".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."),
    "-": (".....", ".....", ".....", ".###.", ".....", ".....", "....."),
    "+": (".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."),
    "e": (".....", ".....", ".###.", "#...#", "#####", "#....", ".###."),
}


def glyph(char: str) -> np.ndarray:
    """The (7 × 5) bool bitmap of one character of :data:`FONT`."""
    if char not in FONT:
        raise TsrateError(
            f"no glyph for {char!r} in the plot label font; hint: use {''.join(FONT)}"
        )
    return np.array([[c == "#" for c in row] for row in FONT[char]], dtype=bool)


def text_mask(text: str, scale: int = LABEL_SCALE) -> np.ndarray:
    """The bool ink mask of ``text`` (7·scale rows; glyphs 5·scale wide, ``scale`` blank
    columns between them)."""
    if not text:
        return np.zeros((GLYPH_HEIGHT * scale, 0), dtype=bool)
    cells = []
    for position, char in enumerate(text):
        if position:
            cells.append(np.zeros((GLYPH_HEIGHT, 1), dtype=bool))
        cells.append(glyph(char))
    return np.kron(np.concatenate(cells, axis=1), np.ones((scale, scale), dtype=bool)).astype(bool)


def text_width(chars: int, scale: int = LABEL_SCALE) -> int:
    return max(chars * (GLYPH_WIDTH + 1) * scale - scale, 0)


def value_limits(*series: np.ndarray) -> tuple[float, float]:
    """(low, high) over all series (missing values filled as the bare plot fills them),
    widened around a constant value (module docstring)."""
    arrays = [np.asarray(s, dtype=float).reshape(-1) for s in series]
    if not arrays:
        raise TsrateError("a labelled plot needs at least one series")
    if any(np.isinf(a).any() for a in arrays):
        raise TsrateError("a labelled plot cannot draw an infinite value; hint: drop or clip it")
    filled = np.concatenate([fill_missing(a[None, :])[0] for a in arrays])
    low, high = float(filled.min()), float(filled.max())
    magnitude = max(abs(low), abs(high))
    if high - low > 1e-9 * magnitude and high > low:
        return low, high
    centre = 0.5 * (low + high)
    if centre == 0.0:
        return -1.0, 1.0
    half = 10.0 ** (math.floor(math.log10(abs(centre))) - 1)
    return centre - half, centre + half


def nice_ticks(low: float, high: float, max_ticks: int = MAX_TICKS) -> np.ndarray:
    """Round values inside [low, high] (module docstring); ``low < high``."""
    if not (math.isfinite(low) and math.isfinite(high)) or not high > low:
        raise TsrateError(f"tick limits must be finite with low < high, got ({low}, {high})")
    exponent = math.floor(math.log10(high - low)) - 1
    while True:
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0**exponent
            first = math.ceil(low / step - 1e-9)
            last = math.floor(high / step + 1e-9)
            if last - first + 1 <= max_ticks:
                return np.array([n * step for n in range(first, last + 1)], dtype=float) + 0.0
        exponent += 1


def _step_exponent(ticks: np.ndarray) -> int:
    if len(ticks) < 2:
        return math.floor(math.log10(abs(ticks[0]))) if ticks[0] else 0
    return math.floor(math.log10(float(np.min(np.diff(ticks)))) + 1e-9)


def format_ticks(ticks: np.ndarray) -> list[str]:
    """Compact labels of ticks from :func:`nice_ticks` (module docstring)."""
    ticks = np.asarray(ticks, dtype=float)
    step_exponent = _step_exponent(ticks)
    decimals = max(0, -step_exponent)
    fixed = [f"{v:.{decimals}f}" for v in ticks]
    labels = fixed
    too_long = max(len(label.lstrip("-")) for label in fixed) > MAX_FIXED_CHARS
    if too_long or decimals > MAX_FIXED_DECIMALS:
        largest = float(np.max(np.abs(ticks)))
        digits = max(0, math.floor(math.log10(largest)) - step_exponent) if largest else 0
        labels = [f"{v:.{digits}e}" if v else "0" for v in ticks]
    return [
        label[1:] if label.startswith("-") and not label.strip("-0.e+") else label
        for label in labels
    ]


def tick_rows(ticks: np.ndarray, limits: tuple[float, float], size: int) -> np.ndarray:
    """The pixel row (0 = top) of each tick: where the line of a series equal to it is drawn."""
    low, high = limits
    plot_height = size - 2 * LINE_PLOT_MARGIN
    relative = (np.asarray(ticks, dtype=float) - low) / (high - low)
    return np.round(LINE_PLOT_MARGIN + (1.0 - relative) * (plot_height - 1)).astype(int)


def panel_width(labels: list[str], scale: int = LABEL_SCALE) -> int:
    chars = max([MIN_LABEL_CHARS, *(len(label) for label in labels)])
    return PANEL_PAD + text_width(chars, scale) + TICK_GAP + TICK_LENGTH


def labelled_line_plot(
    values: np.ndarray,
    y_limits: tuple[float, float] | None = None,
    size: int = LABELLED_PLOT_SIZE,
) -> np.ndarray:
    """One line plot of ``values`` with value labels (H = ``size``, W = panel + ``size``,
    3, uint8). ``y_limits``: the (low, high) to draw between (default
    :func:`value_limits` of ``values``); series drawn with the same limits get the same
    ticks, labels and panel width."""
    array = np.asarray(values, dtype=float).reshape(-1)
    low, high = value_limits(array) if y_limits is None else (float(v) for v in y_limits)
    if not (math.isfinite(low) and math.isfinite(high)) or not high > low:
        raise TsrateError(f"y_limits must be finite (low, high) with low < high: {y_limits}")
    if size < MIN_SIZE:
        raise TsrateError(f"a labelled plot needs at least {MIN_SIZE} pixels a side, got {size}")
    plot = line_plot_images(((array - low) / (high - low))[None, :], size, size, (0.0, 1.0))[0]
    ticks = nice_ticks(low, high)
    labels = format_ticks(ticks)
    rows = tick_rows(ticks, (low, high), size)
    grid = plot[rows, LINE_PLOT_MARGIN : size - LINE_PLOT_MARGIN]
    grid[(grid == BACKGROUND).all(axis=-1)] = GRID_COLOUR
    plot[rows, LINE_PLOT_MARGIN : size - LINE_PLOT_MARGIN] = grid
    width = panel_width(labels)
    panel = np.empty((size, width, 3), dtype=np.uint8)
    panel[:] = BACKGROUND
    panel[LINE_PLOT_MARGIN : size - LINE_PLOT_MARGIN, width - 1] = AXIS_COLOUR
    text_right = width - TICK_LENGTH - TICK_GAP
    for row, label in zip(rows, labels, strict=True):
        panel[row, width - TICK_LENGTH :] = AXIS_COLOUR
        mask = text_mask(label)
        top = min(max(row - mask.shape[0] // 2, 0), size - mask.shape[0])
        area = panel[top : top + mask.shape[0], text_right - mask.shape[1] : text_right]
        area[mask] = TEXT_COLOUR
    return np.concatenate([panel, plot], axis=1)
