"""Forecast partitions on a Dask cluster: each partition lands as a Parquet file, then in DuckDB.

The default path forecasts in a local process pool (tsrate.robustness.forecast.execute). With a Dask
scheduler address (``tsrate run --dask ADDRESS``, env ``TSRATE_DASK_ADDRESS`` or the
``dask_address`` var) the forecast flow runs on Prefect's ``DaskTaskRunner`` instead: one
Prefect task per (system × ticker × perturbation) partition, on any worker of the cluster.

A worker writes its partition to ``<partition folder>/<input_key>.parquet`` (temporary
name, then rename: a file is complete or absent); the flow reads each finished file and
stores it in the warehouse in one transaction, as the local path does. A file already
present for an ``input_key`` (left by a killed run) is loaded without computing again;
partitions already stored in the warehouse are never submitted. For a cluster of several
machines the partition folder must be shared storage every worker and the flow can reach
(``TSRATE_PARTITION_DIR``). The address ``local`` (or ``local:N``) starts a LocalCluster of
N worker processes on this machine — what the tests use.

The language models registered under their own id (``tsrate register-llm``) travel with
each partition task: a worker builds its system with them exported, as the local pool's
workers, which take the run's environment, do; a worker never reads the warehouse.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tsrate import TsrateError
from tsrate.config import project_vars
from tsrate.systems.base import ForecastBatch, QuantileForecasts, WindowFallback
from tsrate.systems.registered import Registration

DASK_ADDRESS = "TSRATE_DASK_ADDRESS"
PARTITION_DIR = "TSRATE_PARTITION_DIR"
_METADATA_KEY = b"tsrate.partition"
#: one BLAS thread per worker process (see tsrate.robustness.forecast.workers.single_threaded_children)
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def resolve_dask_address(explicit: str | None = None) -> str | None:
    """The Dask scheduler to use: ``explicit`` (CLI), else ``TSRATE_DASK_ADDRESS``, else the
    ``dask_address`` var; None (empty everywhere) means the local process pool."""
    for candidate in (explicit, os.environ.get(DASK_ADDRESS), project_vars().get("dask_address")):
        if candidate is not None and str(candidate).strip():
            return str(candidate).strip()
    return None


def dask_task_runner(address: str) -> Any:
    """A Prefect ``DaskTaskRunner`` for ``address``: ``local[:N]`` or ``tcp://host:8786``."""
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError as exc:
        raise TsrateError(
            "the Dask path needs prefect-dask: pip install -e '.[dask]' (on the workers too)"
        ) from exc
    if address == "local" or address.startswith("local:"):
        workers = int(address.partition(":")[2] or os.cpu_count() or 1)
        return DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
                "env": SINGLE_THREADED,
            },
        )
    if "://" not in address:
        raise TsrateError(
            f"Dask address {address!r}: use tcp://host:8786 (a scheduler) or local[:N]"
        )
    return DaskTaskRunner(address=address)


def partition_folder(warehouse: str | Path) -> Path:
    """Where partition files land: ``TSRATE_PARTITION_DIR`` or ``<warehouse folder>/partitions``."""
    override = os.environ.get(PARTITION_DIR)
    return Path(override) if override else Path(warehouse).resolve().parent / "partitions"


def partition_file(folder: str | Path, input_key: str) -> Path:
    return Path(folder) / f"{input_key}.parquet"


