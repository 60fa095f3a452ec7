"""The image inputs (tsrate.inputs.images) rebuilt pixel by pixel from the module's
documented conventions, independently of its vectorised code: gaps filled with np.interp,
population standardisation, columns resampled with np.interp, the spectrogram from
``pywt.cwt`` at the documented scales (periods 2 … n samples, C = 5 / 2π), the colour index
floor(255·v + 0.5) of the clipped value, the colormap interpolated between its nine
anchors, and the line plot drawn column by column as a loop.

The colormap's anchors, the line colour and the image geometry are also what the cached
ViT-num-spec checkpoints and the line-plot sentiment classifier were trained on, and their
cache keys do not include them: a changed anchor or colour would make every cached model see
other colours than it learnt from. They are pinned exactly here, so such a change is made on
purpose, with a bump of ``MODEL_VERSION`` / ``CLASSIFIER_VERSION``.

Written for the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep6_inputs_vit.json).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.inputs import images as im

pywt = pytest.importorskip("pywt")

#: viridis read at 0, 1/8, …, 1 (the first and last are matplotlib's viridis data ends,
#: (0.267004, 0.004874, 0.329415) and (0.993248, 0.906157, 0.143936), times 255, rounded)
ANCHORS = np.array(
    [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 145, 140],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ],
    dtype=float,
)
LINE = (31, 60, 140)
MORLET = "cmor2.0-0.7957747"  # bandwidth 2, centre 5 / 2π


def table() -> np.ndarray:
    positions = np.arange(256) / 255.0
    return np.round(
        np.stack([np.interp(positions, np.arange(9) / 8, ANCHORS[:, c]) for c in range(3)], 1)
    ).astype(np.uint8)


def index(values: np.ndarray) -> np.ndarray:
    v = np.clip(np.nan_to_num(np.asarray(values, float), nan=0.0), 0.0, 1.0)
    return np.floor(v * 255 + 0.5).astype(int)


def filled(row: np.ndarray) -> np.ndarray:
    observed = np.isfinite(row)
    if not observed.any():
        return np.zeros_like(row)
    positions = np.arange(row.size)
    return np.interp(positions, positions[observed], row[observed])


def resampled(values: np.ndarray, columns: int) -> np.ndarray:
    return np.interp(np.linspace(0, values.size - 1, columns), np.arange(values.size), values)


def vit_image_by_hand(row: np.ndarray) -> np.ndarray:
    x = filled(row)
    std = x.std() if x.std() > 1e-12 else 1.0
    z = (x - x.mean()) / std
    n = z.size
    colours = table()
    image = np.zeros((128, 128, 3), np.uint8)
    image[:16] = colours[index((resampled(z, 128) + 3.0) / 6.0)][None, :, :]
    centre = 5.0 / (2 * np.pi)
    scales = np.geomspace(2 * centre, max(n, 3) * centre, 112)
    coefficients, _ = pywt.cwt(z, scales, MORLET, method="conv")
    magnitudes = np.stack([resampled(np.abs(r), 128) for r in coefficients])
    peak = magnitudes.max()
    image[16:] = colours[index(magnitudes / (peak if peak > 1e-12 else 1.0))]
    return image


def line_plot_by_hand(row: np.ndarray, height: int = 128, width: int = 128) -> np.ndarray:
    margin = 4
    plot_width = width - 2 * margin
    values = resampled(filled(row), plot_width)
    span = values.max() - values.min()
    relative = (values - values.min()) / span if span > 1e-12 else np.full(plot_width, 0.5)
    y = np.round(margin + (1 - relative) * (height - 2 * margin - 1)).astype(int)
    image = np.full((height, width, 3), 255, np.uint8)
    for c in range(plot_width):
        following = y[c + 1] if c + 1 < plot_width else y[c]
        top = max(min(y[c], following) - 1, margin)
        bottom = min(max(y[c], following) + 1, height - 1 - margin)
        image[top : bottom + 1, margin + c] = LINE
    return image


def walks(count: int, length: int, seed: int) -> np.ndarray:
    return 100 + np.random.default_rng(seed).standard_normal((count, length)).cumsum(axis=1)


# -- the colormap ------------------------------------------------------------------------------


def test_colormap_is_the_nine_anchors_interpolated_and_pinned():
    assert im.IMAGE_SIZE == 128 and im.STRIPE_ROWS == 16 and im.SPECTROGRAM_ROWS == 112
    np.testing.assert_array_equal(im._COLORMAP_ANCHORS, ANCHORS)
    np.testing.assert_array_equal(im.COLORMAP, table())
    assert im.LINE_COLOUR.tolist() == list(LINE) and im.LINE_PLOT_MARGIN == 4
    assert im.BACKGROUND.tolist() == [255, 255, 255]
    values = np.array([np.nan, -1.0, 0.0, 0.5, 1 / 255 - 1e-9, 0.25, 1.0, 7.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN is replaced before the cast, never cast itself
        colours = im.colour_map(values)
    np.testing.assert_array_equal(colours, table()[index(values)])
    assert index(np.array([0.5]))[0] == 128  # 127.5 + 0.5: the half rounds up


def test_paint_without_contiguous_pixels_uses_the_same_colours():
    indices = np.random.default_rng(0).integers(0, 256, size=(3, 5)).astype(np.uint8)
    out = np.zeros((3, 5, 4), np.uint8)[..., :3]  # pixels 4 bytes apart: the channel loop
    im._paint(out, indices)
    np.testing.assert_array_equal(out, table()[indices])
    reversed_channels = np.zeros((3, 5, 3), np.uint8)[..., ::-1]  # pixels 3 bytes apart
    im._paint(reversed_channels, indices)
    np.testing.assert_array_equal(reversed_channels, table()[indices])


# -- the ViT-num-spec image ------------------------------------------------------------------------


def assert_close_image(ours: np.ndarray, expected: np.ndarray) -> None:
    """float32 products may move a value across a colour boundary: a neighbouring colour
    (at most 4 levels away a channel) on a few pixels, never more."""
    difference = np.abs(ours.astype(int) - expected.astype(int))
    assert difference.max() <= 4
    assert (difference.max(axis=-1) == 0).mean() > 0.99


def test_vit_images_equal_the_documented_construction():
    contexts = walks(3, 40, 1)
    contexts[1, [0, 1, 20, 39]] = np.nan
    contexts[2] = 5.0  # constant: a mid-colour stripe, a zero spectrogram
    images = im.vit_num_spec_images(contexts)
    for k in range(3):
        assert_close_image(images[k], vit_image_by_hand(contexts[k]))
    assert (images[2, :16] == table()[128]).all() and (images[2, 16:] == table()[0]).all()
    with pytest.raises(TsrateError, match="128"):
        im.vit_num_spec_images(contexts, size=64)


def test_a_spectrogram_peak_just_above_the_tolerance_is_still_scaled_to_full_colour():
    """A sine of spread 0.5e-12 (below the standardisation tolerance, so left unscaled) over
    80 values, period 40: its |CWT| peaks near 1.6e-12, above the 1e-12 below which an image
    counts as blank, so its spectrogram still spans the colormap."""
    window = 0.5e-12 * np.sqrt(2) * np.sin(2 * np.pi * np.arange(80) / 40)
    coefficients, _ = pywt.cwt(
        window - window.mean(), np.geomspace(2, 80, 112) * 5 / (2 * np.pi), MORLET, method="conv"
    )
    peak = max(resampled(np.abs(row), 128).max() for row in coefficients)
    assert 1.2e-12 < peak < 1.9e-12
    image = im.vit_num_spec_images(window[None])[0]
    # (the stripe is left out: values of 1e-12 sit on a colour boundary, float32 or not)
    assert_close_image(image[16:], vit_image_by_hand(window)[16:])
    assert (image[16:] == table()[255]).all(axis=-1).any()  # the peak's colour is drawn


def test_vit_image_of_the_shortest_window():
    """Two values: the scales still end at a period of 3 samples (never shorter than 2)."""
    contexts = np.array([[1.0, 3.0], [4.0, 2.0]])
    scales = im.spectrogram_scales(2)
    np.testing.assert_allclose(scales / (5 / (2 * np.pi)), np.geomspace(2, 3, 112), rtol=1e-6)
    images = im.vit_num_spec_images(contexts)
    for k in range(2):
        assert_close_image(images[k], vit_image_by_hand(contexts[k]))


def test_one_window_may_be_given_as_a_plain_vector():
    window = walks(1, 30, 5)[0]
    np.testing.assert_array_equal(im.vit_num_spec_images(window), im.vit_num_spec_images([window]))
    np.testing.assert_array_equal(im.line_plot_images(window)[0], line_plot_by_hand(window))
    assert im.fill_missing(window).shape == (1, 30)


def test_resample_matrix_is_linear_interpolation_at_evenly_spaced_points():
    rng = np.random.default_rng(2)
    for length, columns in ((2, 5), (7, 3), (9, 9), (40, 128)):
        values = rng.standard_normal(length)
        matrix = im.resample_matrix(length, columns)
        assert matrix.shape == (length, columns)
        np.testing.assert_allclose(values @ matrix, resampled(values, columns), atol=1e-12)


def test_fill_missing_equals_np_interp_on_random_gaps():
    rng = np.random.default_rng(4)
    values = rng.standard_normal((30, 12))
    values[rng.random((30, 12)) < 0.4] = np.nan
    values[0] = np.nan
    values[1, :-1] = np.nan  # one value, at the end
    values[2, 1:] = np.nan  # one value, at the start
    expected = np.stack([filled(row) for row in values])
    np.testing.assert_allclose(im.fill_missing(values), expected, atol=1e-12)


def test_standardise_a_constant_window_keeps_std_one():
    z, mean, std = im.standardise(np.array([[2.0, 2.0, 2.0], [0.0, 1e-13, 0.0]]))
    assert std.tolist() == [1.0, 1.0] and mean[0] == 2.0
    np.testing.assert_allclose(z[1], [-1e-13 / 3, 2e-13 / 3, -1e-13 / 3], atol=1e-20)
    _, _, std = im.standardise(np.array([[0.0, 2e-12]]))  # std exactly 1e-12: constant
    assert std[0] == 1.0
    z, _, std = im.standardise(np.array([[0.0, 3e-12, 0.0]]))  # std √2·1e-12 > 1e-12
    assert std[0] == pytest.approx(np.sqrt(2) * 1e-12)
    np.testing.assert_allclose(z[0], [-1 / np.sqrt(2), np.sqrt(2), -1 / np.sqrt(2)])


# -- the line plot ----------------------------------------------------------------------------------


def test_line_plots_equal_the_documented_drawing():
    contexts = walks(4, 30, 3)
    contexts[1, [0, 10, 11, 29]] = np.nan
    contexts[2] = 1.0  # flat: the middle row
    contexts[3] = np.nan  # nothing observed: flat too
    plots = im.line_plot_images(contexts)
    for k in range(4):
        np.testing.assert_array_equal(plots[k], line_plot_by_hand(contexts[k]), err_msg=str(k))
    small = im.line_plot_images(contexts[:2], 12, 20)  # the smallest accepted height
    for k in range(2):
        np.testing.assert_array_equal(small[k], line_plot_by_hand(contexts[k], 12, 20))
    with pytest.raises(TsrateError, match="12 pixels"):
        im.line_plot_images(contexts, 11, 20)
    with pytest.raises(TsrateError, match="12 pixels"):
        im.line_plot_images(contexts, 20, 11)
    wide = im.line_plot_images(contexts[:1], 12, 12)
    np.testing.assert_array_equal(wide[0], line_plot_by_hand(contexts[0], 12, 12))


def test_a_rise_just_above_the_flatness_tolerance_is_drawn_as_a_rise():
    rising = np.array([[0.0, 1.5e-12], [0.0, 1e-12], [0.0, 0.5e-12]])  # 1e-12: still flat
    plots = im.line_plot_images(rising)
    for k in range(3):
        np.testing.assert_array_equal(plots[k], line_plot_by_hand(rising[k]))
    ink = (plots[0] != 255).any(axis=2)
    assert ink[123, 4] and ink[4, 123]  # bottom left to top right


# -- PNG --------------------------------------------------------------------------------------------


def test_png_decodes_with_pillow_as_the_same_8_bit_rgb_image(tmp_path):
    """Pillow, an independent decoder, checks the header (8-bit, colour type 2 = RGB, no
    interlace) and every chunk's CRC, and must give back the pixels."""
    image_module = pytest.importorskip("PIL.Image")
    picture = np.random.default_rng(6).integers(0, 256, size=(5, 7, 3)).astype(np.uint8)
    path = im.write_png(tmp_path / "p.png", picture)
    with image_module.open(path) as decoded:
        decoded.load()
        assert decoded.mode == "RGB" and decoded.size == (7, 5)
        assert decoded.info.get("interlace", 0) == 0
        np.testing.assert_array_equal(np.asarray(decoded), picture)
    data = path.read_bytes()
    assert data[24:29] == bytes([8, 2, 0, 0, 0])  # depth, colour type, compression, filter, lace
    for shape in ((4, 4, 4), (4, 4)):
        with pytest.raises(TsrateError, match="uint8"):
            im.write_png(tmp_path / "bad.png", np.zeros(shape, np.uint8))
