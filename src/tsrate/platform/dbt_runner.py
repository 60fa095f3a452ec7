"""Run dbt against the warehouse in a child process.

A child process is the surest way to honour DuckDB's single-writer rule: when dbt exits,
the file is released, whatever the adapter kept open (the child also closes dbt-duckdb's
``keep_open`` connection itself). Output is streamed line by line: the build's summary
lines to the caller (a Prefect logger in flows), dbt's full log to a file.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tsrate import TsrateError
from tsrate.config import project_dir, warehouse_path
from tsrate.platform.dbt_child import CRASHED, PROFILE_WAREHOUSE, PROGRESS, RELEASED, SUMMARY
from tsrate.platform.dbt_docs import DOCS
from tsrate.platform.progress import announce
from tsrate.platform.stages import dbt_line_hook

log = logging.getLogger("tsrate.platform.dbt_runner")


class DbtError(TsrateError):
    """dbt exited non-zero; the message carries the tail of its output. ``crash``: what dbt
    itself raised during a build (:data:`tsrate.platform.dbt_child.CRASHED`), else None."""

    crash: str | None = None


class WarehouseInUse(DbtError):
    """dbt could not open the warehouse: another process holds DuckDB's lock on it (one
    line, its PID kept: :func:`tsrate.platform.warehouse.in_use_message`)."""


#: DuckDB's words when another process holds the file: the child's summary line that has
#: them is not echoed; the build's error says it in one line (:class:`WarehouseInUse`)
LOCK_FAILURE = "Could not set lock on file"
_LOCKED_FILE = re.compile(r'Could not set lock on file "([^"]+)"')


def verbose_default() -> bool:
    """``tsrate --verbose`` (env ``TSRATE_VERBOSE=1``): stream dbt's whole log live."""
    return os.environ.get("TSRATE_VERBOSE", "") not in ("", "0", "false")


def log_folder(warehouse: Path | None = None) -> Path:
    """``<warehouse folder>/logs``: where the full dbt log of each build is written."""
    return Path(warehouse or warehouse_path()).resolve().parent / "logs"


def new_log_file(folder: Path, name: str, now: float | None = None) -> Path:
    """A new, empty log file ``<folder>/<name>-<local time to the millisecond>.log``, made
    with exclusive creation, so two builds started in the same instant (two warehouses in
    one folder, two processes) never write one file: the later gets ``-2``, ``-3``, ...
    ``now``: the time (seconds since the epoch; default: now)."""
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time() if now is None else now
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    path, n = folder / f"{name}-{stamp}.log", 1
    while True:
        try:
            path.open("x", encoding="utf-8").close()
        except FileExistsError:
            n += 1
            path = folder / f"{name}-{stamp}-{n}.log"
        else:
            return path


def target_folder(target_path: Path | str | None = None) -> Path:
    """dbt's target folder, absolute: ``target_path``, else env ``DBT_TARGET_PATH``, else the
    project's ``target/`` (a relative one is the project's, as dbt reads it)."""
    chosen = target_path or os.environ.get("DBT_TARGET_PATH") or "target"
    return (project_dir() / chosen).resolve()


