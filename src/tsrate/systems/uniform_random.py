"""Random (the paper's S_r): uniform draws within the company's price range.

The range is the min and max of the ticker's clean closes over the study period (the
paper's "company range"; it peeks at the study period by design). Draws are seeded by
(study seed, ticker, perturbation), so a rerun reproduces them and each perturbation gets
its own independent draws, as a random system called afresh would.

Quantiles: those of the distribution the forecasts are drawn from, exactly:
low + q * (high - low) at level q, the same at every step.
"""

from __future__ import annotations

import hashlib

import numpy as np

from tsrate.systems.base import QUANTILE_LEVELS, Availability, ForecastBatch, QuantileForecasts


class UniformRandomSystem:
    system_id = "random"

    def __init__(self, seed: int = 42):
        self.seed = int(seed)

    def fingerprint(self) -> str:
        return f"seed={self.seed}"

    def availability(self) -> Availability:
        return Availability(True, "built in")

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        low, high = batch.study_range
        levels = np.asarray(QUANTILE_LEVELS)
        quantiles = np.broadcast_to(
            low + levels * (high - low), (batch.n_windows, batch.horizon, len(levels))
        ).copy()
        return QuantileForecasts(self.predict(batch), quantiles)

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        digest = hashlib.sha256(f"{batch.ticker}|{batch.perturbation_id}".encode()).digest()
        rng = np.random.default_rng([self.seed, int.from_bytes(digest[:8], "little")])
        low, high = batch.study_range
        return rng.uniform(low, high, size=(batch.n_windows, batch.horizon))


def create(study, companies) -> UniformRandomSystem:  # noqa: ANN001 - registry signature
    return UniformRandomSystem(study.seed)
