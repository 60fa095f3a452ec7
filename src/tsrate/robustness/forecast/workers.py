"""Where forecast workers come from: a fork server that imported their libraries once.

A spawned worker imports tsrate, pandas and DuckDB, then each system's libraries the first
time it forecasts (torch with fracast, scipy and statsmodels with ARIMA): about 3.4 s of CPU
per worker here, paid again by every worker, on the same cores as the forecasts. Workers
forked from a fork server that imported all of that once start with it loaded (shared
pages, copy-on-write), and the server can start early: ``tsrate run`` starts it before
the prices are ingested when it will compute forecasts (:func:`start_early`).

The server imports :mod:`tsrate.robustness.forecast.worker_preload`, which imports the
modules named in :data:`PRELOAD` (the server's environment) and calls their
``worker_imports()``. A process keeps one server: the first pool's modules are preloaded;
a later study's other systems are imported by the workers that need them, as before.

The server's environment is the one it started with, so each worker replaces its own with
the parent's at start (:func:`tsrate.robustness.forecast.execute.init_worker`): a setting changed after the server started
(``TSRATE_FRACAST_DEVICE``, the LLM cache folder) reaches the worker as with spawn.
``TSRATE_WORKER_START=spawn`` uses spawned workers (where a fork server misbehaves).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterable, Iterator

from tsrate.platform.lifelines import alive

#: The fork server's environment variable naming the modules it preloads (comma-separated).
PRELOAD = "TSRATE_WORKER_PRELOAD"
#: ``spawn`` or ``forkserver`` (default where the platform has it).
START_METHOD = "TSRATE_WORKER_START"
#: One BLAS thread per worker: a process per core, OpenBLAS's own threads oversubscribe
#: the cores and busy-wait (measured: ARIMA fits 40x slower on 2 cores). Each BLAS copy
#: (numpy's, scipy's) reads these when it loads, in the fork server or a spawned worker.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """These environment variables set for the block (children started in it inherit
    them), then restored as they were."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def single_threaded_children() -> contextlib.AbstractContextManager[None]:
    """Children started in this block get one BLAS thread each (:data:`THREAD_VARIABLES`)."""
    return environment(**dict.fromkeys(THREAD_VARIABLES, "1"))


def start_method() -> str:
    wanted = os.environ.get(START_METHOD, "").strip().lower()
    if wanted == "spawn" or "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    return "forkserver"


def worker_context(modules: Iterable[str] = ()) -> multiprocessing.context.BaseContext:
    """The multiprocessing context forecast workers start from; with a fork server, it is
    started now (if it is not running yet) with ``modules`` preloaded. Returns at once: the
    server imports in the background and forks the first worker once it is done."""
    if start_method() == "spawn":
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    from multiprocessing import forkserver

    if not server_running():
        context.set_forkserver_preload(["tsrate.robustness.forecast.worker_preload"])
        # the server forks: no thread may run in it, and pyarrow's jemalloc starts one
        with (
            environment(
                **{PRELOAD: ",".join(sorted(set(modules)))},
                JE_ARROW_MALLOC_CONF="background_thread:false",
            ),
            single_threaded_children(),
        ):
            forkserver.ensure_running()
    return context


def server_running() -> bool:
    """Whether this process's fork server is running."""
    from multiprocessing import forkserver

    pid = forkserver._forkserver._forkserver_pid
    return pid is not None and alive(pid)


def system_modules(system_ids: Iterable[str]) -> list[str]:
    """The implementation modules of ``system_ids`` (the systems seed), unknown ones left out."""
    from tsrate.systems.registry import load_systems_seed

    seed = load_systems_seed().set_index("system_id")["implementation"]
    return sorted({seed[s].partition(":")[0] for s in system_ids if s in seed.index and seed[s]})


def computes_everything(warehouse: str | os.PathLike, force: bool) -> bool:
    """Whether a run will compute every forecast: ``force``, or no partition is stored yet
    (a new warehouse)."""
    if force:
        return True
    from tsrate.platform.warehouse import connect

    with connect(warehouse) as con:
        table = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'raw' and table_name = 'forecast_partitions'"
        ).fetchone()[0]
        return not (
            table and con.execute("select count(*) from raw.forecast_partitions").fetchone()[0]
        )


def start_early(system_ids: Iterable[str], warehouse: str | os.PathLike, force: bool) -> None:
    """When the run will compute every forecast here (:func:`computes_everything`), start
    the fork server now, preloading these systems' libraries: it imports while the run
    imports Prefect, ingests and plans, and the forecast workers fork from it ready. A run
    that reuses stored forecasts starts it only if its pool needs workers."""
    if start_method() == "forkserver" and not server_running():
        if computes_everything(warehouse, force):
            worker_context(system_modules(system_ids))
