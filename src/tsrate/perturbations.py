"""Numeric input perturbations P0–P3 of the paper (section 4.1).

Each perturbation touches every ``every``-th value of the study-period series, starting at
``phase`` (0-based). With ``every`` equal to the context length, every context window holds
exactly one perturbed value. Only model inputs are perturbed; targets stay clean.
Image perturbations P4–P6 act on image inputs and live with the image code.
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