def _command(
    args: Sequence[str],
    dbt_vars: dict | None,
    warehouse: Path | None,
    target_path: Path | None,
    env_vars: dict[str, str] | None,
) -> tuple[list[str], dict[str, str], Path]:
    """The dbt child's command line, environment and working folder.

    The child runs in the warehouse's folder and profiles.yml names the file by its name
    alone (:data:`PROFILE_WAREHOUSE`): dbt hashes the profile's ``path`` and ``database``
    into its partial-parse state, so with an absolute path every other warehouse would
    cost a full parse (seconds to a minute); with the name, every warehouse called
    ``tsrate.duckdb`` keeps the parse of the last build in the same target folder. Every
    other path the child gets is absolute."""
    project = project_dir()
    warehouse = Path(warehouse or warehouse_path()).resolve()
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["TSRATE_WAREHOUSE"] = str(warehouse)  # what tsrate's own code in the child reads
    env[PROFILE_WAREHOUSE] = warehouse.name
    env["TSRATE_PROJECT_DIR"] = str(project)
    env["DBT_PROFILES_DIR"] = str(project)
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    # dbt's own log file at info: its debug lines (every statement and adapter call) were
    # about 6 % of a build's node time; DBT_LOG_LEVEL_FILE=debug brings them back
    env.setdefault("DBT_LOG_LEVEL_FILE", "info")
    env.update(env_vars or {})
    env["DBT_TARGET_PATH"] = str(target_folder(target_path))
    env["TSRATE_DBT_PARENT_PID"] = str(os.getpid())  # the child dies with us (crash safety)
    command = [
        sys.executable,
        "-m",
        "tsrate.platform.dbt_child",
        *args,
        "--project-dir",
        str(project),
    ]
    command += ["--no-use-colors", "--no-use-colors-file"]  # no ANSI codes in any log
    if target_path is not None and "DBT_LOG_PATH" not in (env_vars or {}):
        command += ["--log-path", str(target_folder(target_path) / "logs")]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    return command, env, warehouse.parent


def _start(command: list[str], env: dict[str, str], cwd: Path, stdin: int | None = None):
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )


#: Marts of an older release that are no longer models: pipeline steps that moved to the
#: intermediate schema (int_wrs_scores_summed, int_perturbation_effects_aggregated,
#: int_perturbation_sets_derived). dbt never drops a table whose model is gone, so a
#: warehouse built by that release would keep publishing them with stale rows.
RETIRED_MARTS = ("wrs", "perturbation_effect_scores", "system_perturbation_sets")


def ensure_raw_schema(warehouse: Path | str | None = None) -> None:
    """Bring the raw schema up to date before dbt reads it: every raw table created when
    missing (a warehouse where a suite never ran, or written by an older release), runs
    of an older release assigned their study, and that release's retired marts dropped
    (:data:`RETIRED_MARTS`)."""
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.studies import ensure_studies

    with connect(Path(warehouse or warehouse_path()).resolve()) as con:
        create_raw_tables(con)
        ensure_studies(con)  # a warehouse of an older release: its runs join their studies
        for name in RETIRED_MARTS:
            con.execute(f"drop table if exists marts.{name}")


def run_dbt(
    args: Sequence[str],
    dbt_vars: dict | None = None,
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    target_path: Path | None = None,
    env_vars: dict[str, str] | None = None,
    log_file: Path | None = None,
    verbose: bool = True,
) -> list[str]:
    """Run ``dbt <args>`` in the project; return its output lines or raise :class:`DbtError`.

    Every line goes to ``log_file`` (when given, without colour codes); ``on_line`` gets the
    summary lines of tsrate's build always and dbt's own lines only when ``verbose``.
    ``env_vars`` reach dbt's ``env_var()`` (unlike ``--vars``, a changed value re-parses only
    the files reading it, so the partial parse survives). A ``tsrate-build`` dbt itself
    crashed in is run again once, on one thread (:func:`again_on_one_thread`).
    """
    if args and args[0] in ("build", "run", "tsrate-build"):
        ensure_raw_schema(warehouse)  # the models read raw.*, which connect() no longer creates
    run = (args, dbt_vars, warehouse, on_line, target_path)
    try:
        return _run_once(*run, env_vars, log_file, verbose)
    except DbtError as error:
        again = again_on_one_thread(error, args, env_vars, on_line)
        if again is None:
            raise
    return _run_once(*run, again, _retry_log(log_file), verbose)


def _run_once(
    args: Sequence[str],
    dbt_vars: dict | None,
    warehouse: Path | None,
    on_line: Callable[[str], None] | None,
    target_path: Path | None,
    env_vars: dict[str, str] | None,
    log_file: Path | None,
    verbose: bool,
) -> list[str]:
    command, env, cwd = _command(args, dbt_vars, warehouse, target_path, env_vars)
    started = time.perf_counter()
    file = Path(warehouse or warehouse_path()).resolve()  # the file the child opens
    return _follow(
        _start(command, env, cwd), args, on_line, log_file, verbose, started, warehouse=file
    )


