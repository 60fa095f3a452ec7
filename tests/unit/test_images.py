"""Image inputs, image perturbations P4–P6 and the sentiment systems."""

from __future__ import annotations

import colorsys
import json

import numpy as np
import pytest

from tests.support import tiny_models
from tsrate import TsrateError
from tsrate.inputs import images as im
from tsrate.inputs import sentiment as st
from tsrate.inputs.perturbations import (
    SENTIMENT_STRIPE_HEIGHT,
    input_series,
    perturb_images,
    saturate,
    sentiment_intensity,
)


def walks(count: int = 6, length: int = 80, seed: int = 0) -> np.ndarray:
    return 100 + np.random.default_rng(seed).standard_normal((count, length)).cumsum(axis=1)


# -- ViT-num-spec image -----------------------------------------------------------------------


def test_vit_image_shape_determinism_and_batch_independence():
    contexts = walks()
    images = im.vit_num_spec_images(contexts)
    assert images.shape == (6, 128, 128, 3) and images.dtype == np.uint8
    np.testing.assert_array_equal(images, im.vit_num_spec_images(contexts))
    np.testing.assert_array_equal(images[2], im.vit_num_spec_images(contexts[2:3])[0])


def test_cwt_equals_pywavelets_complex_morlet_with_omega0_5():
    import pywt

    assert im.WAVELET_NAME.startswith("cmor2.0-0.79577")  # B = 2, C = 5 / 2π
    standardised, _, _ = im.standardise(walks(3))
    scales = im.spectrogram_scales(80)
    expected, _ = pywt.cwt(standardised, scales, im.WAVELET_NAME, method="conv", axis=-1)
    ours = im.cwt_magnitudes(standardised)
    np.testing.assert_allclose(ours, np.abs(expected).transpose(1, 0, 2), atol=1e-4)


def test_higher_frequencies_are_at_the_top_of_the_spectrogram():
    time = np.arange(80)
    fast = np.sin(2 * np.pi * time / 3)
    slow = np.sin(2 * np.pi * time / 40)
    magnitudes = im.cwt_magnitudes(im.standardise(np.stack([fast, slow]))[0])
    energy = magnitudes[:, :, 20:60].mean(axis=2)  # away from the edges
    assert energy[0].argmax() < 30  # the 3-day cycle peaks near the top rows
    assert energy[1].argmax() > 60  # the 40-day cycle near the bottom
    image = im.vit_num_spec_images(np.stack([fast, slow]))
    top = image[:, im.STRIPE_ROWS : im.STRIPE_ROWS + 30].astype(int).sum(axis=(1, 2, 3))
    assert top[0] > top[1]  # brighter (higher magnitude) top rows for the fast cycle


def test_numeric_stripe_shows_the_standardised_series_left_to_right():
    rising = np.linspace(10, 20, 80)[None, :]
    image = im.vit_num_spec_images(rising)[0]
    stripe = image[: im.STRIPE_ROWS]
    assert (stripe == stripe[0]).all()  # every stripe row is the same
    np.testing.assert_array_equal(stripe[0, 0], im.colour_map(np.array([(-1.71 + 3) / 6]))[0])
    assert stripe[0, -1].tolist() != stripe[0, 0].tolist()
    # viridis-like: the high end is yellow (red + green high, blue low)
    assert stripe[0, -1, 2] < stripe[0, -1, 1]


def test_missing_values_are_interpolated_and_edges_take_the_nearest_value():
    values = np.array(
        [
            [1.0, np.nan, 3.0, np.nan, np.nan, 6.0],
            [np.nan, np.nan, 2.0, 4.0, np.nan, np.nan],
            [np.nan] * 6,
        ]
    )
    np.testing.assert_allclose(
        im.fill_missing(values),
        [[1, 2, 3, 4, 5, 6], [2, 2, 2, 4, 4, 4], [0, 0, 0, 0, 0, 0]],
    )
    contexts = walks(2)
    holed = contexts.copy()
    holed[:, ::7] = np.nan
    images = im.vit_num_spec_images(holed)
    np.testing.assert_array_equal(images, im.vit_num_spec_images(im.fill_missing(holed)))
    assert im.line_plot_images(np.full((1, 80), np.nan)).shape == (1, 128, 128, 3)


