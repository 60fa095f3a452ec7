"""What every generator of the understanding suite shares: the dataset names, the
:class:`Sample` a generator returns, the per-series seed and the small random helpers."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib

import numpy as np

from tsrate import TsrateError

GENERATOR_VERSION = 1

UNIVARIATE = (
    "trend",
    "seasonality",
    "anomalies",
    "structural_breaks",
    "volatility",
    "statistical_properties",
)
MULTIVARIATE = ("correlation", "cross_correlation", "dynamic_correlation")
POSITION = ("brownian", "outlier", "monotone", "monotone_noise", "sinusoidal")
SPLITS = ("train", "validation", "test")


@dataclasses.dataclass(frozen=True)
class Sample:
    """One generated series (one column, or two for the multivariate datasets)."""

    dataset: str
    split: str
    index: int
    seed: int
    start_date: dt.date
    values: np.ndarray  # (n,) or (n, 2)
    sub_feature: str
    labels: dict
    qualitative: str
    quantitative: str

    @property
    def group(self) -> str:
        if self.dataset in MULTIVARIATE:
            return "multivariate"
        return "position" if self.dataset in POSITION else "univariate"

    @property
    def length(self) -> int:
        return int(self.values.shape[0])

    @property
    def dates(self) -> list[dt.date]:
        return [self.start_date + dt.timedelta(days=i) for i in range(self.length)]

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Column name -> values, as the formats print them (``Value`` or Series1/Series2)."""
        if self.values.ndim == 1:
            return {"Value": self.values}
        return {f"Series{i + 1}": self.values[:, i] for i in range(self.values.shape[1])}

    @property
    def series_key(self) -> str:
        text = f"v{GENERATOR_VERSION}|{self.dataset}|{self.split}|{self.index}|{self.seed}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_seed(data_seed: int, dataset: str, split: str, index: int) -> int:
    """The seed of one series: independent of every other series (hash of its coordinates)."""
    text = f"{data_seed}|{dataset}|{split}|{index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def pick(rng: np.random.Generator, kinds: tuple[str, ...], kind: str | None) -> str:
    if kind is None:
        return str(rng.choice(kinds))
    if kind not in kinds:
        raise TsrateError(f"unknown kind {kind!r}: choose from {', '.join(kinds)}")
    return kind


def ar1(rng: np.random.Generator, n: int, phi: float, scale: float = 1.0) -> np.ndarray:
    eps = rng.normal(0.0, scale, n)
    out = np.empty(n)
    out[0] = eps[0] / np.sqrt(max(1e-9, 1 - phi**2))
    for t in range(1, n):
        out[t] = phi * out[t - 1] + eps[t]
    return out


def count_peaks(x: np.ndarray) -> tuple[int, int]:
    """Local maxima and minima of a smooth curve (strict, interior): a point above (below)
    both neighbours. A plateau of equal values is neither, so it is never counted twice."""
    x = np.asarray(x)
    middle, before, after = x[1:-1], x[:-2], x[2:]
    maxima = (middle > before) & (middle > after)
    minima = (middle < before) & (middle < after)
    return int(maxima.sum()), int(minima.sum())
