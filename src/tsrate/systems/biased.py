"""Biased (the paper's S_b): forecast = actual future + a per-company offset.

Offsets come from the ``biased_offset`` column of the companies seed (defaults: 0 for AAPL,
200 for MSFT, larger for the others), so the residual depends only on the company:
maximal statistical bias across companies, and no perturbation effect at all.

Quantiles: Biased draws nothing, so its distribution is a point mass at its forecast: every
quantile equals the point forecast (an interval of width 0, which covers the truth only
where the offset is 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.systems.base import QUANTILE_LEVELS, Availability, ForecastBatch, QuantileForecasts


class BiasedSystem:
    system_id = "biased"

    def __init__(self, offsets: dict[str, float]):
        self.offsets = {str(k): float(v) for k, v in offsets.items()}

    def fingerprint(self) -> str:
        return "offsets=" + ",".join(f"{k}:{v:g}" for k, v in sorted(self.offsets.items()))

    def availability(self) -> Availability:
        return Availability(True, "built in (offsets from seeds/companies.csv)")

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        point = self.predict(batch)
        return QuantileForecasts(point, np.repeat(point[:, :, None], len(QUANTILE_LEVELS), axis=2))

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        if batch.ticker not in self.offsets:
            raise TsrateError(
                f"biased system: no biased_offset for {batch.ticker} in seeds/companies.csv "
                "or the study's company metadata; add one (a biased_offset column in "
                "--companies FILE) or drop biased (--systems)"
            )
        return batch.clean_futures + self.offsets[batch.ticker]


def create(study, companies) -> BiasedSystem:  # noqa: ANN001 - registry signature
    offsets = dict(zip(companies["ticker"], companies["biased_offset"], strict=True))
    # an empty offset (optional in --companies files) is missing, not NaN added to the future
    return BiasedSystem({t: offsets[t] for t in study.tickers if pd.notna(offsets.get(t))})
