"""Seeded generators of the paper's synthetic datasets (Appendix B) and position-bias sets
(Appendix C).

Every series carries exactly one feature of the taxonomy (paper Table 1), its labels
(``sub_feature`` plus the generator's parameters), a qualitative description (the shape, in
words) and a quantitative one (date range, minimum and maximum with their dates, and the
feature's specifics), as in Section 3.2.

Conventions (ours where the paper is silent):

* daily index from a random start date in 2000-2024; lengths uniform in [30, 150]
  (position sets: a fixed length, 175 in the paper);
* one generator call = one ``numpy.random.Generator`` seeded from
  ``(data_seed, dataset, split, index)`` (:func:`sample_seed`), so any one series can be
  regenerated alone and splits never share draws;
* a ``none`` control class in trend, seasonality, anomalies and structural breaks (the
  paper's "no clear trend" / "no outlier" / "no break") gives the yes/no detection task its
  negatives; volatility's negative is ``constant``, dynamic conditional correlation's a
  ``constant`` correlation;
* quadratic trends multiply both ``a`` and ``b`` by the direction, so a downward quadratic
  falls over the whole series (the paper's ``b`` in [0, 1] for both directions can turn a
  short "downward" series upward);
* volatility series are price paths ``100 + cumsum(r)`` of the paper's returns ``r``
  (GARCH(1,1) omega 0.1, alpha 0.2, beta 0.7; leverage base 0.1 strength 0.3; constant
  ``cumsum(eps) + eta``; increasing ``sigma_0 (1 + 5 t / n)``); the returns are the
  differences of what the prompt shows.

One module per feature family: :mod:`.univariate` (Appendix B.1), :mod:`.multivariate`
(B.2) and :mod:`.position` (Appendix C), over :mod:`.base` (the sample, seeds, helpers); this
module is the registry and the sampling, and re-exports every public name.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import numpy as np

from tsrate import TsrateError
from tsrate.suites.understanding.generators.base import (
    GENERATOR_VERSION,
    MULTIVARIATE,
    POSITION,
    SPLITS,
    UNIVARIATE,
    Sample,
    ar1,
    sample_seed,
)
from tsrate.suites.understanding.generators.multivariate import (
    CORRELATION_KINDS,
    CROSS_KINDS,
    DCC_KINDS,
    correlation,
    cross_correlation,
    dynamic_correlation,
)
from tsrate.suites.understanding.generators.position import (
    position_series,
    quadrant_of,
)
from tsrate.suites.understanding.generators.univariate import (
    ANOMALY_KINDS,
    BREAK_CLASS,
    BREAK_GARCH,
    BREAK_KINDS,
    BREAK_MA_THETA,
    BREAK_THRESHOLD_AR,
    SEASONALITY_KINDS,
    STAT_KINDS,
    TREND_KINDS,
    VOLATILITY_KINDS,
    anomalies,
    garch_returns,
    leverage_returns,
    seasonality,
    statistical_properties,
    structural_breaks,
    trend,
    volatility,
)

__all__ = [
    "ar1",
    "ANOMALY_KINDS",
    "BREAK_CLASS",
    "BREAK_GARCH",
    "BREAK_KINDS",
    "BREAK_MA_THETA",
    "BREAK_THRESHOLD_AR",
    "CORRELATION_KINDS",
    "CROSS_KINDS",
    "DCC_KINDS",
    "GENERATOR_VERSION",
    "MULTIVARIATE",
    "POSITION",
    "SEASONALITY_KINDS",
    "SPLITS",
    "STAT_KINDS",
    "Sample",
    "TREND_KINDS",
    "UNIVARIATE",
    "VOLATILITY_KINDS",
    "anomalies",
    "correlation",
    "cross_correlation",
    "dynamic_correlation",
    "garch_returns",
    "leverage_returns",
    "position_series",
    "quadrant_of",
    "sample_seed",
    "seasonality",
    "statistical_properties",
    "structural_breaks",
    "trend",
    "volatility",
]

# --------------------------------------------------------------------------------------
# Registry and sampling
# --------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable] = {
    "trend": trend,
    "seasonality": seasonality,
    "anomalies": anomalies,
    "structural_breaks": structural_breaks,
    "volatility": volatility,
    "statistical_properties": statistical_properties,
    "correlation": correlation,
    "cross_correlation": cross_correlation,
    "dynamic_correlation": dynamic_correlation,
}
KINDS: dict[str, tuple[str, ...]] = {
    "trend": TREND_KINDS,
    "seasonality": SEASONALITY_KINDS,
    "anomalies": ANOMALY_KINDS,
    "structural_breaks": BREAK_KINDS,
    "volatility": VOLATILITY_KINDS,
    "statistical_properties": STAT_KINDS,
    "correlation": CORRELATION_KINDS,
    "cross_correlation": CROSS_KINDS,
    "dynamic_correlation": DCC_KINDS,
}


def _start_date(rng: np.random.Generator) -> dt.date:
    return dt.date(2000, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365 * 24)))


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def quantitative_description(start: dt.date, columns: dict[str, np.ndarray], specifics: str) -> str:
    """Date range, then per column its minimum and maximum with their dates, then the
    feature's specifics (the paper's quantitative description)."""
    n = len(next(iter(columns.values())))
    end = start + dt.timedelta(days=n - 1)
    parts = [f"This daily time series covers the period from {start} to {end} ({n} days)."]
    for name, x in columns.items():
        lo, hi = int(np.argmin(x)), int(np.argmax(x))
        who = "Its" if len(columns) == 1 else f"{name}'s"
        parts.append(
            f"{who} minimum is {_fmt(x[lo])} on {start + dt.timedelta(days=lo)} and "
            f"its maximum is {_fmt(x[hi])} on {start + dt.timedelta(days=hi)}."
        )
    parts.append(specifics)
    return " ".join(parts)


def generate_sample(
    dataset: str,
    split: str,
    index: int,
    data_seed: int,
    min_length: int = 30,
    max_length: int = 150,
    position_length: int = 175,
    kind: str | None = None,
) -> Sample:
    """Series ``index`` of ``dataset``'s ``split`` (deterministic in its coordinates).

    Position datasets cycle through (quadrant, extreme) by ``index``: 8 cells, so
    ``index // 8`` is the replicate. ``kind`` forces a sub-feature (tests)."""
    if split not in SPLITS:
        raise TsrateError(f"unknown split {split!r}: choose from {', '.join(SPLITS)}")
    seed = sample_seed(data_seed, dataset, split, index)
    rng = np.random.default_rng(seed)
    start = _start_date(rng)
    if dataset in POSITION:
        cell = index % 8
        quadrant, extreme = cell // 2 + 1, ("max", "min")[cell % 2]
        values, labels, qualitative = position_series(
            rng, dataset, position_length, extreme, quadrant
        )
        sub = f"{extreme}_q{labels['extreme_quadrant']}"
        specifics = (
            f"Its {'maximum' if extreme == 'max' else 'minimum'} lies in quadrant "
            f"{labels['extreme_quadrant']}."
        )
        quantitative = quantitative_description(start, {"Value": values}, specifics)
        return Sample(
            dataset, split, index, seed, start, values, sub, labels, qualitative, quantitative
        )
    if dataset not in GENERATORS:
        known = ", ".join((*GENERATORS, *POSITION))
        raise TsrateError(f"unknown dataset {dataset!r}: choose from {known}")
    if not 3 <= min_length <= max_length:
        raise TsrateError(
            f"series lengths must satisfy 3 <= min <= max (got {min_length}, {max_length})"
        )
    n = int(rng.integers(min_length, max_length + 1))
    values, sub, labels, qualitative, specifics = GENERATORS[dataset](rng, n, kind)
    values = np.asarray(values, dtype=float)
    columns = (
        {"Value": values}
        if values.ndim == 1
        else {f"Series{i + 1}": values[:, i] for i in range(values.shape[1])}
    )
    quantitative = quantitative_description(start, columns, specifics)
    labels = {key: _plain(value) for key, value in labels.items()}
    return Sample(
        dataset, split, index, seed, start, values, sub, labels, qualitative, quantitative
    )


def _plain(value):
    """JSON-friendly label values (numpy scalars and lists to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def generate_split(dataset: str, split: str, size: int, data_seed: int, **lengths) -> list[Sample]:
    """The first ``size`` series of a dataset's split."""
    return [generate_sample(dataset, split, i, data_seed, **lengths) for i in range(size)]
