"""The zero-shot CLIP sentiment system (tsrate.inputs.sentiment.ClipSentiment) against
CLIP's zero-shot rule computed here step by step on a tiny random CLIP: the line plot
resized bilinearly (np.interp along rows, then columns), normalised with OpenAI CLIP's
published mean and std (or the folder's ``preprocessor_config.json``), unit image and text
embeddings, logits = exp(logit_scale) × cosine similarity, softmax over the three prompts.
257 windows, so the batches of 256 are covered across their boundary.

Written for the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep6_inputs_vit.json): a changed normalisation constant, resize divisor,
batch bound or softmax axis changes a checked probability.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support import tiny_models
from tsrate.inputs import sentiment as st
from tsrate.inputs.images import line_plot_images

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

#: OpenAI CLIP's image normalisation (its preprocessing's published constants)
OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def bilinear(images: np.ndarray, size: int) -> np.ndarray:
    """(b × H × W × 3) uint8 → (b × size × size × 3) in [0, 1], corners kept (align corners)."""
    scaled = images.astype(float) / 255.0
    batch, height, width, _ = scaled.shape
    rows = np.linspace(0, height - 1, size)
    columns = np.linspace(0, width - 1, size)
    out = np.empty((batch, size, size, 3))
    for b in range(batch):
        for c in range(3):
            across = np.stack([np.interp(columns, np.arange(width), r) for r in scaled[b, :, :, c]])
            out[b, :, :, c] = np.stack(
                [np.interp(rows, np.arange(height), across[:, j]) for j in range(size)], axis=1
            )
    return out


def test_resize_is_bilinear_with_the_corners_kept():
    images = np.random.default_rng(0).integers(0, 256, size=(2, 5, 7, 3)).astype(np.uint8)
    resized = st._resize_bilinear(images, 4)
    assert resized.shape == (2, 4, 4, 3)
    np.testing.assert_allclose(resized, bilinear(images, 4), atol=1e-6)
    as_torch = torch.nn.functional.interpolate(
        torch.from_numpy(images / 255.0).permute(0, 3, 1, 2),
        size=(4, 4),
        mode="bilinear",
        align_corners=True,
    )
    np.testing.assert_allclose(resized, as_torch.permute(0, 2, 3, 1).numpy(), atol=1e-6)


def tiny_clip(folder):
    return tiny_models.make_tiny_clip(folder, image_size=16, seed=1)


def zero_shot(folder, contexts, mean, std) -> np.ndarray:
    model = transformers.CLIPModel.from_pretrained(folder).eval()
    tokenizer = transformers.CLIPTokenizer.from_pretrained(folder)
    tokens = tokenizer(list(st.CLIP_PROMPTS), padding=True, return_tensors="pt")
    plots = torch.from_numpy(line_plot_images(contexts).astype(np.float64) / 255.0)
    resized = torch.nn.functional.interpolate(
        plots.permute(0, 3, 1, 2), size=(16, 16), mode="bilinear", align_corners=True
    )  # torch's own bilinear resize, checked against np.interp above
    pixels = (resized.permute(0, 2, 3, 1).numpy() - np.array(mean)) / np.array(std)
    with torch.no_grad():
        text = model.get_text_features(**tokens)
        text = getattr(text, "pooler_output", text).double().numpy()
        image = model.get_image_features(
            pixel_values=torch.from_numpy(pixels.transpose(0, 3, 1, 2).astype(np.float32))
        )
        image = getattr(image, "pooler_output", image).double().numpy()
        scale = float(model.logit_scale.exp())
    text /= np.linalg.norm(text, axis=1, keepdims=True)
    image /= np.linalg.norm(image, axis=1, keepdims=True)
    logits = scale * image @ text.T
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def test_clip_zero_shot_probabilities_and_labels_by_hand(tmp_path):
    folder = tiny_clip(tmp_path / "clip")
    contexts = st.synthetic_walks(257, 8, 3)
    output = st.ClipSentiment(folder, device="cpu").predict(contexts)
    expected = zero_shot(folder, contexts, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)
    assert output.probabilities.shape == (257, 3)
    np.testing.assert_allclose(output.probabilities, expected, atol=2e-5)
    agree = output.labels == expected.argmax(axis=1) - 1
    margin = np.sort(expected, axis=1)
    assert agree[margin[:, -1] - margin[:, -2] > 1e-4].all()  # clear winners agree

    (folder / "preprocessor_config.json").write_text(
        json.dumps({"image_mean": [0.5, 0.4, 0.3], "image_std": [0.2, 0.25, 0.3]})
    )
    own = st.ClipSentiment(folder, device="cpu").predict(contexts[:3]).probabilities
    np.testing.assert_allclose(
        own, zero_shot(folder, contexts[:3], [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]), atol=2e-5
    )


def test_clip_runs_on_the_device_asked_for_else_cuda_when_there_is_one(tmp_path, monkeypatch):
    folder = tiny_clip(tmp_path / "clip")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    default = st.ClipSentiment(folder)
    default.prepare()
    assert default._device == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # asked for: kept
    asked = st.ClipSentiment(folder, device="cpu")
    asked.prepare()
    assert asked._device == "cpu"
    assert next(asked._model.parameters()).device.type == "cpu"
