"""Reading the value labels of a labelled line plot back from its pixels: an OCR of the
plot-label font that uses only the glyph table (not the drawing code), so a test can check
that the text drawn is the text meant, where it was meant. No test here."""

from __future__ import annotations

import dataclasses

import numpy as np

from tsrate.inputs.plot_labels import FONT, GLYPH_HEIGHT, LABEL_SCALE

INK = np.array([0, 0, 0], dtype=np.uint8)  # the labels are black


def trimmed_glyphs() -> dict[str, np.ndarray]:
    """Every glyph's 7-row bitmap with its blank left and right columns cut off."""
    out = {}
    for char, rows in FONT.items():
        bitmap = np.array([[c == "#" for c in row] for row in rows], dtype=bool)
        inked = np.flatnonzero(bitmap.any(axis=0))
        out[char] = bitmap[:, inked.min() : inked.max() + 1]
    return out


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of every run of True in a 1-d bool array."""
    padded = np.concatenate([[False], flags, [False]]).astype(int)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def read_line(ink: np.ndarray, scale: int = LABEL_SCALE) -> str:
    """The text of one line of ink (exactly 7·scale rows): cut at blank columns, every piece
    shrunk by ``scale`` (it must be made of whole scale × scale blocks) and matched with a
    glyph; an unknown piece fails the test."""
    assert ink.shape[0] == GLYPH_HEIGHT * scale, f"a label is {ink.shape[0]} rows high"
    glyphs = trimmed_glyphs()
    text = ""
    for start, stop in runs(ink.any(axis=0)):
        piece = ink[:, start:stop]
        assert piece.shape[1] % scale == 0, "a glyph is not a whole number of blocks wide"
        small = piece[::scale, ::scale]
        blocks = np.kron(small, np.ones((scale, scale), dtype=bool))
        assert (blocks == piece).all(), "a glyph is not drawn in whole blocks"
        matches = [c for c, g in glyphs.items() if g.shape == small.shape and (g == small).all()]
        assert len(matches) == 1, f"an unreadable glyph:\n{small.astype(int)}"
        text += matches[0]
    return text


@dataclasses.dataclass(frozen=True)
class Label:
    text: str
    top: int  # first row of the label's ink
    bottom: int  # one past its last row

    @property
    def centre(self) -> float:
        return (self.top + self.bottom - 1) / 2


def read_labels(image: np.ndarray) -> list[Label]:
    """The labels of a labelled plot (H × W × 3), top to bottom: the black pixels of the
    panel left of the square plot area, cut into lines at blank rows."""
    panel = image[:, : image.shape[1] - image.shape[0]]
    ink = (panel == INK).all(axis=2)
    return [Label(read_line(ink[top:bottom]), top, bottom) for top, bottom in runs(ink.any(1))]