#: profiles.yml's threads (default 2); 1 for a build dbt crashed in (:func:`again_on_one_thread`)
THREADS = "TSRATE_DBT_THREADS"


def again_on_one_thread(
    error: DbtError,
    args: Sequence[str],
    env_vars: dict[str, str] | None,
    on_line: Callable[[str], None] | None = None,
) -> dict[str, str] | None:
    """The env vars to build again with, on one thread, when dbt itself crashed during a
    tsrate build (``error.crash``: no model or test failed, dbt or a library in its
    process raised; seen once in thousands of builds as DuckDB and pandas errors in two of
    dbt's threads at once); None for any other failure, or one already on one thread.

    Safe to repeat: the project's tables are replaced inside each model's transaction
    (macros/materializations/table.sql), so a crashed build leaves every table whole."""
    env_vars = dict(env_vars or {})
    if not error.crash or not args or args[0] != "tsrate-build" or env_vars.get(THREADS) == "1":
        return None
    (on_line or log.warning)(
        f"dbt crashed during the build ({error.crash}); no table is half-written (each is "
        "replaced in its own transaction): building again once, on one thread"
    )
    return {**env_vars, THREADS: "1"}


def _retry_log(log_file: Path | None) -> Path | None:
    return None if log_file is None else log_file.with_name(f"{log_file.stem}-again.log")


