"""fev's dataset path of a study, recomputed from its documented recipe (independently of
tsrate.robustness.fev_export). No test here."""

from __future__ import annotations

import hashlib
import json

#: The study's data keys: what makes two studies the same dataset for fev.
DATA_KEYS = (
    "tickers",
    "start",
    "end",
    "context_length",
    "horizon",
    "stride",
    "perturbations",
    "perturbation_phase",
)


def fev_dataset_path(study: dict) -> str:
    """``tsrate/`` and the first 16 hex digits of the SHA-256 of the study's data keys as
    sorted, compact JSON (a key the study lacks is null)."""
    data = json.dumps({k: study.get(k) for k in DATA_KEYS}, sort_keys=True, separators=(",", ":"))
    return "tsrate/" + hashlib.sha256(data.encode()).hexdigest()[:16]
