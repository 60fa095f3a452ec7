"""One writer at a time on the live warehouse: a file lock on this machine, a Prefect slot across workers.

DuckDB refuses a second read-write process with a terse lock error, often minutes into a run.
tsrate takes its own lock first, so a second writer learns at once who holds the warehouse
(pid, host, command, since when) and either fails fast or waits, as its caller chose.

* :func:`writer_lock` — an exclusive ``flock`` on ``<warehouse>.lock`` beside the DuckDB file.
  The kernel drops it when the holder dies (even by SIGKILL), so a crash never leaves a stale
  lock. Re-entrant within one process (the pipeline holds it while its sub-flows take it again).
* :func:`prefect_writer_slot` — one slot of the Prefect global concurrency limit
  ``tsrate-warehouse-writer`` (limit 1), so runs on different workers queue in Prefect's UI.
  ``tsrate serve`` creates the limit; where it does not exist (a plain local run) the file lock
  alone guards the warehouse. Slots are leased and renewed while the holder lives, so a killed
  holder frees its slot when the lease runs out (``WRITER_LEASE_SECONDS``).
* :func:`warehouse_writer` — both, file lock first: use it around every warehouse write.
* :func:`announce` / :func:`writer_status` — the holder says what it is doing now (a phase,
  a progress line with its ETA) in the lock file, which stays a small JSON object (pid, host,
  since, command, activity, updated); ``tsrate status``, ``tsrate runs`` and every "the
  warehouse is busy" error read it there, so a second process learns what the writer is doing
  without opening the warehouse (DuckDB allows no reader beside a read-write process).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tsrate import TsrateError

try:  # POSIX; elsewhere the Prefect slot and DuckDB's own lock remain
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("tsrate.platform.locking")

WRITER_LIMIT = "tsrate-warehouse-writer"
WRITER_LEASE_SECONDS = 60.0

_guard = threading.Lock()
_held_files: dict[str, int] = {}  # resolved lock path -> its open descriptor (the flock)
_held_slots: set[str] = set()  # the concurrency limits whose slot this process holds
_held_info: dict[str, dict[str, str]] = {}  # resolved lock path -> what its file says


class WarehouseBusy(TsrateError):
    """Another process holds the warehouse writer lock."""


def lock_path(warehouse: str | Path) -> Path:
    """``<warehouse>.lock``: the lock file beside the DuckDB file (``tsrate.duckdb.lock``)."""
    warehouse = Path(warehouse)
    return warehouse.with_name(warehouse.name + ".lock")


#: seconds a writer keeps trying when only readers hold the lock's shared side: `tsrate
#: status` probes it for an instant (:func:`writer_status`), which must not refuse a writer
#: that asked not to wait (``--lock-timeout 0``); a reader that stays (a ``--live`` query)
#: still refuses it, after this
READER_GRACE_S = 0.5
#: seconds between those tries
READER_POLL_S = 0.01
#: who holds the lock when only readers do
READERS = "a reader of the live warehouse (`tsrate query --live`)"

#: the longest activity text kept in the lock file
ACTIVITY_CHARS = 300


def holder_info(fd: int, tries: int = 5) -> dict | None:
    """What the lock file open on ``fd`` says about its holder (see :func:`writer_lock`), or
    None when it says nothing (no writer, or one that has not written it yet). The holder
    rewrites it in place while readers read: a torn read is retried."""
    for attempt in range(tries):
        try:
            text = os.pread(fd, 8192, 0).decode(errors="replace").strip()
        except OSError:
            return None
        if not text:
            return None
        try:
            info = json.loads(text)
        except ValueError:
            if attempt + 1 < tries:
                time.sleep(0.02)
            continue
        return info if isinstance(info, dict) else None
    return None


def describe_holder(info: dict | None) -> str:
    """A holder's lock-file text (:func:`holder_info`, :func:`writer_status`) in words: pid,
    host, since when, its command and what it is doing now; "another process" without one."""
    if not info or any(key not in info for key in ("pid", "host", "since", "command")):
        return "another process"
    text = f"pid {info['pid']} on {info['host']} since {info['since']} ({info['command']})"
    if info.get("activity"):
        text += f", now: {info['activity']}"
    return text


def lock_holder(fd: int) -> str:
    """The holder of the lock file open on ``fd`` in words (:func:`describe_holder`)."""
    return describe_holder(holder_info(fd))


def _readers_only(fd: int) -> bool:
    """Whether only readers keep the exclusive lock from ``fd``: its shared side is free (a
    writer holds the exclusive side, which the shared side waits for too). Tried for an
    instant and let go again."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _write_info(fd: int, info: dict) -> None:
    data = json.dumps(info).encode()
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))  # a shorter text than before: cut the old tail


