"""Plan the forecasts of a study: its series, its partitions and their order.

A partition is one (system × ticker × perturbation): every window of that ticker, forecast
by that system on inputs under that perturbation. Its ``input_key`` (:func:`input_key`)
hashes everything that determines its forecasts (system settings, window shape,
perturbation spacing, the ticker's clean prices), so a finished partition with the same key
is reused by later runs. :func:`plan_partitions` lists a study's partitions,
:func:`order_partitions` orders them for the pool (costliest system first) and
:func:`make_batch` builds one partition's model inputs (:class:`LazyBatches`, one partition
at a time, as a run asks for them). Running them is
:mod:`tsrate.robustness.forecast.execute`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Mapping

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.perturbations import PERTURBATIONS, input_series
from tsrate.inputs.windows import contexts, futures, window_end_positions
from tsrate.platform.warehouse import load_prices
from tsrate.systems.base import ForecastBatch
from tsrate.systems.registry import create_system, load_systems_seed


@dataclasses.dataclass(frozen=True)
class TickerSeries:
    ticker: str
    dates: np.ndarray  # datetime64[D], study period
    clean: np.ndarray
    end_positions: np.ndarray

    @property
    def window_end_dates(self) -> np.ndarray:
        return self.dates[self.end_positions]


@dataclasses.dataclass(frozen=True)
class Partition:
    system_id: str
    ticker: str
    perturbation_id: str
    input_key: str


def unavailable_systems(study: Study, companies: pd.DataFrame) -> dict[str, str]:
    """The study's systems that are implemented but cannot run here, with the reason
    (``availability()``, or the error building them). Unknown or unimplemented systems are
    not listed: :func:`resolve_systems` rejects them (a typo must fail the run)."""
    seed = load_systems_seed().set_index("system_id")
    unavailable = {}
    for system_id in study.systems:
        if system_id not in seed.index or not seed.loc[system_id, "implementation"]:
            continue
        try:
            system = create_system(seed.loc[system_id, "implementation"], study, companies)
            availability = system.availability()
        except TsrateError as exc:
            unavailable[system_id] = str(exc)
            continue
        if not availability.available:
            unavailable[system_id] = availability.reason
    return unavailable


def load_series(con: duckdb.DuckDBPyConnection, study: Study) -> dict[str, TickerSeries]:
    """The study-period series of each ticker with its window end positions."""
    prices = load_prices(con, list(study.tickers), study.start, study.end)
    series = {}
    for ticker in study.tickers:
        rows = prices[prices["ticker"] == ticker]
        if rows.empty:
            raise TsrateError(f"{ticker}: no prices between {study.start} and {study.end}")
        try:
            ends = window_end_positions(
                len(rows), study.context_length, study.horizon, study.stride
            )
        except TsrateError as exc:
            raise TsrateError(f"{ticker} ({study.start} to {study.end}): {exc}") from exc
        series[ticker] = TickerSeries(
            ticker,
            pd.to_datetime(rows["price_date"]).to_numpy().astype("datetime64[D]"),
            rows["close"].to_numpy(dtype=float),
            ends,
        )
    return series


def input_key(
    system_id: str, fingerprint: str, study: Study, series: TickerSeries, perturbation_id: str
) -> str:
    digest = hashlib.sha256()
    for part in (
        system_id,
        fingerprint,
        series.ticker,
        perturbation_id,
        study.context_length,
        study.horizon,
        study.stride,
        study.perturbation_phase,
        str(series.dates[0]),
        str(series.dates[-1]),
    ):
        digest.update(f"{part}|".encode())
    digest.update(np.round(series.clean, 10).tobytes())
    return digest.hexdigest()[:32]


def plan_partitions(
    study: Study, series: dict[str, TickerSeries], systems: dict
) -> list[Partition]:
    unknown = sorted(set(study.perturbations) - set(PERTURBATIONS))
    if unknown:
        raise TsrateError(f"unknown perturbation(s) {unknown}; known: {sorted(PERTURBATIONS)}")
    partitions = []
    for system_id, (system, accepted) in systems.items():
        # a system's partition tag (e.g. its reply parser's version) keys its stored
        # forecasts too: forecasts made under older rules are recomputed
        fingerprint = system.fingerprint() + getattr(system, "partition_tag", "")
        for ticker, ticker_series in series.items():
            for perturbation_id in study.perturbations:
                if perturbation_id in accepted:
                    key = input_key(system_id, fingerprint, study, ticker_series, perturbation_id)
                    partitions.append(Partition(system_id, ticker, perturbation_id, key))
    return partitions


def make_batch(study: Study, series: TickerSeries, perturbation_id: str) -> ForecastBatch:
    inputs, _ = input_series(
        series.clean, perturbation_id, study.context_length, study.perturbation_phase
    )
    return ForecastBatch(
        ticker=series.ticker,
        perturbation_id=perturbation_id,
        window_end_dates=series.window_end_dates,
        contexts=contexts(inputs, series.end_positions, study.context_length),
        horizon=study.horizon,
        clean_futures=futures(series.clean, series.end_positions, study.horizon),
        study_range=(float(series.clean.min()), float(series.clean.max())),
    )


class LazyBatches(Mapping):
    """The batch of each partition, built when first asked for and kept until
    :meth:`release`: a study's batches are built one partition at a time instead of all at
    once (500 tickers x 10 years x 12 partitions per ticker held 12 GB of batches before the
    first forecast)."""

    def __init__(self, study: Study, series: dict[str, TickerSeries], todo: list[Partition]):
        self._study = study
        self._series = series
        self._todo = {p: None for p in todo}
        self._built: dict[Partition, ForecastBatch] = {}

    def __getitem__(self, partition: Partition) -> ForecastBatch:
        if partition not in self._todo:
            raise KeyError(partition)
        batch = self._built.get(partition)
        if batch is None:
            batch = make_batch(
                self._study, self._series[partition.ticker], partition.perturbation_id
            )
            self._built[partition] = batch
        return batch

    def __iter__(self) -> Iterator[Partition]:
        return iter(self._todo)

    def __len__(self) -> int:
        return len(self._todo)

    def release(self, partition: Partition) -> None:
        """Forget a stored partition's batch (it is rebuilt if asked for again)."""
        self._built.pop(partition, None)

    @property
    def n_held(self) -> int:
        return len(self._built)