def _follow(
    process: subprocess.Popen,
    args: Sequence[str],
    on_line: Callable[[str], None] | None,
    log_file: Path | None,
    verbose: bool,
    started: float,
    released: threading.Event | None = None,
    warehouse: Path | None = None,
) -> list[str]:
    """Stream a started dbt child's lines (see :func:`run_dbt`) until it exits;
    ``released`` is set when the child says it closed its read-write handle on the
    warehouse (:data:`tsrate.platform.dbt_child.RELEASED`); ``warehouse``: the file it
    opens, named when another process holds it and DuckDB's words do not name it."""
    say = on_line or log.info
    marker = f"{SUMMARY} {RELEASED}"
    hook = dbt_line_hook()  # tests only (tsrate.platform.stages); None otherwise
    lines: list[str] = []
    locked = ""  # the summary line saying another process holds the warehouse
    finished: set[int] = set()  # the numbers of the nodes finished (progress lines)
    finished_of = 0  # of how many nodes
    handle = None
    if log_file is not None:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handle = open(log_file, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        assert process.stdout is not None
        try:
            for line in process.stdout:
                line = line.rstrip()
                lines.append(line)
                if handle is not None:
                    handle.write(line + "\n")
                    handle.flush()
                if hook is not None:
                    hook(line)
                if released is not None and line == marker:
                    released.set()
                if line.startswith(SUMMARY) and LOCK_FAILURE in line:
                    locked = line[len(SUMMARY) :].strip()  # raised below, in one line
                elif line.startswith(SUMMARY):
                    say(line[len(SUMMARY) :].strip())
                    announce(f"dbt {line[len(SUMMARY) :].strip()}")  # for `tsrate status`
                elif line.startswith(PROGRESS):  # on screen only as dbt's own line (verbose)
                    node = line[len(PROGRESS) :].strip()  # "<index> of <total> <node>"
                    index, _of, total = (node.split() + ["", "", ""])[:3]
                    counts = None
                    if index.isdigit() and total.isdigit():
                        # dbt numbers a node when it starts, and two threads finish them out
                        # of order: count the nodes finished (a node numbered again, or
                        # another total, is a new dbt invocation: the unit tests)
                        if int(total) != finished_of or int(index) in finished:
                            finished, finished_of = set(), int(total)
                        finished.add(int(index))
                        counts = {"done": len(finished), "total": int(total)}
                    announce(f"dbt {node} done", counts)
                elif verbose and line.strip():
                    say(line)
            code = process.wait()
        except BaseException:  # Ctrl-C, SIGTERM: stop dbt now, as a SIGKILL of us would
            process.kill()
            process.wait()
            raise
    finally:
        if handle is not None:
            handle.close()
    if code != 0 and locked:
        from tsrate.platform.warehouse import in_use_message

        named = _LOCKED_FILE.search(locked)
        file: Path | str = Path(named.group(1)) if named else (warehouse or "")
        if named and not file.is_absolute() and warehouse is not None:
            file = warehouse.parent / file  # the child runs in the warehouse's folder
        raise WarehouseInUse(in_use_message(file, locked))
    if code != 0:
        summary = [line[len(SUMMARY) :].strip() for line in lines if line.startswith(SUMMARY)]
        tail = "\n".join(summary[-20:] if summary else lines[-40:])
        where = f"\nfull dbt log: {log_file}" if log_file is not None else ""
        error = DbtError(
            f"dbt {' '.join(args)} failed (exit {code}) after "
            f"{time.perf_counter() - started:.1f}s:\n{tail}{where}"
        )
        crashed = [line[len(CRASHED) :].strip() for line in summary if line.startswith(CRASHED)]
        error.crash = (crashed[-1] or "no message") if code == 2 and crashed else None
        raise error
    return lines


def core_exclusions() -> list[str]:
    """The suites' tags: `tsrate run`/`build` build the robustness core; each suite builds its own."""
    from tsrate.suites import SUITES

    return [f"tag:{suite.dbt_tag}" for suite in SUITES.values()]


#: Builds that released the warehouse before their data tests (:func:`build` with
#: ``release_early``), by warehouse: :func:`finish_build` waits for their verdict.
_PENDING: dict[str, tuple[subprocess.Popen, threading.Thread, dict]] = {}

#: Build children started ahead by :func:`prepare_build`, by (warehouse, select, target path).
_PREPARED: dict[tuple[str, str | None, str | None], tuple[subprocess.Popen, float]] = {}


def _build_args(select: str | None) -> list[str]:
    args = ["tsrate-build", "--exclude", *core_exclusions()]
    if select:
        args += ["--select", select]
    return args


def _key(warehouse: Path, select: str | None, target_path: Path | None) -> tuple:
    return (str(warehouse), select, str(target_path) if target_path is not None else None)


def prepare_build(
    warehouse: Path | None = None,
    select: str | None = None,
    target_path: Path | None = None,
) -> None:
    """Start the dbt child of a later :func:`build` now: it imports dbt and parses the
    project (seconds; no database access), then waits. ``tsrate run`` calls this before its
    forecasts, so the build that follows them starts at its first model. The child is used
    by the next :func:`build` with the same warehouse, ``select`` and ``target_path``, or
    stopped by :func:`discard_prepared` (and dies with this process in any case). A child
    already started for the same arguments and still waiting is kept (``tsrate run``
    starts it before importing Prefect and the flows; the pipeline asks again)."""
    from tsrate.platform.dbt_child import WAIT_FOR_GO

    warehouse = Path(warehouse or warehouse_path()).resolve()
    key = _key(warehouse, select, target_path)
    waiting = _PREPARED.get(key)
    if waiting is not None and waiting[0].poll() is None:
        return
    discard_prepared(key)
    command, env, cwd = _command(
        _build_args(select), None, warehouse, target_path, {WAIT_FOR_GO: "1"}
    )
    _PREPARED[key] = (_start(command, env, cwd, stdin=subprocess.PIPE), time.perf_counter())


def discard_prepared(key: tuple | None = None) -> None:
    """Stop the children :func:`prepare_build` started (``key``: only that one)."""
    for name in [key] if key is not None else list(_PREPARED):
        entry = _PREPARED.pop(name, None)
        if entry is None:
            continue
        process = entry[0]
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


def build(
    run_id: str | None = None,
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    select: str | None = None,
    target_path: Path | None = None,
    verbose: bool | None = None,
    study_id: str | None = None,
    scope: str = "study",
    release_early: bool = False,
    unit_tests: bool = True,
) -> list[str]:
    """Build and test the core models for ``run_id`` (default: the latest forecasted run).

    ``scope`` ``study`` (default): the marts rate every system of the run's study, each from
    the newest run of the study holding it (an imported system stays rated after later runs);
    ``run``: the run's own partitions only. ``study_id``: only runs of this study are
    candidates for ``run_id`` None (env ``TSRATE_STUDY_ID``, ``TSRATE_RUN_SCOPE``).

    tsrate's build (:mod:`tsrate.platform.dbt_child`): seeds, models and unit tests by ``dbt build``,
    then every selected data test's compiled SQL in one DuckDB connection, failures named.
    Suite models (their tags) are left to each suite's own build. The run id reaches dbt as
    env ``TSRATE_RUN_ID`` so dbt's partial parse is kept between runs. dbt's full log goes
    to ``<warehouse folder>/logs/dbt-build-<run>-<time>.log`` (:func:`new_log_file`);
    ``verbose`` (default: ``tsrate --verbose``) streams it.
    A child started ahead by :func:`prepare_build` for the same arguments is used when
    it is still waiting (else a new one is started).

    ``unit_tests`` False (``tsrate run``): a full build leaves dbt's unit tests to
    ``tsrate build`` and CI (:data:`tsrate.platform.dbt_child.RUN_LEAVES_UNIT_TESTS`); a
    partial build and ``TSRATE_ALWAYS_UNIT_TESTS=1`` run them all the same.

    ``release_early``: return once the models are built and the child has released the
    warehouse (it runs the data tests read-only, so the caller may read the warehouse, e.g.
    copy the marts into a snapshot, but not write it); the caller must then call
    :func:`finish_build` for the tests' verdict before it writes the warehouse or swaps
    anything in. A child that fails before that raises here, as without it.

    First brings the raw schema up to date (tables added by newer tsrate versions are
    created empty), so a warehouse written by an older version still builds. A build dbt
    itself crashed in is built again once, on one thread (:func:`again_on_one_thread`).
    """
    warehouse = Path(warehouse or warehouse_path()).resolve()
    ensure_raw_schema(warehouse)
    args = _build_args(select)
    log_file = new_log_file(log_folder(warehouse), f"dbt-build-{run_id or 'latest'}")
    verbose = verbose_default() if verbose is None else verbose
    env_vars = {
        "TSRATE_RUN_ID": run_id or "latest",
        "TSRATE_STUDY_ID": study_id or "latest",
        "TSRATE_RUN_SCOPE": scope,
        # the child reads it once the models are built (tsrate.platform.dbt_child)
        "TSRATE_RUN_LEAVES_UNIT_TESTS": "" if unit_tests else "1",
    }
    try:
        return _build_once(
            warehouse, select, target_path, args, env_vars, on_line, log_file, verbose,
            release_early,
        )  # fmt: skip
    except DbtError as error:
        again = again_on_one_thread(error, args, env_vars, on_line)
        if again is None:
            raise
    # the first attempt took any child started ahead: this one starts afresh
    return _build_once(
        warehouse, select, target_path, args, again, on_line, _retry_log(log_file), verbose,
        release_early,
    )  # fmt: skip


def _build_once(
    warehouse: Path,
    select: str | None,
    target_path: Path | None,
    args: list[str],
    env_vars: dict[str, str],
    on_line: Callable[[str], None] | None,
    log_file: Path,
    verbose: bool,
    release_early: bool,
) -> list[str]:
    """One attempt of :func:`build` (its child started ahead, when one waits)."""
    prepared = _PREPARED.pop(_key(warehouse, select, target_path), None)
    if prepared is not None:
        process = prepared[0]
        try:
            assert process.stdin is not None
            process.stdin.write(json.dumps(env_vars) + "\n")
            process.stdin.close()
        except (BrokenPipeError, OSError):  # it died while waiting: build afresh below
            process.kill()
            process.wait()
            log.info("the dbt child started ahead had exited: starting a new one")
        else:
            if release_early:
                return _follow_until_released(
                    process, args, on_line, log_file, verbose, str(warehouse), warehouse
                )
            started = time.perf_counter()
            return _follow(process, args, on_line, log_file, verbose, started, warehouse=warehouse)
    if release_early:
        command, env, cwd = _command(args, None, warehouse, target_path, env_vars)
        process = _start(command, env, cwd)
        return _follow_until_released(
            process, args, on_line, log_file, verbose, str(warehouse), warehouse
        )
    return _run_once(args, None, warehouse, on_line, target_path, env_vars, log_file, verbose)


def _follow_until_released(
    process: subprocess.Popen,
    args: Sequence[str],
    on_line: Callable[[str], None] | None,
    log_file: Path | None,
    verbose: bool,
    key: str,
    warehouse: Path | None = None,
) -> list[str]:
    """Follow the child in a thread; return when it released the warehouse (its verdict
    is left to :func:`finish_build`) or when it ended without doing so (its error raised)."""
    released = threading.Event()
    outcome: dict = {}
    started = time.perf_counter()
    # the caller's context: under Prefect, its flow run and the API URL of tsrate's own
    # server are context-local, and a thread without them logged each line through a
    # temporary server Prefect started for it
    context = contextvars.copy_context()

    def follow() -> None:
        try:
            outcome["lines"] = context.run(
                _follow, process, args, on_line, log_file, verbose, started, released, warehouse
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc

    thread = threading.Thread(target=follow, name="dbt-build", daemon=True)
    thread.start()
    try:
        while thread.is_alive() and not released.wait(0.2):
            pass
    except BaseException:  # Ctrl-C, SIGTERM: stop dbt now
        process.kill()
        thread.join()
        raise
    if not released.is_set():  # ended before its models were built (or by a plain build)
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["lines"]
    _PENDING[key] = (process, thread, outcome)
    return []


def pending_build(warehouse: Path | None = None) -> bool:
    """Whether a build of ``warehouse`` released it early and its data tests may still run."""
    return str(Path(warehouse or warehouse_path()).resolve()) in _PENDING


def finish_build(warehouse: Path | None = None, kill: bool = False) -> None:
    """Wait for the data tests of a build that released ``warehouse`` early (see
    :func:`build`) and raise its :class:`DbtError` when they failed; nothing to do when no
    such build is pending. ``kill``: stop it instead (a failure elsewhere; no verdict)."""
    entry = _PENDING.pop(str(Path(warehouse or warehouse_path()).resolve()), None)
    if entry is None:
        return
    process, thread, outcome = entry
    if kill and process.poll() is None:
        process.kill()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except BaseException:  # Ctrl-C while waiting: stop dbt now
        process.kill()
        thread.join()
        raise
    if not kill and "error" in outcome:
        raise outcome["error"]


def discard_pending() -> None:
    """Stop every build left pending (its verdict unread): a run that failed between its
    build and its publication."""
    for key in list(_PENDING):
        finish_build(Path(key), kill=True)


def check_docs_warehouse(warehouse: Path) -> None:
    """Refuse ``tsrate docs`` when ``warehouse`` does not exist: the catalog is read from it."""
    if not Path(warehouse).exists():
        raise TsrateError(f"no warehouse at {warehouse}: run `tsrate run` before `tsrate docs`")


#: dbt's saved parse in a target folder (dbt's PARTIAL_PARSE_FILE_NAME).
PARTIAL_PARSE_FILE = "partial_parse.msgpack"


def reuse_build_parse(target: Path) -> bool:
    """Give the docs' target folder the builds' saved parse when it is newer than its own.

    dbt keeps its parse of the project in its target folder and a later command there
    re-parses only the files that changed; ``tsrate docs`` writes into its own folder, so its
    first call into a folder parsed the whole project (9-12 s of a 25 s call on a loaded
    2-core machine) although the build had just parsed it. The parse does not depend
    on the target folder nor on the run the build rated (the models read ``TSRATE_RUN_ID`` and
    the like only when they run), so the builds' file (:func:`target_folder`) is copied in
    when it is the newer; dbt still checks every file's checksum against it and re-parses
    what changed. Returns whether it copied the file."""
    source = target_folder() / PARTIAL_PARSE_FILE
    own = Path(target) / PARTIAL_PARSE_FILE
    if source.resolve() == own.resolve() or not source.is_file():
        return False
    if own.is_file() and own.stat().st_mtime >= source.stat().st_mtime:
        return False
    own.parent.mkdir(parents=True, exist_ok=True)
    partial = own.with_name(f".{PARTIAL_PARSE_FILE}.{os.getpid()}")
    shutil.copy2(source, partial)  # its time too: the comparison above, next time
    os.replace(partial, own)
    return True


#: ``tsrate docs``'s dbt command: the static site, compiling the models, seeds and analyses
#: but not the tests. The site still lists every data and unit test with its source SQL
#: (parsed; the catalog is the same); compiling the 700-odd data tests as well made the
#: compile 3 to 6 times longer (7-18 s against 2-3 s on a loaded 2-core machine) for the
#: compiled SQL on a test's page alone (a build writes it to its target folder's
#: ``compiled/``).
DOCS_ARGS = (DOCS, "--static", "--exclude", "resource_type:test", "resource_type:unit_test")


def documented(manifest: Path) -> str:
    """What a docs site documents, from its ``manifest.json``: ``N models, M data tests``."""
    data = json.loads(Path(manifest).read_text(encoding="utf-8"))
    kinds = [node.get("resource_type") for node in data.get("nodes", {}).values()]
    return f"{kinds.count('model')} models, {kinds.count('test')} data tests"


def docs(
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    target_path: Path | None = None,
    verbose: bool | None = None,
) -> Path:
    """``dbt docs generate --static`` into ``target_path`` (default ``<warehouse dir>/docs``).

    The site documents every model, column, test and exposure, with the catalog (column
    types) read from the live warehouse; ``static_index.html`` is one self-contained file
    that opens offline; the tests' compiled SQL is left out (:data:`DOCS_ARGS`). Returns the
    folder. Needs a built warehouse and no running writer.

    ``on_line`` gets tsrate's progress (``docs: ...``: the parse, and whether dbt reused its
    saved one, the compile, the catalog, the site written); dbt's full log goes to
    ``<warehouse folder>/logs/dbt-docs-<time>.log`` (dbt's own ``dbt.log`` to that folder
    too, never into the site's) and, with ``verbose`` (default:
    ``tsrate --verbose``), to ``on_line`` too. The builds' saved parse is reused
    (:func:`reuse_build_parse`). A failure is one :class:`DbtError` line with a hint.
    """
    warehouse = Path(warehouse or warehouse_path()).resolve()
    check_docs_warehouse(warehouse)
    target = Path(target_path or warehouse.parent / "docs").resolve()
    say = log.info if on_line is None else on_line
    verbose = verbose_default() if verbose is None else verbose
    log_file = new_log_file(log_folder(warehouse), "dbt-docs")
    reuse_build_parse(target)
    say("docs: parsing the project...")
    started = time.perf_counter()
    # a default build's run, study and scope (the marts' SQL the site shows selects them)
    env_vars = {"TSRATE_RUN_ID": "latest", "TSRATE_STUDY_ID": "latest", "TSRATE_RUN_SCOPE": "study"}
    # dbt's own dbt.log beside tsrate's log of the call, not in the site's folder
    env_vars["DBT_LOG_PATH"] = str(log_file.parent)
    try:
        run_dbt(DOCS_ARGS, None, warehouse, say, target, env_vars, log_file, verbose)
    except DbtError:
        raise _docs_error(log_file, time.perf_counter() - started) from None
    say(
        f"docs: wrote {target / 'static_index.html'} ({documented(target / 'manifest.json')}) "
        f"in {time.perf_counter() - started:.1f}s"
    )
    return target


def _docs_error(log_file: Path, elapsed: float) -> DbtError:
    """The one-line failure of ``tsrate docs``: dbt's first error, from the child's
    ``docs: failed:`` line in ``log_file`` (else its last line)."""
    lines = Path(log_file).read_text(encoding="utf-8").splitlines()
    failed = f"{SUMMARY} docs: failed: "
    reasons = [line[len(failed) :] for line in lines if line.startswith(failed)]
    reason = reasons[-1] if reasons else (lines[-1].strip() if lines else "no output")
    error = DbtError(f"dbt could not generate the docs after {elapsed:.1f}s: {reason}")
    error.hint = (  # type: ignore[attr-defined]
        f"dbt's full log is {log_file}; `tsrate docs --verbose` shows it as it runs"
    )
    return error