def announce(activity: str, progress: dict | None = None) -> None:
    """Say in the lock file of every warehouse this process writes what it is doing now (a
    phase, a progress line) and, for a progress line, its counts (``done``, ``total``,
    ``eta_seconds``: a monitor's numbers); readers show it (:func:`writer_status`). A no-op
    where this process holds no writer lock."""
    activity = activity[:ACTIVITY_CHARS]
    with _guard:
        for key, fd in _held_files.items():
            info = _held_info.get(key)
            if info is None or (info.get("activity"), info.get("progress")) == (
                activity,
                progress,
            ):
                continue
            info["activity"] = activity
            if progress:
                info["progress"] = dict(progress)
            else:
                info.pop("progress", None)
            info["updated"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            try:
                _write_info(fd, info)
            except OSError:  # a full disk must not stop the write it describes
                log.debug("could not write the activity to %s", key, exc_info=True)


def writer_status(warehouse: str | Path) -> dict | None:
    """Who is writing ``warehouse`` now and what they are doing (the lock file's JSON: pid,
    host, since, command, and once said, activity and updated), or None when nobody is.

    Reads the lock file without taking the lock; only where the file names a holder does it
    check that the lock is really held (a holder killed outright leaves its text behind), by
    trying the lock's shared side for an instant."""
    path = lock_path(warehouse)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        info = holder_info(fd)
        if info is None or fcntl is None:
            return info
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return info  # held: the text is the holder's
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None  # left by a holder that died
    finally:
        os.close(fd)


def waited_text(seconds: float) -> str:
    """A wait in words: whole seconds (``41s``), tenths below ten seconds (``2.5s``)."""
    return f"{seconds:.0f}s" if seconds >= 10 else f"{round(seconds, 1):g}s"


#: the longest command text kept in the lock file
COMMAND_CHARS = 300


def holder_command(argv: list[str] | None = None) -> str:
    """What the lock file names as its holder's command: the command line (``tsrate run
    --lock-timeout 3600``), cut to :data:`COMMAND_CHARS`; in a Prefect flow run, the flow
    run too (:func:`flow_run_words`), alone where the command line is Prefect's engine (a run
    of ``tsrate serve``'s deployments or a worker's names only ``.../prefect/engine.py``)."""
    argv = sys.argv if argv is None else argv
    return command_words(argv, flow_run_words())


def command_words(argv: list[str], flow_run: str | None) -> str:
    """:func:`holder_command` for a given command line and flow run (None: not in one)."""
    command = " ".join(argv) or sys.executable
    if flow_run is not None:
        command = flow_run if prefect_engine(argv) else f"{command}; {flow_run}"
    return command[:COMMAND_CHARS]


def prefect_engine(argv: list[str]) -> bool:
    """Whether the command line is Prefect's engine running a flow run (``python -m
    prefect.engine``: ``sys.argv[0]`` is its file, or the module's name)."""
    first = Path(argv[0]) if argv else Path()
    return str(first) == "prefect.engine" or (
        first.name == "engine.py" and first.parent.name == "prefect"
    )


def flow_run_words() -> str | None:
    """The Prefect flow run this process is in, in words, or None outside one: ``Prefect
    flow run 'puzzling-sawfly' of deployment 'tsrate-pipeline/tsrate-weekly'`` (``of flow
    'tsrate-pipeline'`` when no deployment started it). The deployment's name is asked of
    the API; where that fails the flow's name stands in."""
    from tsrate.platform.orchestration import flow_run_context

    context = flow_run_context()
    if context is None or context.flow_run is None:
        return None
    flow = context.flow.name if context.flow is not None else None
    deployment = None
    if context.flow_run.deployment_id is not None:
        try:
            from prefect.runtime import deployment as runtime_deployment

            deployment = runtime_deployment.name
        except Exception:  # noqa: BLE001 - the lock must not fail on a name
            log.debug("could not read the flow run's deployment name", exc_info=True)
    return flow_run_text(context.flow_run.name, flow, deployment)


def flow_run_text(run: str, flow: str | None, deployment: str | None) -> str:
    """A flow run in words (:func:`flow_run_words`), from its name, its flow's and its
    deployment's (either may be None)."""
    if deployment and flow:
        return f"Prefect flow run '{run}' of deployment '{flow}/{deployment}'"
    if flow:
        return f"Prefect flow run '{run}' of flow '{flow}'"
    return f"Prefect flow run '{run}'"


@contextlib.contextmanager
def writer_lock(
    warehouse: str | Path, timeout: float = 0.0, say: Callable[[str], None] | None = None
) -> Iterator[Path]:
    """Hold the exclusive writer lock of ``warehouse`` for the block.

    ``timeout``: seconds to wait for a busy lock (0: fail at once) before raising
    :class:`WarehouseBusy`, whose message names the holder. Where only readers hold the lock
    (its shared side: `tsrate status`'s instant probe, a ``--live`` query), the writer first
    tries again for up to :data:`READER_GRACE_S` seconds, whatever the timeout, so an instant
    probe never refuses it; a reader that stays longer counts as a holder.
    """
    path = lock_path(warehouse).resolve()
    key = str(path)
    with _guard:
        reentered = key in _held_files
    if reentered:  # this process holds it already: its outer holder alone releases it
        yield path
        return
    if fcntl is None:  # pragma: no cover - Windows
        yield path
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    command = holder_command()  # before the lock: nothing may fail between taking and holding
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    started = time.monotonic()
    deadline = started + max(0.0, timeout)
    grace_end: float | None = None  # set when readers alone are first found in the way
    announced = False
    readers = False  # who was in the way last: readers alone, or a writer
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                readers = _readers_only(fd)
                if readers:
                    if grace_end is None:
                        grace_end = time.monotonic() + READER_GRACE_S
                    if time.monotonic() < grace_end:
                        time.sleep(READER_POLL_S)
                        continue
                holder = READERS if readers else lock_holder(fd)
                if time.monotonic() >= deadline:
                    waited = f" after waiting {timeout:g}s" if timeout > 0 else ""
                    doing = "read" if readers else "written"
                    rule = "no writer beside a live reader" if readers else "one writer at a time"
                    # the wait is said apart from the holder ("pid 7, now: forecast"), and a
                    # user who passed --lock-timeout is told to pass a longer one
                    serve = "`tsrate serve`: writer_lock_timeout_s"
                    hint = (
                        f"Gave up{waited}: wait for it to finish or pass a longer "
                        f"--lock-timeout; {serve}"
                        if waited
                        else f"Wait for it to finish (or pass --lock-timeout SECONDS to wait; {serve})"
                    )
                    raise WarehouseBusy(
                        f"the warehouse {Path(warehouse)} is being {doing} by {holder}; "
                        f"{rule}. {hint}; readers use the published snapshot. Lock file: {path}"
                    ) from None
                if not announced:
                    (say or log.info)(
                        f"waiting up to {timeout:g}s for the warehouse writer lock held by {holder}"
                    )
                    announced = True
                time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))
        if announced:  # it said it waits: it says when the wait is over too (cron, serve)
            other = "the live reader" if readers else "the other writer"
            (say or log.info)(
                f"got the warehouse writer lock after {waited_text(time.monotonic() - started)}; "
                f"{other} finished"
            )
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "command": command,
        }
        with _guard:
            _write_info(fd, info)
            _held_files[key] = fd
            _held_info[key] = info
    except BaseException:
        os.close(fd)  # closing the file releases the lock: a failed start leaves it free
        raise
    try:
        yield path
    finally:
        with _guard:
            _held_files.pop(key, None)
            _held_info.pop(key, None)
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the descriptor releases the flock