def test_write_png_round_trips(tmp_path):
    import struct
    import zlib

    image = im.vit_num_spec_images(walks(1))[0]
    data = im.write_png(tmp_path / "x.png", image).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (128, 128)
    length = struct.unpack(">I", data[33:37])[0]
    raw = np.frombuffer(zlib.decompress(data[41 : 41 + length]), np.uint8).reshape(128, -1)
    assert (raw[:, 0] == 0).all()
    np.testing.assert_array_equal(raw[:, 1:].reshape(128, 128, 3), image)
    with pytest.raises(TsrateError, match="uint8"):
        im.write_png(tmp_path / "y.png", image.astype(float))


def test_bad_shapes_are_named():
    with pytest.raises(TsrateError, match="windows × values"):
        im.vit_num_spec_images(np.zeros((2, 3, 4)))
    with pytest.raises(TsrateError, match="at least 2"):
        im.line_plot_images(np.zeros((2, 1)))


# -- line plot --------------------------------------------------------------------------------


def test_line_plot_is_a_connected_line_on_white_with_higher_values_on_top():
    rising = np.linspace(1, 2, 80)[None, :]
    plot = im.line_plot_images(rising)[0]
    ink = (plot != 255).any(axis=2)
    margin = im.LINE_PLOT_MARGIN
    assert not ink[:, :margin].any() and not ink[:margin].any()  # white margins
    columns = np.flatnonzero(ink.any(axis=0))
    assert columns.min() == margin and columns.max() == 127 - margin
    assert len(columns) == 128 - 2 * margin  # connected: no empty column in the plot area
    left_rows = np.flatnonzero(ink[:, margin])
    right_rows = np.flatnonzero(ink[:, 127 - margin])
    assert right_rows.mean() < left_rows.mean()  # the line ends higher (row 0 is the top)
    flat = im.line_plot_images(np.ones((1, 80)))[0]
    assert abs(np.flatnonzero((flat != 255).any(axis=2)[:, 64]).mean() - 63.5) < 2


# -- image perturbations ----------------------------------------------------------------------


def test_p4_blackens_only_the_centre_pixel():
    images = im.vit_num_spec_images(walks(2))
    perturbed = perturb_images(images, "P4")
    changed = (perturbed != images).any(axis=3)
    assert perturbed[:, 64, 64].tolist() == [[0, 0, 0], [0, 0, 0]]
    assert changed.sum() <= 2 and not changed[:, :64].any()
    np.testing.assert_array_equal(perturb_images(images, "P0"), images)  # P0–P3: a copy
    assert perturb_images(images, "P2") is not images


def test_p5_multiplies_hsv_saturation_by_ten_and_clips():
    pixels = np.array([[[[200, 180, 170], [128, 128, 128], [10, 200, 30], [255, 254, 250]]]])
    out = saturate(pixels.astype(np.uint8))
    for before, after in zip(pixels[0, 0], out[0, 0], strict=True):
        h, s, v = colorsys.rgb_to_hsv(*(before / 255))
        expected = np.array(colorsys.hsv_to_rgb(h, min(s * 10, 1.0), v)) * 255
        np.testing.assert_allclose(after, expected, atol=1.0)
    assert out[0, 0, 1].tolist() == [128, 128, 128]  # grey stays grey
    images = im.vit_num_spec_images(walks(2))
    np.testing.assert_array_equal(perturb_images(images, "P5"), saturate(images))


def test_p6_draws_the_sentiment_stripe_at_the_bottom():
    images = im.vit_num_spec_images(walks(3))
    perturbed = perturb_images(images, "P6", np.array([-1, 0, 1]))
    stripe = perturbed[:, 128 - SENTIMENT_STRIPE_HEIGHT :]
    assert [np.unique(stripe[i]).tolist() for i in range(3)] == [[0], [128], [255]]
    np.testing.assert_array_equal(
        perturbed[:, : 128 - SENTIMENT_STRIPE_HEIGHT], images[:, : 128 - SENTIMENT_STRIPE_HEIGHT]
    )
    with pytest.raises(TsrateError, match="sentiment label"):
        perturb_images(images, "P6")
    with pytest.raises(TsrateError, match="2 sentiment labels for 3"):
        perturb_images(images, "P6", np.array([0, 1]))
    with pytest.raises(TsrateError, match="-1, 0 or 1"):
        sentiment_intensity(np.array([2]))
    with pytest.raises(TsrateError, match="unknown perturbation"):
        perturb_images(images, "P9")


