"""Sampled LLMTime forecasts: several replies per forecast prompt, their median and CRPS.

LLMTime (Gruver et al., ngruver/llmtime) draws ``num_samples`` completions per series (20
for the GPT models in its experiments, with the OpenAI ``n`` parameter) and takes the
element-wise median as the point forecast. ``tsrate suite reasoning run --forecast-samples
20`` does the same; the default, 1, is one greedy reply (temperature of the model's
settings, 0 by default).

- Temperature of the samples (:data:`REFERENCE_TEMPERATURES`): the reference's value for
  the encoding's model family: ``llmtime_gpt`` 0.7 (its ``gpt3_hypers``), ``llmtime_llama``
  1.0 (``llama_hypers``), ``llmtime_gpt4`` 1.0 (``gpt4_hypers``; its ``top_p`` 0.8 is not
  sent), ``plain`` 0.7 (the reference's default, ``get_llmtime_predictions_data``).
  ``--forecast-temperature`` overrides it.
- Median rule (:func:`median_forecast`): the element-wise median of the **usable** samples
  (parsed, right length); the forecast is unusable only when no sample is.
- CRPS (:func:`crps_ensemble`): the energy form of the empirical distribution of the usable
  samples, ``E|X - y| - 1/2 E|X - X'|`` with both expectations over all pairs (the
  plain estimator, equal to ``properscoring.crps_ensemble``; not the "fair" one that
  divides the second term by M(M-1)), averaged over the horizon. For one sample (a point
  mass) it is the absolute error, so a single-reply system's CRPS equals its MAE. The
  reference repository scores CRPS differently (``data/metrics.py``: a quantile loss over
  20 quantiles, divided by the sum of |y|); ours is normalised like the MAE instead (see
  :mod:`tsrate.suites.reasoning.marts`), so CRPS and MAE are on one scale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

#: The reference's sampling temperature per forecast encoding (see the module doc).
REFERENCE_TEMPERATURES = {
    "llmtime_gpt": 0.7,
    "llmtime_llama": 1.0,
    "llmtime_gpt4": 1.0,
    "plain": 0.7,
}
#: The paper's (LLMTime's) number of samples for the GPT models.
PAPER_SAMPLES = 20


def reference_temperature(encoding: str) -> float:
    return REFERENCE_TEMPERATURES.get(encoding, 0.7)


def sample_seed(*parts: object) -> int:
    """A 31-bit seed from the parts' text (the same parts, the same seed, on any machine)."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def median_forecast(samples: Sequence[Sequence[float]]) -> np.ndarray:
    """The element-wise median of the samples (a list of equal-length forecasts, usable
    ones only); raises ValueError when there is none."""
    matrix = np.asarray(samples, dtype=float)
    if matrix.ndim != 2 or len(matrix) == 0:
        raise ValueError("median of no samples")
    return np.median(matrix, axis=0)


def crps_ensemble(samples: Sequence[Sequence[float]], observed: Sequence[float]) -> np.ndarray:
    """CRPS per horizon step of the empirical distribution of ``samples`` (M × H) against
    ``observed`` (H): mean |X_i - y| minus half the mean |X_i - X_j| over all M² pairs."""
    x = np.asarray(samples, dtype=float)
    y = np.asarray(observed, dtype=float)
    if x.ndim != 2 or x.shape[1] != y.shape[0] or len(x) == 0:
        raise ValueError(f"samples {x.shape} do not match the observations {y.shape}")
    first = np.abs(x - y[None, :]).mean(axis=0)
    second = np.abs(x[:, None, :] - x[None, :, :]).mean(axis=(0, 1))
    return first - 0.5 * second
