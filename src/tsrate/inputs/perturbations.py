"""Input perturbations P0–P6 of the paper (section 4.1).

Numeric P1–P3 touch every ``every``-th value of the study-period series, starting at
``phase`` (0-based). With ``every`` equal to the context length, every context window holds
exactly one perturbed value. Only model inputs are perturbed; targets stay clean.

Image P4–P6 leave the numeric series unchanged (:func:`input_series`) and act on the image
a multi-modal system builds from it (:func:`perturb_images`, images as (… × H × W × 3) uint8):

- P4: the centre pixel (row H // 2, column W // 2) becomes black (0, 0, 0).
- P5: HSV saturation × 10, clipped to 1; hue and value unchanged.
- P6: a sentiment system's label (−1/0/1, see :mod:`tsrate.inputs.sentiment`) scaled to
  0/128/255 ((label + 1) / 2 · 255, rounded) is drawn as a grey stripe over the bottom
  ``SENTIMENT_STRIPE_HEIGHT`` rows of the image (in the ViT-num-spec image: the lowest
  frequencies of the spectrogram; the numeric stripe on top stays intact).
"""

from __future__ import annotations

import numpy as np

from tsrate import TsrateError

NUMERIC_PERTURBATIONS: dict[str, str] = {
    "P0": "no perturbation (control)",
    "P1": "drop-to-zero: the value becomes 0",
    "P2": "value halved: the value becomes value / 2",
    "P3": "missing value: the value becomes null (NaN)",
}
IMAGE_PERTURBATIONS: dict[str, str] = {
    "P4": "centre pixel black",
    "P5": "HSV saturation x10, clipped",
    "P6": "sentiment-intensity stripe from a sentiment system reading the line plot",
}
PERTURBATIONS: dict[str, str] = {**NUMERIC_PERTURBATIONS, **IMAGE_PERTURBATIONS}
#: P5's saturation factor and P6's stripe height (pixels, at the bottom of the image).
SATURATION_FACTOR = 10.0
SENTIMENT_STRIPE_HEIGHT = 8


def perturbed_positions(length: int, every: int, phase: int = 0) -> np.ndarray:
    """Boolean mask of the positions ``phase, phase + every, phase + 2·every, …``."""
    if every < 1:
        raise TsrateError(f"perturbation spacing must be at least 1, got {every}")
    mask = np.zeros(length, dtype=bool)
    mask[phase::every] = True
    return mask


def perturb_series(
    values: np.ndarray, perturbation_id: str, every: int, phase: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Return (perturbed copy of ``values``, mask of perturbed positions).

    P0 returns the values unchanged and an all-false mask.
    """
    if perturbation_id not in NUMERIC_PERTURBATIONS:
        raise TsrateError(
            f"unknown numeric perturbation {perturbation_id!r}; "
            f"known: {sorted(NUMERIC_PERTURBATIONS)} (P4–P6 act on images)"
        )
    out = np.asarray(values, dtype=float).copy()
    if perturbation_id == "P0":
        return out, np.zeros(len(out), dtype=bool)
    mask = perturbed_positions(len(out), every, phase)
    if perturbation_id == "P1":
        out[mask] = 0.0
    elif perturbation_id == "P2":
        out[mask] = out[mask] / 2.0
    else:  # P3
        out[mask] = np.nan
    return out, mask


def input_series(
    values: np.ndarray, perturbation_id: str, every: int, phase: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The numeric input under any perturbation P0–P6: image perturbations P4–P6 leave the
    series unchanged (all-false mask); P0–P3 as :func:`perturb_series`."""
    if perturbation_id in IMAGE_PERTURBATIONS:
        return perturb_series(values, "P0", every, phase)
    if perturbation_id not in PERTURBATIONS:
        raise TsrateError(
            f"unknown perturbation {perturbation_id!r}; known: {sorted(PERTURBATIONS)}"
        )
    return perturb_series(values, perturbation_id, every, phase)


def sentiment_intensity(labels: np.ndarray) -> np.ndarray:
    """Sentiment labels −1/0/1 scaled to stripe intensities 0/128/255 (uint8)."""
    labels = np.asarray(labels)
    if not np.isin(labels, (-1, 0, 1)).all():
        raise TsrateError(
            f"sentiment labels must be -1, 0 or 1, got {sorted(set(labels.tolist()))}"
        )
    return np.round((labels.astype(float) + 1.0) / 2.0 * 255.0).astype(np.uint8)


def saturate(images: np.ndarray, factor: float = SATURATION_FACTOR) -> np.ndarray:
    """Multiply HSV saturation by ``factor`` (clipped to 1), keeping hue and value.

    In HSV, with V = max channel and S = (max − min) / max, every channel is
    V · (1 − S · (1 − f)) for its fixed relative position f = (c − min) / (max − min); so the
    new channel is V · (1 − S' · (1 − f)) with S' = min(S · factor, 1). Greys (S = 0) stay grey.
    """
    rgb = np.asarray(images, dtype=np.float32)
    value = rgb.max(axis=-1, keepdims=True)
    low = rgb.min(axis=-1, keepdims=True)
    spread = value - low
    safe_value = np.where(value > 0, value, 1.0)
    saturation = spread / safe_value
    new_saturation = np.minimum(saturation * factor, 1.0)
    position = np.where(spread > 0, (rgb - low) / np.where(spread > 0, spread, 1.0), 1.0)
    out = value * (1.0 - new_saturation * (1.0 - position))
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def perturb_images(
    images: np.ndarray, perturbation_id: str, sentiments: np.ndarray | None = None
) -> np.ndarray:
    """A perturbed copy of ``images`` (windows × H × W × 3, uint8) under P0–P6.

    P0–P3 return an unchanged copy (they act on the numbers the image was drawn from).
    P6 needs ``sentiments``: one label −1/0/1 per image.
    """
    array = np.asarray(images)
    if array.ndim < 3 or array.shape[-1] != 3 or array.dtype != np.uint8:
        raise TsrateError(
            f"images must be uint8 arrays shaped (… × H × W × 3), got {array.dtype} {array.shape}"
        )
    if perturbation_id not in PERTURBATIONS:
        raise TsrateError(
            f"unknown perturbation {perturbation_id!r}; known: {sorted(PERTURBATIONS)}"
        )
    out = array.copy()
    height, width = array.shape[-3], array.shape[-2]
    if perturbation_id == "P4":
        out[..., height // 2, width // 2, :] = 0
    elif perturbation_id == "P5":
        out = saturate(array)
    elif perturbation_id == "P6":
        if sentiments is None:
            raise TsrateError("P6 needs one sentiment label per image (from a sentiment system)")
        labels = np.asarray(sentiments).reshape(-1)
        batch_shape = array.shape[:-3]
        if labels.size != int(np.prod(batch_shape)):
            raise TsrateError(
                f"P6: {labels.size} sentiment labels for {int(np.prod(batch_shape))} images"
            )
        intensity = sentiment_intensity(labels).reshape(batch_shape)
        out[..., height - SENTIMENT_STRIPE_HEIGHT :, :, :] = intensity[..., None, None, None]
    return out