def write_partition_file(
    folder: str | Path,
    partition: Any,
    window_end_dates: np.ndarray,
    forecasts: Any,
    seconds: float,
) -> Path:
    """Write one partition's forecasts (windows × horizon) to its file, atomically.

    ``forecasts`` is an array, or partial forecasts (``.values`` array, ``.failures`` of
    windows without a forecast, as tsrate.systems.failures defines); failures travel in the
    file's metadata. Quantile forecasts (``.point`` and ``.quantiles``, as
    tsrate.systems.base.QuantileForecasts) travel as one column per level, their fallback
    windows in the metadata.
    """
    quantiles = getattr(forecasts, "quantiles", None)
    fallbacks = [dataclasses.asdict(f) for f in getattr(forecasts, "fallbacks", ())]
    forecasts = getattr(forecasts, "point", forecasts)
    failures = [dataclasses.asdict(f) for f in getattr(forecasts, "failures", ())]
    forecasts = np.asarray(getattr(forecasts, "values", forecasts), dtype=float)
    n_windows, horizon = forecasts.shape
    table = pa.table(
        {
            "window_end_date": pa.array(
                np.repeat(np.asarray(window_end_dates, dtype="datetime64[D]"), horizon)
            ),
            "horizon_step": pa.array(np.tile(np.arange(1, horizon + 1, dtype=np.int32), n_windows)),
            "forecast": pa.array(forecasts.reshape(-1).astype(float)),
        }
    )
    if quantiles is not None:
        quantiles = np.asarray(quantiles, dtype=float).reshape(n_windows * horizon, -1)
        for level, column in enumerate(quantiles.T):
            table = table.append_column(f"quantile_{level}", pa.array(column))
    meta = {
        "input_key": partition.input_key,
        "system_id": partition.system_id,
        "ticker": partition.ticker,
        "perturbation_id": partition.perturbation_id,
        "n_windows": n_windows,
        "horizon": horizon,
        "seconds": seconds,
        "failures": failures,
        **({"fallbacks": fallbacks} if fallbacks else {}),
    }
    table = table.replace_schema_metadata({_METADATA_KEY: json.dumps(meta).encode()})
    path = partition_file(folder, partition.input_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        pq.write_table(table, partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def read_partition_file(
    path: str | Path, partition: Any, batch: ForecastBatch
) -> tuple[Any, float]:
    """The (forecasts [windows × horizon], seconds) of a partition file, checked against the
    partition it should hold and the windows it should cover. Forecasts come back as the
    worker produced them: an array, or partial forecasts when some windows failed."""
    path = Path(path)
    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(_METADATA_KEY)
    if raw is None:
        raise TsrateError(f"{path} is not a tsrate partition file (no partition metadata)")
    meta = json.loads(raw)
    if meta["input_key"] != partition.input_key:
        raise TsrateError(
            f"{path} holds partition {meta['input_key']}, expected {partition.input_key}"
        )
    n_windows, horizon = batch.n_windows, batch.horizon
    if (meta["n_windows"], meta["horizon"]) != (n_windows, horizon):
        raise TsrateError(
            f"{path}: {meta['n_windows']} windows × {meta['horizon']} steps, expected "
            f"{n_windows} × {horizon}"
        )
    frame = table.to_pandas()
    dates = pd.to_datetime(frame["window_end_date"]).to_numpy().astype("datetime64[D]")
    expected = np.repeat(np.asarray(batch.window_end_dates, dtype="datetime64[D]"), horizon)
    if not np.array_equal(dates, expected):
        raise TsrateError(f"{path}: its windows are not those of the study")
    forecasts = frame["forecast"].to_numpy(dtype=float).reshape(n_windows, horizon)
    if meta.get("failures"):
        from tsrate.systems.failures import PartialForecasts, WindowFailure

        failures = tuple(WindowFailure(**failure) for failure in meta["failures"])
        forecasts = PartialForecasts(forecasts, failures)
    columns = sorted(
        (c for c in frame.columns if c.startswith("quantile_")), key=lambda c: int(c[9:])
    )
    if columns:
        quantiles = frame[columns].to_numpy(dtype=float).reshape(n_windows, horizon, len(columns))
        fallbacks = tuple(WindowFallback(**f) for f in meta.get("fallbacks", ()))
        forecasts = QuantileForecasts(forecasts, quantiles, fallbacks)
    return forecasts, float(meta["seconds"])


def forecast_partition_file(
    study_json: str,
    companies: pd.DataFrame,
    partition: Any,
    batch: ForecastBatch,
    folder: str,
    reuse_file: bool = True,
    registered: Iterable[Registration] = (),
) -> str:
    """Worker side: forecast one partition into its file (or keep the file already there).

    ``registered``: the run's registered language models, which travel with each task (a
    worker is not started by the run and does not share its environment, and never reads
    the warehouse); the system is built with them exported."""
    from tsrate.robustness.forecast.execute import forecast_partition

    path = partition_file(folder, partition.input_key)
    if reuse_file and path.exists():
        return str(path)
    forecasts, seconds, _, _ = forecast_partition(
        study_json, companies, partition.system_id, batch, registered
    )
    return str(write_partition_file(folder, partition, batch.window_end_dates, forecasts, seconds))