#: model milliseconds per window of a system, measured on the default study (one core);
#: orders the work, costliest first, and prices a system's partitions in the ETA until
#: some have finished. A system may say its own (``ms_per_window``, e.g. fracast: ~8 with
#: its prefix encoder, ~37 with fracast's full pass); unlisted ones count 0. The naive
#: baselines' 0.33-0.43 is their change quantiles (ARIMA 12.5-17.3 and fracast 5.7-8.1 in
#: the same default runs, 2026-12-04); random and biased take ~0.002.
SYSTEM_COST = {"arima": 15.0, "fracast": 8.0, "naive": 0.35, "seasonal_naive": 0.35}


def system_cost(system_id: str, system: object) -> float:
    """Milliseconds per window of ``system`` (its ``ms_per_window``, else SYSTEM_COST)."""
    own = getattr(system, "ms_per_window", None)
    return float(own) if own is not None else SYSTEM_COST.get(system_id, 0.0)


def order_partitions(todo: list[Partition], systems: dict) -> list[Partition]:
    """Costliest system first, so the pool stays busy to the end (longest-processing-time
    order); each system's partitions stay together (a worker keeps one system loaded, and
    fracast's prefix cache with it)."""
    cost = {system_id: system_cost(system_id, systems[system_id][0]) for system_id in systems}
    return sorted(
        todo, key=lambda p: (-cost[p.system_id], p.system_id, p.ticker, p.perturbation_id)
    )