def test_image_perturbations_leave_the_numeric_series_unchanged():
    values = np.arange(1.0, 11.0)
    for perturbation in ("P4", "P5", "P6"):
        out, mask = input_series(values, perturbation, every=3)
        np.testing.assert_array_equal(out, values)
        assert not mask.any()
    out, mask = input_series(values, "P1", every=3)
    assert out[0] == 0 and mask.sum() == 4
    with pytest.raises(TsrateError, match="unknown perturbation"):
        input_series(values, "P7", every=3)


# -- sentiment --------------------------------------------------------------------------------


def test_trend_rule():
    line = np.linspace(1, 2, 40)
    contexts = np.stack(
        [line, line[::-1], np.ones(40), np.cos(np.linspace(0, 4 * np.pi, 40))]
    )  # symmetric: no trend
    scores = st.trend_scores(contexts)
    np.testing.assert_allclose(scores[:3], [1, -1, 0], atol=1e-9)
    assert abs(scores[3]) < 0.05
    assert st.trend_labels(contexts, 0.4).tolist() == [1, -1, 0, 0]


SMALL_SENTIMENT = st.LinePlotSettings(
    context_length=40, training_walks=300, validation_walks=150, epochs=3
)


def test_line_plot_classifier_trains_seeded_caches_and_reads_trends(tmp_path):
    system = st.LinePlotSentiment(SMALL_SENTIMENT, cache_dir=tmp_path)
    system.prepare()
    path = system.checkpoint_path
    assert path.exists() and SMALL_SENTIMENT.key in path.name
    meta = json.loads(path.with_suffix(".pt.json").read_text())
    assert meta["validation_accuracy"] > 0.6  # trend is learnable from the plot
    contexts = st.synthetic_walks(200, 40, seed=7)
    first = system.predict(contexts)
    assert set(first.labels.tolist()) <= {-1, 0, 1}
    np.testing.assert_allclose(first.probabilities.sum(axis=1), 1, atol=1e-5)
    assert (first.labels == st.trend_labels(contexts, 0.4)).mean() > 0.6
    stamp = path.stat().st_mtime_ns
    again = st.LinePlotSentiment(SMALL_SENTIMENT, cache_dir=tmp_path)
    np.testing.assert_array_equal(again.predict(contexts).labels, first.labels)
    assert path.stat().st_mtime_ns == stamp  # loaded, not retrained
    retrained, _ = st.train_line_plot_classifier(SMALL_SENTIMENT)  # same seed, same weights
    cached = again._network.state_dict()
    for name, tensor in retrained.items():
        np.testing.assert_array_equal(tensor.numpy(), cached[name].numpy())


def make_tiny_clip(folder):
    """A randomly initialised CLIP with a tiny BPE vocabulary, saved like a real checkpoint."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return tiny_models.make_tiny_clip(folder, image_size=32, seed=0)


def test_clip_zero_shot_loads_a_local_checkpoint(tmp_path, monkeypatch):
    folder = make_tiny_clip(tmp_path / "tiny-clip")
    chosen = st.default_sentiment_system(40, {"sentiment_clip_path": str(folder)})
    assert isinstance(chosen, st.ClipSentiment)
    assert chosen.sentiment_system_id == "clip_zero_shot:tiny-clip"
    contexts = walks(5, 40)
    output = chosen.predict(contexts)
    assert output.probabilities.shape == (5, 3)
    np.testing.assert_allclose(output.probabilities.sum(axis=1), 1, atol=1e-5)
    assert set(output.labels.tolist()) <= {-1, 0, 1}
    assert chosen._text_features.shape == (3, 8)  # projected text features, one per prompt
    np.testing.assert_array_equal(st.ClipSentiment(folder).predict(contexts).labels, output.labels)
    monkeypatch.setenv("TSRATE_CLIP_PATH", str(folder))
    assert isinstance(st.default_sentiment_system(40, {}), st.ClipSentiment)
    monkeypatch.delenv("TSRATE_CLIP_PATH")
    assert isinstance(st.default_sentiment_system(40, {}), st.LinePlotSentiment)
    with pytest.raises(TsrateError, match="no config.json"):
        st.ClipSentiment(tmp_path / "missing")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}")
    with pytest.raises(TsrateError, match="cannot load"):
        st.ClipSentiment(tmp_path / "broken").prepare()


def test_multimodal_var_overrides(monkeypatch):
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", '{"vit_size": "tiny"}')
    assert st.multimodal_vars()["vit_size"] == "tiny"
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", '{"study_tickers": ["X"]}')
    with pytest.raises(TsrateError, match="only vit_"):
        st.multimodal_vars()