def ensure_writer_limit(release_held: bool = False) -> None:
    """Create (or reset to 1) the Prefect global concurrency limit ``tsrate-warehouse-writer``.

    ``release_held``: also mark its slot free. Only for a Prefect server that has just been
    started for this process (``tsrate serve`` without ``PREFECT_API_URL``): a server keeps
    the slot's count in its database but its leases in memory, so a run killed while it held
    the slot (with the serve that owned the server) leaves the slot taken after a restart,
    with no lease left to expire, and every later run would wait for it in vain. A running
    server expires a dead holder's lease itself (:data:`WRITER_LEASE_SECONDS`)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    with get_client(sync_client=True) as client:
        client.upsert_global_concurrency_limit_by_name(WRITER_LIMIT, 1)
        if release_held:
            held = client.read_global_concurrency_limit_by_name(WRITER_LIMIT).active_slots
            if held:
                log.warning(
                    "the warehouse writer slot was still taken from before this server "
                    "started (a run killed while writing): released"
                )
                client.update_global_concurrency_limit(
                    WRITER_LIMIT, GlobalConcurrencyLimitUpdate(active_slots=0)
                )


def _writer_limit_exists() -> bool:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(WRITER_LIMIT)
        except ObjectNotFound:
            return False
    return True


@contextlib.contextmanager
def prefect_writer_slot(timeout: float | None = None) -> Iterator[bool]:
    """Hold the one slot of ``tsrate-warehouse-writer`` when that limit exists; yield whether held.

    Only inside a Prefect flow run (outside one there is no API to ask). Re-entrant.
    """
    from tsrate.platform.orchestration import flow_run_context

    with _guard:
        reentered = WRITER_LIMIT in _held_slots
    if reentered:  # this process holds it already: its outer holder alone frees it
        yield True
        return
    if flow_run_context() is None or not _writer_limit_exists():
        yield False
        return
    from prefect.concurrency.sync import concurrency

    with concurrency(
        WRITER_LIMIT,
        occupy=1,
        timeout_seconds=timeout,
        lease_duration=WRITER_LEASE_SECONDS,
        strict=True,
        # a missed lease renewal (an API hiccup) must not abort a long write: the file lock
        # still guards the warehouse on this machine
        raise_on_lease_renewal_failure=False,
    ):
        with _guard:
            _held_slots.add(WRITER_LIMIT)
        try:
            yield True
        finally:
            with _guard:
                _held_slots.discard(WRITER_LIMIT)


@contextlib.contextmanager
def warehouse_writer(
    warehouse: str | Path, timeout: float = 0.0, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """The file lock, then the Prefect slot: wrap every write to the live warehouse in this.

    In a run that ``tsrate serve`` started, first tie this process to the serve: a serve
    killed outright takes its writing runs with it (:func:`tsrate.platform.lifelines.stop_with_serve`)."""
    from tsrate.platform.lifelines import stop_with_serve

    stop_with_serve()
    with writer_lock(warehouse, timeout, say):
        with prefect_writer_slot(timeout=max(timeout, WRITER_LEASE_SECONDS * 2)):
            yield
