"""Ingest flow: load prices from a source, validate them, store them in raw.prices.

Run it alone with ``python flows/ingest.py [PATH]`` (no path: the bundled skfolio sample).
"""

from __future__ import annotations

import sys
import time

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import exponential_backoff

from tsrate import TsrateError
from tsrate.config import warehouse_path
from tsrate.locking import warehouse_writer
from tsrate.orchestration import call
from tsrate.progress import run_logger
from tsrate.sources import load_skfolio_sp500, load_yfinance, read_price_file
from tsrate.testhooks import pause_point
from tsrate.warehouse import connect, store_prices


def _retry_on_io(task, task_run, state) -> bool:  # noqa: ANN001 - Prefect's signature
    """Retry network/file hiccups, never a validation error (it would fail the same way)."""
    try:
        state.result()
    except TsrateError:
        return False
    except Exception:  # noqa: BLE001
        return True
    return False


@task(
    retries=3,
    retry_delay_seconds=exponential_backoff(backoff_factor=5),  # 5 s, 10 s, 20 s
    retry_jitter_factor=0.5,
    retry_condition_fn=_retry_on_io,
    # not cached: the same arguments give new prices after a trading day or an edited file
    cache_policy=NO_CACHE,
)
def fetch_prices(
    source: str, path: str | None, tickers: list[str] | None, start: str | None, end: str | None
):
    """Read and validate prices (I/O: retried with backoff). Raises before anything is stored."""
    if source == "skfolio":
        return load_skfolio_sp500(tickers)
    if source == "file":
        return read_price_file(path)
    if source == "yahoo":
        return load_yfinance(tickers or [], start, end)
    raise ValueError(f"unknown price source {source!r}; use skfolio, file or yahoo")


@task(cache_policy=NO_CACHE)  # writes the warehouse: never cached, never retried
def store(prices, source_label: str, warehouse: str, lock_timeout: float = 0.0) -> dict[str, int]:
    """Replace the stored prices of the incoming tickers in one transaction (one writer)."""
    with warehouse_writer(warehouse, lock_timeout, run_logger().info):
        with connect(warehouse) as con:
            pause_point("ingest")  # test hook (tsrate.testhooks)
            return store_prices(con, prices, source_label)


@flow(name="tsrate-ingest")
def ingest_flow(
    source: str = "skfolio",
    path: str | None = None,
    tickers: list[str] | None = None,
    start: str | None = None,
    end: str | None = None,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
) -> dict[str, int]:
    """Load prices from ``source`` (skfolio | file | yahoo) into raw.prices.

    ``lock_timeout``: seconds to wait while another process writes the warehouse (0: fail).
    """
    logger = run_logger()
    warehouse = warehouse or str(warehouse_path())
    started = time.perf_counter()
    prices = call(fetch_prices, source, path, tickers, start, end)
    label = path if source == "file" else source
    counts = call(store, prices, str(label), warehouse, lock_timeout)
    logger.info(
        "ingested %d rows for %d tickers from %s into %s in %.1fs",
        sum(counts.values()),
        len(counts),
        label,
        warehouse,
        time.perf_counter() - started,
    )
    return counts


if __name__ == "__main__":
    file_path = sys.argv[1] if len(sys.argv) > 1 else None
    ingest_flow(source="file" if file_path else "skfolio", path=file_path)
