"""Run the forecasts of a study, partition by partition (planned in forecast.plan).

A partition is one (system × ticker × perturbation): every window of that ticker, forecast
by that system on inputs under that perturbation. Its ``input_key`` hashes everything that
determines its forecasts (system settings, window shape, perturbation spacing, the ticker's
clean prices); a finished partition with the same key is reused by later runs, so a killed
or repeated run does no duplicate work. Each partition lands whole in one transaction (its
forecast rows plus its ``raw.forecast_partitions`` record), so a partition is either fully
stored or absent; partitions that finish within :data:`STORE_EVERY` of each other share one
transaction (:func:`tsrate.robustness.forecast.store.store_partitions`), the first of a run
alone.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import gc
import logging
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.perturbations import input_series
from tsrate.inputs.sentiment import record_run_sentiments
from tsrate.platform.progress import Progress
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.stages import pause_point
from tsrate.platform.warehouse import transaction
from tsrate.robustness.forecast import copies
from tsrate.robustness.forecast.plan import (
    LazyBatches,
    Partition,
    TickerSeries,
    load_series,
    order_partitions,
    plan_partitions,
    system_cost,
    unavailable_systems,
)
from tsrate.robustness.forecast.store import FinishedPartition, store_partitions
from tsrate.robustness.forecast.summary import (  # run_problems: callers reach it here too
    RunSummary,
    failed_windows,
    fallback_windows,
    run_problems,  # noqa: F401
)
from tsrate.robustness.forecast.workers import (
    single_threaded_children,
    system_modules,
    worker_context,
)
from tsrate.systems.base import (
    ForecastBatch,
    QuantileForecasts,
    check_fallbacks,
    check_forecasts,
    check_quantiles,
)
from tsrate.systems.failures import PartialForecasts, check_partial_forecasts
from tsrate.systems.registered import Registration, exported, from_environment, registrations
from tsrate.systems.registry import resolve_systems

log = logging.getLogger("tsrate.robustness.forecast.execute")


def new_run_id() -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


_WORKER_SYSTEMS: dict[str, object] = {}
_BUILDING = threading.Lock()


@contextlib.contextmanager
def _llm_cache_beside(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """LLM replies are cached beside the warehouse being written (``<its folder>/cache/llm``),
    unless ``TSRATE_LLM_CACHE_DIR`` says otherwise. Set through the environment so the
    workers (which build their own systems) see it too."""
    name = "TSRATE_LLM_CACHE_DIR"
    path = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchone()[0]
    if os.environ.get(name) or not path:
        yield
        return
    os.environ[name] = str(Path(path).resolve().parent / "cache" / "llm")
    try:
        yield
    finally:
        os.environ.pop(name, None)


def forecast_partition(
    study_json: str,
    companies: pd.DataFrame,
    system_id: str,
    batch: ForecastBatch,
    registered: Iterable[Registration] | None = None,
):
    """Worker entry point: build (once per process) the system and forecast one batch.

    ``registered``: the run's registered language models (:mod:`tsrate.systems.registered`),
    for a worker that does not share the run's environment (a Dask worker); the system is
    built with them exported. None: the environment has them already (the local pool's
    workers take the run's). A system is built again when its registration changes (a
    long-lived Dask worker serves runs after a ``register-llm``).

    Returns ``(forecasts, seconds, cpu_seconds, setup_seconds)``: the forecasts' wall and
    CPU seconds (this process, every thread), and the seconds this call spent building and
    warming up the system first (imports, weights: ``warm_up()``; 0 once it is built), so
    that a run's model time is the forecasting alone and its one-time setup is reported
    apart (:class:`RunSummary`).
    """
    study = Study.from_json(study_json)
    registered = None if registered is None else tuple(registered)
    known = from_environment() if registered is None else {r.system_id: r for r in registered}
    own = known.get(system_id)  # its registration, if it is a registered language model
    cache_key = f"{system_id}|{study_json}" + (f"|{own!r}" if own is not None else "")
    setup = 0.0
    # one build at a time: a worker's threads (a Dask worker's) export in turn, so none
    # builds while another one's block has restored the environment
    with _BUILDING:
        if cache_key not in _WORKER_SYSTEMS:
            began = time.perf_counter()
            _WORKER_SYSTEMS.clear()
            with contextlib.nullcontext() if registered is None else exported(registered):
                built = resolve_systems(
                    dataclasses.replace(study, systems=(system_id,)), companies
                )[system_id][0]
                warm_up = getattr(built, "warm_up", None)
                if warm_up is not None:
                    warm_up()
            _WORKER_SYSTEMS[cache_key] = built
            setup = time.perf_counter() - began
        system = _WORKER_SYSTEMS[cache_key]
    predict_quantiles = getattr(system, "predict_quantiles", None)
    started, cpu_started = time.perf_counter(), time.process_time()
    output = predict_quantiles(batch) if predict_quantiles is not None else system.predict(batch)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    quantiles, fallbacks = None, ()  # fallbacks: the last-value windows, recorded apart
    if isinstance(output, QuantileForecasts):
        quantiles = check_quantiles(system_id, batch, output.quantiles)
        fallbacks = check_fallbacks(system_id, batch, output.fallbacks)
        output = output.point
    if isinstance(output, PartialForecasts):
        checked = check_partial_forecasts(system_id, batch, output)
    else:
        checked = check_forecasts(system_id, batch, output)
    if quantiles is not None:
        checked = QuantileForecasts(checked, quantiles, fallbacks)
    return checked, seconds, cpu_seconds, setup


def start_run(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    series: dict[str, TickerSeries],
    run_id: str,
    skipped_systems: dict[str, str] | None = None,
    companies: pd.DataFrame | None = None,
) -> None:
    """Record the run, its windows, the perturbed inputs and the systems it skips (with
    the reason), in one transaction; the run joins its study (:mod:`tsrate.robustness.studies`,
    defined with ``companies``' metadata, default the companies seed)."""
    from tsrate.config import load_companies
    from tsrate.robustness.studies import attach_run, ensure_studies

    ensure_studies(con)
    windows = []
    inputs = []
    for ticker, s in series.items():
        n, d = study.context_length, study.horizon
        windows.append(
            pd.DataFrame(
                {
                    "run_id": run_id,
                    "ticker": ticker,
                    "window_index": np.arange(len(s.end_positions), dtype=np.int32),
                    "window_end_date": s.dates[s.end_positions],
                    "context_start_date": s.dates[s.end_positions - n + 1],
                    "horizon_end_date": s.dates[s.end_positions + d],
                }
            )
        )
        for perturbation_id in study.perturbations:
            values, mask = input_series(s.clean, perturbation_id, n, study.perturbation_phase)
            inputs.append(
                pd.DataFrame(
                    {
                        "run_id": run_id,
                        "ticker": ticker,
                        "perturbation_id": perturbation_id,
                        "price_date": s.dates,
                        "position": np.arange(len(s.dates), dtype=np.int32),
                        "clean_value": s.clean,
                        "input_value": values,
                        "is_perturbed": mask,
                    }
                )
            )
    window_frame = pd.concat(windows, ignore_index=True)
    input_frame = pd.concat(inputs, ignore_index=True)
    with transaction(con):
        con.execute(
            "insert into raw.runs (run_id, started_at, finished_at, status, study_hash, study, "
            "tickers, systems, perturbations, study_start, study_end, context_length, horizon, "
            "stride, perturbation_phase, message) values ($run_id, now()::timestamp, null, "
            "'running', $hash, $study, $tickers, $systems, $perturbations, $start, $end, $n, $d, "
            "$stride, $phase, null)",
            {
                "run_id": run_id,
                "hash": study.study_hash,
                "study": study.to_json(),
                "tickers": list(study.tickers),
                "systems": list(study.systems),
                "perturbations": list(study.perturbations),
                "start": study.start,
                "end": study.end,
                "n": study.context_length,
                "d": study.horizon,
                "stride": study.stride,
                "phase": study.perturbation_phase,
            },
        )
        con.register("new_windows", window_frame)
        con.register("new_inputs", input_frame)
        con.execute("insert into raw.windows select * from new_windows")
        con.execute("insert into raw.perturbed_inputs select * from new_inputs")
        con.unregister("new_windows")
        con.unregister("new_inputs")
        attach_run(con, run_id, study, load_companies() if companies is None else companies)
        if skipped_systems:
            con.executemany(
                "insert into raw.run_skipped_systems values (?, ?, ?, now()::timestamp)",
                [(run_id, system, reason) for system, reason in sorted(skipped_systems.items())],
            )


def finish_run(
    con: duckdb.DuckDBPyConnection, run_id: str, status: str, message: str | None = None
) -> None:
    con.execute(
        "update raw.runs set status = $status, finished_at = now()::timestamp, message = $message "
        "where run_id = $run_id",
        {"status": status, "message": message, "run_id": run_id},
    )


#: Computes partitions elsewhere (e.g. a Dask cluster, see tsrate.robustness.forecast.distributed): called with
#: (study JSON, companies, partitions to compute, their batches), it yields each partition with
#: its (forecasts array [windows × horizon], seconds) as it finishes, in any order.
PartitionExecutor = Callable[
    [str, pd.DataFrame, list[Partition], Mapping[Partition, ForecastBatch]],
    Iterable[tuple[Partition, tuple[np.ndarray, float]]],
]

#: Partitions handed to the local process pool at a time, per worker. Each in-flight
#: partition holds its batch (contexts and clean futures) in the parent and in the queue.
IN_FLIGHT_PER_WORKER = 4

#: Computed partitions stored in one transaction at most (the pool path stores what has
#: finished once the oldest has waited :data:`STORE_EVERY`; this bounds one commit's size).
MAX_PARTITIONS_PER_COMMIT = 32

#: Seconds a finished partition may wait for others before the pool path stores it (with
#: whatever else finished meanwhile): a commit costs the parent about 5 ms of CPU that the
#: workers share, and on 2 workers results arrive one at a time. A stopped run (Ctrl-C,
#: SIGTERM, a failed partition) still stores what finished; only a killed one loses these.
STORE_EVERY = 1.0


def init_worker(parent_pid: int, environ: dict[str, str]) -> None:
    """Worker initializer: take the parent's environment (a worker forked from the fork
    server has the server's, which may be older: :mod:`tsrate.robustness.forecast.workers`),
    be killed by the kernel when the parent dies (Linux), so a SIGKILLed run leaves no
    forecast worker behind, and exit now if the parent is gone already."""
    from tsrate.platform.dbt_child import die_with_parent as _die
    from tsrate.platform.lifelines import alive, watch_parent

    os.environ.clear()
    os.environ.update(environ)
    if os.getppid() == parent_pid:  # spawned: the kernel kills it when the run's process dies
        _die(parent_pid)
    else:  # forked by the fork server, which outlives the run's process while workers live
        _die(None)
        watch_parent(parent_pid)
    if not alive(parent_pid):
        os._exit(1)
    atexit.register(_exit_without_teardown)  # registered first: runs after every other one


def _exit_without_teardown() -> None:
    """A worker's last step: flush and leave. Every result went back through the pool's
    queue before the worker got its stop signal; the interpreter's teardown of torch and
    the systems' modules only cost about a second that the run waited for."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _stop_resource_tracker() -> None:
    """Stop multiprocessing's resource tracker, which the pool started and which would
    otherwise live as long as this process (and outlive it by seconds if it is killed),
    unless a semaphore of this process is still registered with it.

    A tracker that stops unlinks every semaphore still registered with it and warns that
    they leaked; their owners (another component's queues, a Dask nanny's, a pool an
    abandoned generator holds) then fail to unlink them at exit (``sem_unlink``:
    FileNotFoundError). Garbage is collected first if any is alive: the semaphores that only
    garbage holds (queues in reference cycles) are released the normal way."""
    from multiprocessing import resource_tracker

    if live_semaphores():
        gc.collect()
        if live_semaphores():
            return  # the tracker ends with this process, as it does without a pool
    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        with contextlib.suppress(Exception):
            stop()


def live_semaphores() -> int:
    """How many named semaphores this process made are alive (the locks and queues of a
    non-fork start method), each with a finalizer that unlinks and unregisters it."""
    from multiprocessing import synchronize, util

    cleanup = synchronize.SemLock._cleanup
    return sum(
        getattr(f, "_callback", None) is cleanup for f in [*util._finalizer_registry.values()]
    )


def _fork_server_children(pool: concurrent.futures.ProcessPoolExecutor) -> list[int]:
    """The processes this process's fork server forked, when ``pool`` forks its workers
    there (Linux ``/proc``; none elsewhere): the forecast workers of this process's pool,
    one pool at a time, those it has not recorded yet included."""
    from multiprocessing import forkserver

    context, server = getattr(pool, "_mp_context", None), forkserver._forkserver._forkserver_pid
    if context is None or context.get_start_method() != "forkserver" or server is None:
        return []
    children: list[int] = []
    for task in Path(f"/proc/{server}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            children += [int(pid) for pid in task.read_text().split()]
    return children


def _kill_pool(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill a process pool's workers at once and drop its queued work.

    A worker killed while it was sending a result leaves half a message in the results
    pipe: the pool's manager thread then waits forever for the rest (this process holds the
    pipe's other write end, so no end-of-file comes), and the interpreter's exit joins that
    thread, so a stopped run printed its message and never exited. Once the workers are
    dead, this closes our write end, so the thread reads end-of-file and ends.

    A stop while a worker was being forked leaves a worker the pool never recorded (the
    fork server forks it, often after this function has looked, and the pool never reads
    its pid): it took the pool's work, blocked sending a result nobody reads, and the
    pool's feeder thread then waited forever to write to it, so the run never exited
    either. While the manager thread waits, the fork server's children are killed too
    (:func:`_fork_server_children`)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)  # shutdown() below forgets it
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=2)
    if manager is None or results is None:
        return
    manager.join(timeout=1)
    deadline = time.monotonic() + 5
    while manager.is_alive() and time.monotonic() < deadline:
        for pid in _fork_server_children(pool):  # forked after the pool stopped looking
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            results._writer.close()
        manager.join(timeout=0.2)


def run_forecasts(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    companies: pd.DataFrame,
    run_id: str | None = None,
    force: bool = False,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
    executor: PartitionExecutor | None = None,
) -> RunSummary:
    """Forecast every partition of the study, reusing finished ones unless ``force``.

    Partitions are computed by ``executor`` when given, else by a local process pool of
    ``workers``; either way each lands in the warehouse in its own transaction.
    """
    # the language models registered under their own id reach the workers as the cache does
    with _llm_cache_beside(con), exported(registrations(con)):
        return _run_forecasts(con, study, companies, run_id, force, workers, progress, executor)


def _run_forecasts(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    companies: pd.DataFrame,
    run_id: str | None,
    force: bool,
    workers: int | None,
    progress: Callable[[str], None] | None,
    executor: PartitionExecutor | None,
) -> RunSummary:
    create_raw_tables(con)  # a forecast run is a writing edge
    say = progress or log.info
    started = time.perf_counter()
    skipped = unavailable_systems(study, companies)
    runnable = tuple(s for s in study.systems if s not in skipped)
    if not runnable:
        raise TsrateError(
            "none of the run's systems can run here: "
            + "; ".join(f"{s}: {reason}" for s, reason in skipped.items())
        )
    systems = resolve_systems(dataclasses.replace(study, systems=runnable), companies)
    for system_id, reason in skipped.items():
        say(f"skipping system {system_id!r}: {reason}")
    series = load_series(con, study)
    partitions = plan_partitions(study, series, systems)
    run_id = run_id or new_run_id()
    start_run(con, study, series, run_id, skipped, companies)
    record_run_sentiments(con, study, series, run_id, say)  # P6's sentiment labels, if any
    summary = RunSummary(run_id, partitions=len(partitions), skipped_systems=skipped)

    finished = dict(
        con.execute(
            "select input_key, arg_max(partition_key, finished_at) from raw.forecast_partitions group by input_key"
        ).fetchall()
    )
    todo = []
    reused_keys = []
    for partition in partitions:
        if not force and partition.input_key in finished:
            reused_keys.append(finished[partition.input_key])
        else:
            todo.append(partition)
    if reused_keys:
        with transaction(con):
            con.executemany(
                "insert into raw.run_partitions values (?, ?, true) on conflict do nothing",
                [(run_id, key) for key in reused_keys],
            )
    summary.reused = len(reused_keys)
    say(
        f"run {run_id}: {len(partitions)} partitions "
        f"({len(series)} tickers × systems {list(systems)} × {list(study.perturbations)}); "
        f"{summary.reused} reused, {len(todo)} to compute"
    )

    for system_id in sorted({p.system_id for p in todo}):
        prepare = getattr(systems[system_id][0], "prepare", None)
        if prepare is not None:  # train or load once here, so parallel workers only load
            prepare(say)
        register = getattr(systems[system_id][0], "register_checkpoint", None)
        if register is not None:  # here, in the process owning the warehouse connection
            with transaction(con):
                register(con)

    todo = order_partitions(todo, systems)
    study_json = study.to_json()
    batches = LazyBatches(study, series, todo)
    workers = max(1, workers or os.cpu_count() or 1)
    progress_bar = Progress(
        [p.system_id for p in todo],
        say,
        prior={s: system_cost(s, systems[s][0]) for s in systems},  # unseen systems' cost
        # the pool's workers hold partitions under way (a serial run or an executor: unknown)
        parallel=workers if executor is None and workers > 1 and len(todo) > 1 else None,
    )

    pending: list[FinishedPartition] = []  # computed, not yet stored (the pool path)
    store_by = [0.0]  # when the oldest pending partition is to be stored (time.monotonic)

    def store_pending() -> None:
        """Store what has finished, in one transaction, then count and report it."""
        if not pending:
            return
        rows = store_partitions(con, run_id, pending)
        finished_now = []
        for entry, stored in zip(pending, rows, strict=True):
            partition, seconds = entry.partition, entry.seconds
            summary.forecast_rows += stored
            summary.computed += 1
            if summary.computed == 1:
                pause_point("inference")  # test hook: one partition stored, the rest not yet
            system_id = partition.system_id
            summary.per_system_seconds[system_id] = (
                summary.per_system_seconds.get(system_id, 0.0) + seconds
            )
            summary.per_system_cpu_seconds[system_id] = summary.per_system_cpu_seconds.get(
                system_id, 0.0
            ) + (seconds if entry.cpu_seconds is None else entry.cpu_seconds)
            if entry.setup_seconds:
                summary.per_system_setup_seconds[system_id] = (
                    summary.per_system_setup_seconds.get(system_id, 0.0) + entry.setup_seconds
                )
            finished_now.append(
                (
                    partition.system_id,
                    f"{partition.system_id} {partition.ticker} {partition.perturbation_id}: "
                    f"{batches[partition].n_windows} windows in {seconds:.1f}s",
                    seconds,
                )
            )
            batches.release(partition)
        pending.clear()
        progress_bar.update_many(finished_now)  # one ETA for what was stored together

    def record(partition: Partition, result: tuple, now: bool = True) -> None:
        """Keep one computed partition (``result``: :func:`forecast_partition`'s, or a
        partition file's ``(forecasts, seconds)``); store it at once (``now``), else with
        what finishes beside it (the caller stores the rest when no other result is waiting)."""
        forecasts_array, seconds, *timing = result
        cpu_seconds, setup_seconds = (timing[0], timing[1]) if timing else (None, 0.0)
        # a forced recompute appends a new partition beside the old one (raw is append-only)
        key = partition.input_key
        if key in finished:
            key = f"{key}-{run_id}"
        batch = batches[partition]
        n_copied = copies.partition_copies(batch, forecasts_array, systems[partition.system_id][0])
        pending.append(
            FinishedPartition(
                partition,
                key,
                batch.window_end_dates,
                forecasts_array,
                seconds,
                cpu_seconds,
                setup_seconds,
                n_copied_windows=n_copied,
            )
        )
        if len(pending) == 1:
            store_by[0] = time.monotonic() + STORE_EVERY
        # the run's first partition alone (it shows the run is writing), then in batches
        if now or summary.computed == 0 or len(pending) >= MAX_PARTITIONS_PER_COMMIT:
            store_pending()

    if executor is not None and todo:
        for partition, result in executor(study_json, companies, todo, batches):
            record(partition, result)
    elif workers == 1 or len(todo) <= 1:
        for partition in todo:
            record(
                partition,
                forecast_partition(study_json, companies, partition.system_id, batches[partition]),
            )
    elif todo:
        # forked from a server that imported the systems' libraries once (started early by
        # `tsrate run`), or spawned: tsrate.robustness.forecast.workers
        context = worker_context(system_modules(p.system_id for p in todo))
        with (
            single_threaded_children(),
            concurrent.futures.ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=init_worker,
                initargs=(os.getpid(), dict(os.environ)),
            ) as pool,
        ):
            # a bounded number of partitions in flight: each holds its batch until stored
            waiting = iter(todo)
            in_flight: dict[concurrent.futures.Future, Partition] = {}

            def submit_next() -> None:
                partition = next(waiting, None)
                if partition is not None:
                    future = pool.submit(
                        forecast_partition,
                        study_json,
                        companies,
                        partition.system_id,
                        batches[partition],
                    )
                    in_flight[future] = partition

            try:
                for _ in range(workers * IN_FLIGHT_PER_WORKER):
                    submit_next()
                while in_flight:
                    # with results kept, wait until they are due (STORE_EVERY), then store
                    # them with whatever finished meanwhile
                    done, _ = concurrent.futures.wait(
                        in_flight,
                        timeout=max(0.0, store_by[0] - time.monotonic()) if pending else None,
                        return_when=concurrent.futures.FIRST_COMPLETED,
                    )
                    if not done:
                        store_pending()
                        continue
                    for future in done:
                        partition = in_flight.pop(future)
                        submit_next()  # the worker gets its next partition before we store
                        record(partition, future.result(), now=False)
                store_pending()
            except BaseException:
                # stop now (Ctrl-C, SIGTERM, a failed partition): kill the workers rather
                # than wait for the partitions they hold; nothing of theirs is stored yet
                _kill_pool(pool)
                if pending:  # what finished before the stop is kept for the next run
                    with contextlib.suppress(Exception):
                        store_pending()
                raise
        _stop_resource_tracker()
    summary.failed_windows = failed_windows(con, run_id)
    summary.fallback_windows = fallback_windows(con, run_id)
    summary.copied_windows = copies.copied_window_counts(con, run_id)
    summary.seconds = time.perf_counter() - started
    return summary
