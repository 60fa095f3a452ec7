"""Ingest flow: load prices from a source, validate them, store them in raw.prices.

Run it alone with ``python flows/ingest.py [PATH]`` (no path: the bundled skfolio sample).
"""

from __future__ import annotations

import sys
import time

from tsrate import TsrateError
from tsrate.config import warehouse_path
from tsrate.platform.locking import warehouse_writer
from tsrate.platform.orchestration import NO_CACHE, call, flow, task
from tsrate.platform.progress import run_logger
from tsrate.platform.stages import pause_point
from tsrate.platform.warehouse import PriceChanges, connect, describe_price_changes, store_prices
from tsrate.robustness.sources import load_skfolio_sp500, load_yfinance, read_price_file


def _retry_on_io(task, task_run, state) -> bool:  # noqa: ANN001 - Prefect's signature
    """Retry what a second try can fix (network and file-system hiccups, rate limits), never
    a validation error or a bug: those fail the same way every time."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001
        return recoverable(exc)
    return False


def recoverable(exc: BaseException) -> bool:
    """True for I/O failures a retry can fix: OSError (connection, timeout) and the rate-limit
    and connection errors of HTTP clients; False for TsrateError and everything else."""
    if isinstance(exc, TsrateError):
        return False
    if isinstance(exc, OSError):
        return True
    name = type(exc).__name__.lower()
    return any(word in name for word in ("ratelimit", "timeout", "connection", "http"))


@task(cache_policy=NO_CACHE)  # local and deterministic: a failure is final, never retried
def read_prices(source: str, path: str | None, tickers: list[str] | None):
    """Read and validate the bundled sample or a file. Raises before anything is stored."""
    if source == "skfolio":
        return load_skfolio_sp500(tickers)
    if source == "file":
        return read_price_file(path)
    raise TsrateError(f"unknown price source {source!r}; use skfolio, file or yahoo")


@task(
    retries=3,
    retry_delay_seconds=[5, 10, 20],  # exponential backoff, as Prefect's exponential_backoff(5)
    retry_jitter_factor=0.5,
    retry_condition_fn=_retry_on_io,
    # not cached: the same arguments give new prices after a trading day
    cache_policy=NO_CACHE,
)
def download_prices(tickers: list[str] | None, start: str | None, end: str | None):
    """Download and validate Yahoo prices (network I/O: retried with backoff when it can
    recover). Raises before anything is stored."""
    return load_yfinance(tickers or [], start, end)


def fetch_prices(
    source: str, path: str | None, tickers: list[str] | None, start: str | None, end: str | None
):
    """The validated prices of ``source``: only the download is retried. Each task goes
    through :func:`call` (a task called bare outside a flow run would start a temporary
    Prefect server)."""
    if source == "yahoo":
        return call(download_prices, tickers, start, end)
    return call(read_prices, source, path, tickers)


@task(cache_policy=NO_CACHE)  # writes the warehouse: never cached, never retried
def store(
    prices,
    source_label: str,
    warehouse: str,
    lock_timeout: float = 0.0,
    replace: bool = False,
) -> dict[str, PriceChanges]:
    """Store the prices in one transaction (one writer): new dates added, identical ones
    accepted; changed closes refused unless ``replace`` (see ``store_prices``)."""
    with warehouse_writer(warehouse, lock_timeout, run_logger().info):
        with connect(warehouse) as con:
            pause_point("ingest")  # test hook (tsrate.platform.stages)
            return store_prices(con, prices, source_label, replace=replace)


@flow(name="tsrate-ingest")
def ingest_flow(
    source: str = "skfolio",
    path: str | None = None,
    tickers: list[str] | None = None,
    start: str | None = None,
    end: str | None = None,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
    replace: bool = False,
) -> dict[str, int]:
    """Load prices from ``source`` (skfolio | file | yahoo) into raw.prices; return the rows
    now stored per ticker.

    ``lock_timeout``: seconds to wait while another process writes the warehouse (0: fail).
    ``replace``: the prices become the whole stored history of their tickers (default: new
    dates are added, identical ones accepted, a changed close refuses the whole load).
    """
    logger = run_logger()
    warehouse = warehouse or str(warehouse_path())
    started = time.perf_counter()
    prices = call(fetch_prices, source, path, tickers, start, end)
    label = path if source == "file" else source
    changes = call(store, prices, str(label), warehouse, lock_timeout, replace)
    logger.info(
        "ingested %s from %s into %s in %.1fs",
        describe_price_changes(changes, replace),
        label,
        warehouse,
        time.perf_counter() - started,
    )
    return {ticker: change.stored for ticker, change in changes.items()}


if __name__ == "__main__":
    file_path = sys.argv[1] if len(sys.argv) > 1 else None
    ingest_flow(source="file" if file_path else "skfolio", path=file_path)
