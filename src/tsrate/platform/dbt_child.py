"""Entry point of the dbt child process: die with the parent, then run dbt.

If the parent (``tsrate run``) is killed — SIGKILL, the OOM killer — an orphaned dbt would
keep writing the live warehouse and hold DuckDB's lock, so the next run could not start.
On Linux the child asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``).
Run as ``python -m tsrate.platform.dbt_child <dbt args>`` with ``TSRATE_DBT_PARENT_PID`` set.

``python -m tsrate.platform.dbt_child tsrate-build [--select SEL] [--exclude SEL ...] <dbt flags>``
is tsrate's own build, the same guarantees as ``dbt build`` at a fraction of its per-node
cost:

1. ``dbt parse`` once (partial parse kept in the target folder), the manifest reused below;
   with ``TSRATE_DBT_WAIT_FOR_GO`` set, the child then waits for a line on stdin (the env
   vars of the build, e.g. its run id): ``tsrate run`` starts it while the forecasts run,
   so dbt's start and parse are off the build's critical path (:func:`tsrate.platform.dbt_runner.prepare_build`);
2. ``dbt build --exclude resource_type:test``: seeds, models (contracts enforced), unit tests
   (a full build skips them when they passed in this target folder with the same
   :func:`_unit_test_key`; ``TSRATE_ALWAYS_UNIT_TESTS=1`` runs them anyway; when the key
   changed, a full build runs them after the models, read-only, beside the data tests:
   they read only the catalog and fixtures, and create temporary tables only);
3. the selected data tests are compiled by dbt (``dbt compile``; the compiled SQL is cached
   in the target folder and reused while nothing it depends on changed: the tests, macros,
   relation names, vars, dbt's version) and their SQL is run here in ONE DuckDB connection, wrapped exactly as dbt's ``get_test_sql`` wraps it (the test's
   ``fail_calc``, ``warn_if``, ``error_if`` and ``limit``): a test fails or warns when dbt's
   would, and every failure is reported by test name with its failing-row count.

Between steps 2 and 3 the child closes its read-write handle on the DuckDB file and prints
:data:`RELEASED`: the data tests only read (a read-only connection), so a parent that asked
for it (:func:`tsrate.platform.dbt_runner.build` with ``release_early``) may read the
warehouse beside them, e.g. to copy the marts into the next snapshot, and waits for this
process's exit code before it swaps anything in. The unit tests that must run (with
``access_mode: READ_ONLY``, see profiles.yml) and dbt's JSON artifacts of the build
(``manifest.json``, ``run_results.json``, unit tests included) run while the data tests do;
a failing unit test fails the build as a failing data test does.

Tests that store their failures (``store_failures``) need dbt's own materialization; when the
selection holds any, the step falls back to a plain ``dbt build``. The DuckDB file is closed
before this process exits (dbt-duckdb keeps it open with ``keep_open``).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from tsrate.platform.files import write_text_atomic

PARENT_PID = "TSRATE_DBT_PARENT_PID"
_PR_SET_PDEATHSIG = 1
#: first word of a summary line the parent prints even when dbt's log goes to a file
SUMMARY = "tsrate-dbt:"
#: first word of a line the parent neither prints nor counts as a summary: a node dbt has
#: finished in a build, ``<index> of <total> <node>``, shown as the writer's activity
#: (``tsrate status``) while the build runs
PROGRESS = "tsrate-dbt-progress:"
#: dbt's per-node events that carry ``index`` and ``total`` but say no node has finished
_NOT_FINISHED = ("LogStartLine", "LogHookStartLine", "LogHookEndLine")
#: compiled data-test SQL of the core's full build, in dbt's target folder, with its cache
#: key (:func:`data_test_cache_file` names the file of any other selection)
TEST_CACHE = "tsrate_data_tests.json"


def data_test_cache_file(select: str | None) -> str:
    """The compiled data tests' cache file of a build's ``--select`` (none: the core's full
    build, :data:`TEST_CACHE`): one file per selection, so a suite's build and the core's in
    one target folder do not throw away each other's compiled SQL."""
    if not select:
        return TEST_CACHE
    digest = hashlib.sha256(select.encode()).hexdigest()[:12]
    return f"tsrate_data_tests-{digest}.json"


#: Printed (after :data:`SUMMARY`) once the models are built and the read-write handle on the
#: warehouse is closed: from here on the child only reads it (the data tests).
RELEASED = "warehouse released: the data tests read it read-only"
#: Per data test: unique_id, status (pass, warn, fail, error), failing rows; in the target folder.
DATA_TEST_RESULTS = "data_test_results.json"
#: dbt's run_results.json of the build step (models, seeds, unit tests), also under this name.
BUILD_RESULTS = "build_run_results.json"
#: Key of the unit tests' last pass in the target folder (:func:`_unit_test_key`).
UNIT_TEST_PASS = "tsrate_unit_tests_passed.json"
#: Set (1): a full build runs the unit tests even when nothing they depend on changed.
ALWAYS_UNIT_TESTS = "TSRATE_ALWAYS_UNIT_TESTS"
#: Set (1) by ``tsrate run`` for its build: a full build leaves its unit tests out (dbt Labs'
#: advice: unit tests check the SQL on fixed inputs, so they belong to development and CI,
#: not to every production build); ``tsrate build``, CI and TSRATE_ALWAYS_UNIT_TESTS run them.
RUN_LEAVES_UNIT_TESTS = "TSRATE_RUN_LEAVES_UNIT_TESTS"
#: DuckDB's access mode for dbt's connection (profiles.yml): ``READ_ONLY`` while the unit
#: tests run beside the data tests, after the file was released.
DBT_ACCESS_MODE = "TSRATE_DBT_ACCESS_MODE"
#: Set: ``tsrate-build`` parses, then waits for one line on stdin (a JSON object of env vars
#: for the build, e.g. the run id) before it builds; an empty line or EOF ends it (exit 3).
WAIT_FOR_GO = "TSRATE_DBT_WAIT_FOR_GO"
#: The warehouse as profiles.yml names it for dbt: the file's name, this process running in
#: the file's folder (so dbt's partial parse survives a change of warehouse); tsrate's own
#: code here reads the absolute ``TSRATE_WAREHOUSE``. Set by :mod:`tsrate.platform.dbt_runner`.
PROFILE_WAREHOUSE = "TSRATE_DBT_WAREHOUSE"
#: Start of the summary line when dbt itself raised during the build (no node's result: a
#: crash of dbt or of a library in its process, not a model or test that failed); the parent
#: builds again once, on one thread (:func:`tsrate.platform.dbt_runner.crash_of`).
CRASHED = "dbt build failed:"
#: Tests only: a file holding a count N > 0; the build's first event in dbt's main thread
#: raises (the count lowered, the file removed at 0), as a crash of dbt would: the parent's
#: retry (:func:`tsrate.platform.dbt_runner.again_on_one_thread`) is tested with it.
CRASHES = "TSRATE_TEST_DBT_CRASHES"


def die_with_parent(parent_pid: int | None) -> None:
    """Be killed when the parent dies; exit now if it already has (it raced us)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


_print_lock = threading.Lock()


def _say(text: str) -> None:
    _line(f"{SUMMARY} {text}")


def _line(text: str) -> None:
    """Write ``text`` and its newline in one write: dbt's loggers write from its threads
    too, and a line written in two parts (as ``print`` does) can have theirs run into it."""
    with _print_lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def node_progress(event: object) -> None:
    """A dbt event callback: after each node dbt finishes (a model, seed, snapshot, or one it
    skips), print its :data:`PROGRESS` line. dbt calls it from its worker threads."""
    data = event.data  # type: ignore[attr-defined]
    index, total = getattr(data, "index", 0), getattr(data, "total", 0)
    if not (index and total) or event.info.name in _NOT_FINISHED:  # type: ignore[attr-defined]
        return
    node = getattr(data, "node_info", None)
    name = (node.node_name if node is not None else "") or getattr(data, "relation", "")
    _line(f"{PROGRESS} {index} of {total} {name}".rstrip())


# the events it reads are at info or error: the debug ones are not built for it (dbt_events)
node_progress.tsrate_min_event_level = "info"  # type: ignore[attr-defined]


def crash(event: object) -> None:
    """A dbt event callback for tests (:data:`CRASHES`): dbt's "Concurrency" line, fired in
    its main thread as the build starts, raises while the file's count is above 0."""
    counter = Path(os.environ.get(CRASHES, ""))
    if event.info.name != "ConcurrencyLine" or not counter.is_file():  # type: ignore[attr-defined]
        return
    left = int(counter.read_text()) - 1
    if left > 0:
        counter.write_text(str(left))
    else:
        counter.unlink()
    raise RuntimeError(f"crash injected by {CRASHES}")


def _close_dbt_connection() -> None:
    """dbt-duckdb keeps the DuckDB database open (``keep_open``) in a class attribute and
    ``close_all_connections`` only forgets it: close it, so the file is released now."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # pragma: no cover - dbt-duckdb is a dependency
        return
    with DuckDBConnectionManager._LOCK:
        env = DuckDBConnectionManager._ENV
        DuckDBConnectionManager._ENV = None
    if env is not None:
        env.close()


def _test_sql(node) -> str:  # noqa: ANN001 - a dbt test node
    """dbt's ``default__get_test_sql`` around the compiled test SQL."""
    config = node.config
    limit = f"\nlimit {config.limit}" if config.limit is not None else ""
    return (
        f"select {config.fail_calc} as failures, "
        f"{config.fail_calc} {config.warn_if} as should_warn, "
        f"{config.fail_calc} {config.error_if} as should_error "
        f"from (\n{node.compiled_code}{limit}\n) dbt_internal_test"
    )


def run_data_tests(nodes: list, warehouse: str) -> int:
    """Run the compiled data tests in one connection; print failures; return how many errored."""
    import duckdb

    started = time.perf_counter()
    con = _read_only(warehouse)  # a test only selects; the parent may read beside it
    passed = warned = 0
    errors: list[str] = []
    records: list[dict] = []  # target/data_test_results.json: what dbt's run_results says
    try:
        for node in nodes:
            try:
                failures, should_warn, should_error = con.execute(_test_sql(node)).fetchone()
            except duckdb.Error as exc:
                errors.append(f"ERROR {node.name}: {str(exc).splitlines()[0]}")
                records.append({"unique_id": node.unique_id, "status": "error", "failures": None})
                continue
            if node.config.severity.lower() == "error" and should_error:
                errors.append(
                    f"FAIL {node.name}: {failures} failing rows ({node.original_file_path})"
                )
                status = "fail"
            elif should_warn:
                warned += 1
                _say(f"WARN {node.name}: {failures} failing rows ({node.original_file_path})")
                status = "warn"
            else:
                passed += 1
                status = "pass"
            records.append({"unique_id": node.unique_id, "status": status, "failures": failures})
    finally:
        con.close()
    results = _target_path() / DATA_TEST_RESULTS
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps({"results": records}, indent=1))
    for line in errors:
        _say(line)
    _say(
        f"data tests: {len(nodes)} run in one connection in {time.perf_counter() - started:.1f}s: "
        f"PASS={passed} WARN={warned} FAIL={len(errors)}"
    )
    return len(errors)


def _selection(select: str | None, exclude: list[str]) -> list[str]:
    args = []
    if select:  # a partial build runs only tests whose every parent is selected
        args += ["--select", select, "--indirect-selection", "cautious"]
    if exclude:
        args += ["--exclude", *exclude]
    return args


def _summarise_build(result, verb: str = "built") -> tuple[int, float]:  # noqa: ANN001
    """Print one line of counts (``verb``: what was done) and the failures by name; return
    (failures, Python seconds) of a dbt RunExecutionResult."""
    counts: dict[str, int] = {}
    failed = []
    python_seconds = 0.0
    for item in result.results:
        kind = item.node.resource_type
        kind = getattr(kind, "value", kind)
        counts[kind] = counts.get(kind, 0) + 1
        status = str(getattr(item.status, "value", item.status))
        if status in ("error", "fail", "runtime error"):
            message = (item.message or "").strip().splitlines()
            failed.append(
                f"{status.upper()} {kind} {item.node.name}: {message[0] if message else ''}"
            )
        if getattr(item.node, "language", None) == "python":
            python_seconds += item.execution_time or 0.0
    for line in failed:
        _say(line)
    python = f"; Python models' own time {python_seconds:.1f}s" if verb == "built" else ""
    _say(
        f"{verb} "
        + ", ".join(f"{n} {kind}s" for kind, n in sorted(counts.items()))
        + f" ({len(failed)} failed{python})"
    )
    return len(failed), python_seconds


def _target_path() -> Path:
    """dbt's target folder (a relative one is the project's, as dbt reads it: this process
    runs in the warehouse's folder, see :data:`PROFILE_WAREHOUSE`)."""
    project = Path(os.environ.get("TSRATE_PROJECT_DIR") or ".")
    return project / (os.environ.get("DBT_TARGET_PATH") or "target")


def _cache_key(manifest, wanted: list[str]) -> str:  # noqa: ANN001 - a dbt Manifest
    """Everything a data test's compiled SQL depends on: the tests (SQL, arguments, config,
    references), every macro's code, every relation's name, the command-line vars and the
    dbt version. Generic and singular tests here read no database state when compiled."""
    from dbt.version import __version__

    digest = hashlib.sha256(__version__.encode())
    for unique_id in sorted(wanted):
        node = manifest.nodes[unique_id]
        meta = node.test_metadata.to_dict() if getattr(node, "test_metadata", None) else None
        part = [unique_id, node.raw_code, meta, node.config.to_dict(), node.depends_on.nodes]
        digest.update(json.dumps(part, sort_keys=True, default=str).encode())
    for collection in (manifest.nodes, manifest.sources):
        for name in sorted(collection):
            digest.update(f"{name}|{getattr(collection[name], 'relation_name', '')}".encode())
    _hash_macros_and_vars(digest, manifest)
    digest.update(json.dumps(manifest.state_check.project_hashes, default=str).encode())
    return digest.hexdigest()


def _hash_macros_and_vars(digest, manifest) -> None:  # noqa: ANN001 - hashlib, dbt Manifest
    """Every macro's code and the command-line vars, into ``digest`` (both cache keys)."""
    for name in sorted(manifest.macros):
        digest.update(f"{name}|{manifest.macros[name].macro_sql}".encode())
    digest.update(str(manifest.state_check.vars_hash.checksum).encode())


def _cached_tests(manifest, wanted: list[str], cache: Path) -> list | None:  # noqa: ANN001
    """The selected test nodes with ``compiled_code`` from the cache of the last compile when
    nothing they depend on changed (:func:`_cache_key`); ``None`` when they need compiling."""
    try:
        stored = json.loads(cache.read_text())
    except (OSError, ValueError):
        return None
    if stored.get("key") != _cache_key(manifest, wanted) or not set(wanted) <= set(
        stored.get("sql", {})
    ):
        return None
    nodes = []
    for unique_id in wanted:
        node = manifest.nodes[unique_id]
        node.compiled_code = stored["sql"][unique_id]
        nodes.append(node)
    _say(f"data tests unchanged since their last compile: {len(nodes)} reused")
    return nodes


def _compile_tests(  # noqa: ANN001
    runner, manifest, wanted, selection, common, cache: Path, quiet: bool = False
) -> list | None:
    """The selected test nodes compiled by ``dbt compile`` (then cached in ``cache`` for the
    next build of the same selection)."""
    compiled = runner.invoke(  # no JSON artifacts: target/ keeps the build's manifest and results
        ["compile", "--no-write-json", *(selection if "--select" in selection else
                      ["--select", "resource_type:test", *selection]), *common]
    )  # fmt: skip
    if not compiled.success:
        if not quiet:
            _say(f"compiling the data tests failed: {compiled.exception}")
        return None
    nodes = [r.node for r in compiled.result.results if r.node.unique_id in set(wanted)]
    write_text_atomic(
        cache,
        json.dumps({"key": _cache_key(manifest, wanted),
                    "sql": {n.unique_id: n.compiled_code for n in nodes}}),
    )  # fmt: skip
    _say(f"compiled {len(nodes)} data tests")
    return nodes


def _compile_tests_ahead(runner, manifest, wanted, selection, common, cache) -> list | None:  # noqa: ANN001
    """Compile the data tests before the go, while the parent may still write the warehouse.

    dbt compile connects to the profile's database (it lists the relations it caches), and
    the live file must not be opened before the go: the profile points at an empty
    throwaway file of the same name for this one step (same database name, so the same
    compiled SQL: relation names come from the parsed manifest, and no test here reads
    database state when compiled, see :func:`_cache_key`). ``None`` (compiled after the
    build, as without a child started ahead) when dbt could not compile them so."""
    import tempfile

    live = os.environ.get(PROFILE_WAREHOUSE)  # what profiles.yml reads first
    step = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tsrate-compile-") as folder:
        name = Path(os.environ["TSRATE_WAREHOUSE"]).name
        os.environ[PROFILE_WAREHOUSE] = str(Path(folder) / name)
        try:
            tests = _compile_tests(runner, manifest, wanted, selection, common, cache, True)
        finally:
            _close_dbt_connection()  # the throwaway file's connection, not kept for the build
            if live is None:
                os.environ.pop(PROFILE_WAREHOUSE, None)
            else:
                os.environ[PROFILE_WAREHOUSE] = live
    if tests is not None:
        _say(f"{len(tests)} data tests compiled ahead in {time.perf_counter() - step:.1f}s")
    return tests


#: What the core Python models import (python_models/intermediate):
#: imported while a child started ahead waits, so the build does not pay pandas, SciPy and
#: PyArrow's import (seconds on a loaded machine) on its first Python models.
MODEL_LIBRARIES = (
    "tsrate.config",
    "tsrate.methods.causal.assignment",
    "tsrate.methods.causal.distributions",
    "tsrate.methods.causal.effects",
    "tsrate.methods.user_study",
    "tsrate.methods.wrs",
    "tsrate.platform.marts_io",
    "tsrate.robustness.marts.leaderboard",
    "tsrate.robustness.marts.provenance",
    "tsrate.robustness.marts.ratings",
    "tsrate.robustness.marts.stability",
)


def _import_model_libraries() -> None:
    import importlib

    for name in MODEL_LIBRARIES:
        importlib.import_module(name)


def _unit_test_key(manifest, warehouse: str) -> str:  # noqa: ANN001 - a dbt Manifest
    """Everything a unit test's outcome depends on: the unit tests (fixtures, overrides,
    config), every model's, seed's and macro's code and config, the sources' names, the
    vars, the column types of every relation in the warehouse (dbt types the fixtures'
    rows by the input relations' columns), and the dbt, dbt-duckdb and DuckDB versions.
    A unit test reads no warehouse rows, so with this key unchanged it gives the same
    result. Reads the warehouse's catalog: call it after the go."""
    import duckdb
    from dbt.adapters.duckdb.__version__ import version as duckdb_adapter
    from dbt.version import __version__

    digest = hashlib.sha256(f"{__version__}|{duckdb_adapter}|{duckdb.__version__}".encode())
    volatile = {"created_at", "_event_status"}
    for name in sorted(manifest.unit_tests):
        node = manifest.unit_tests[name].to_dict()
        part = {k: v for k, v in node.items() if k not in volatile}
        digest.update(json.dumps([name, part], sort_keys=True, default=str).encode())
    for name in sorted(manifest.nodes):
        node = manifest.nodes[name]
        columns = {c: getattr(v, "data_type", None) for c, v in node.columns.items()}
        parents = getattr(node.depends_on, "nodes", [])
        part = [name, node.raw_code, node.config.to_dict(), columns, parents]
        digest.update(json.dumps(part, sort_keys=True, default=str).encode())
    for name in sorted(manifest.sources):
        digest.update(f"{name}|{manifest.sources[name].relation_name}".encode())
    _hash_macros_and_vars(digest, manifest)
    con = _read_only(warehouse)
    try:
        catalog = con.execute(
            "select schema_name, table_name, column_name, data_type from duckdb_columns() "
            "where database_name = current_database() order by all"
        ).fetchall()
    finally:
        con.close()
    digest.update(json.dumps(catalog, default=str).encode())
    return digest.hexdigest()


def unit_tests_left_to_build(select: str | None, environ: Mapping[str, str]) -> bool:
    """Whether this build leaves its unit tests out: a full build asked by ``tsrate run``
    (:data:`RUN_LEAVES_UNIT_TESTS`), unless TSRATE_ALWAYS_UNIT_TESTS=1; a partial build
    runs them."""
    return unit_tests_keyed(select, environ) and bool(environ.get(RUN_LEAVES_UNIT_TESTS))


def unit_tests_keyed(select: str | None, environ: Mapping[str, str]) -> bool:
    """Whether a build may skip its unit tests when they passed with today's key: a full
    build may; a partial build (``select``) and ``TSRATE_ALWAYS_UNIT_TESTS=1`` run them."""
    return not select and not environ.get(ALWAYS_UNIT_TESTS)


def _unit_tests_passed(manifest, warehouse: str) -> bool:  # noqa: ANN001 - a dbt Manifest
    """Whether the unit tests passed in this target folder with today's key (computed only
    when a pass is recorded: a first build does not pay for it twice)."""
    try:
        stored = json.loads((_target_path() / UNIT_TEST_PASS).read_text()).get("key")
    except (OSError, ValueError):
        return False
    return stored == _unit_test_key(manifest, warehouse)


def tsrate_build(argv: list[str]) -> int:
    """Parse, build without data tests, run the data tests in one connection (see module doc)."""
    from dbt.cli.main import dbtRunner

    parser = argparse.ArgumentParser(prog="tsrate-build")
    parser.add_argument("--select")
    parser.add_argument("--exclude", nargs="*", default=[])
    options, common = parser.parse_known_args(argv)
    selection = _selection(options.select, options.exclude)
    cache = _target_path() / data_test_cache_file(options.select)

    started = time.perf_counter()
    # --no-write-json: the build below writes manifest.json (and run_results.json) when it
    # ends; writing it after the parse too cost about 0.8 s a build for a file overwritten
    parsed = dbtRunner().invoke(["parse", "--no-write-json", *common])
    if not parsed.success:
        _say(f"dbt parse failed: {parsed.exception}")
        return 2
    manifest = parsed.result
    _say(f"parsed the project in {time.perf_counter() - started:.1f}s")
    runner = dbtRunner(manifest=manifest, callbacks=[node_progress])
    stores = [
        n.name
        for n in manifest.nodes.values()
        # dbt resolves store_failures_as into store_failures when it parses (``ephemeral``,
        # the value an explicit store_failures: false leaves there, stores nothing)
        if n.resource_type == "test" and n.config.store_failures
    ]
    tests = wanted = None
    if not stores:  # the data tests are selected (and found compiled) before the build:
        step = time.perf_counter()  # neither reads the database, so a child started
        listed = runner.invoke(  # ahead does it while it waits
            ["ls", "--resource-type", "test", *selection, "--output", "json",
             "--output-keys", "unique_id", "--log-level", "none", "--log-level-file", "none",
             "--no-write-json", *common]
        )  # fmt: skip
        # --log-level none: the list is read from the result (printed, its one line per
        # test filled the build log; written to dbt's log file, about a fifth of the list's
        # CPU); --no-write-json: the list wrote graph.gpickle (every node serialized, a
        # quarter of its CPU) for nothing: the build writes dbt's artifacts
        if not listed.success:
            _say(f"selecting the data tests failed: {listed.exception}")
            return 2
        wanted = [json.loads(item)["unique_id"] for item in listed.result]
        tests = _cached_tests(manifest, wanted, cache)  # None: compiled after the build
        if tests is not None:
            _say(f"{len(tests)} data tests ready in {time.perf_counter() - step:.1f}s")
        elif os.environ.get(WAIT_FOR_GO):  # a child started ahead has the time to compile
            tests = _compile_tests_ahead(runner, manifest, wanted, selection, common, cache)
    # started ahead (tsrate.platform.dbt_runner.prepare_build): wait here
    if os.environ.get(WAIT_FOR_GO):
        _import_model_libraries()
        go = sys.stdin.readline()
        if not go.strip():  # the parent closed stdin: the build is not wanted
            return 3
        os.environ.update(json.loads(go))  # read by env_var() when the models run
        _say("build started (dbt was started and parsed ahead)")
    try:
        if stores:  # dbt's own test materialization is needed to store failures
            _say(f"tests {stores[:3]} store failures: plain dbt build")
            result = runner.invoke(["build", *selection, *common])
            return 0 if _summarise_build(result.result)[0] == 0 and result.success else 1
        step = time.perf_counter()
        # a full build runs its unit tests only when something their outcome depends on
        # changed since they last passed here, judged once the models are built (the
        # catalog they type their fixtures by is then this build's); partial builds and
        # TSRATE_ALWAYS_UNIT_TESTS run them with the models, as dbt's build does
        keyed = unit_tests_keyed(options.select, os.environ)
        excluded = ["resource_type:test", *(["resource_type:unit_test"] if keyed else [])]
        # --no-write-json: the artifacts are written below, beside the data tests (about
        # 0.7 s of dbt's own Python, which had run after the last model)
        if os.environ.get(CRASHES):  # tests: this invocation only (not the tests' compile)
            runner = dbtRunner(manifest=manifest, callbacks=[node_progress, crash])
        built = runner.invoke(
            ["build", *_selection(options.select, [*excluded, *options.exclude]),
             "--no-write-json", *common]
        )  # fmt: skip
        if built.result is None:
            _say(f"{CRASHED} {built.exception}")
            return 2
        failed, _ = _summarise_build(built.result)
        result, ok = built.result, built.success  # the models' (and unit tests') outcome
        skip_units = units_beside = False
        left = unit_tests_left_to_build(options.select, os.environ)
        if keyed and not failed and ok and left:
            skip_units = True  # neither run nor keyed: a later tsrate build judges them
            _say(
                "the dbt unit tests were not run: tsrate run leaves them to tsrate build "
                "and CI (they check the SQL on fixed inputs, not this data; "
                f"{ALWAYS_UNIT_TESTS}=1 runs them)"
            )
        elif keyed and not failed and ok:
            _close_dbt_connection()  # the key reads the catalog the models left
            skip_units = _unit_tests_passed(manifest, os.environ["TSRATE_WAREHOUSE"])
            if skip_units:
                _say(
                    "the unit tests were not re-run: they passed here with "
                    "the same models, fixtures, macros, column types and versions "
                    f"({ALWAYS_UNIT_TESTS}=1 runs them)"
                )
            elif tests is not None:  # read-only, beside the data tests (below)
                units_beside = True
            else:
                units = _run_unit_tests(runner, options.exclude, common, "after the models, ran")
                if units is None:
                    return 2
                failed = _summarise_build(units.result, "after the models, ran")[0]
                result.results.extend(units.result.results)  # one run_results.json
                ok = ok and units.success
        done = "models and seeds" if units_beside or left else "models, seeds and unit tests"
        _say(f"{done} in {time.perf_counter() - step:.1f}s")
        passed_file = _target_path() / UNIT_TEST_PASS
        if failed or not ok:
            _write_artifacts(manifest, result)
            passed_file.unlink(missing_ok=True)
            return 1
        written = tests is None
        if written:  # now: the tests' compile below reads and compiles the manifest's tests
            _write_artifacts(manifest, result)
            step = time.perf_counter()
            tests = _compile_tests(runner, manifest, wanted, selection, common, cache)
            if tests is None:
                return 2
            _say(f"{len(tests)} data tests ready in {time.perf_counter() - step:.1f}s")
    finally:
        _close_dbt_connection()
    _say(RELEASED)  # read-only from here on (the parent may read the warehouse beside us)
    # set by tsrate.platform.dbt_runner.run_dbt, as profiles.yml reads
    warehouse = os.environ["TSRATE_WAREHOUSE"]
    # the data tests in a thread (DuckDB's work, the GIL released); here, beside them, the
    # unit tests when they must run (dbt's Python, on a read-only connection of the same
    # configuration), then dbt's artifacts and the unit tests' pass keyed by the catalog
    errored: list[int] = []
    data_tests = threading.Thread(
        target=lambda: errored.append(run_data_tests(tests, warehouse)), name="data-tests"
    )
    data_tests.start()
    try:
        unit_failures = 0
        if units_beside:
            os.environ[DBT_ACCESS_MODE] = "READ_ONLY"
            units = _run_unit_tests(runner, options.exclude, common, "beside the data tests, ran")
            if units is None:
                return 2
            unit_failures = _summarise_build(units.result, "beside the data tests, ran")[0]
            unit_failures += 0 if units.success or unit_failures else 1
            result.results.extend(units.result.results)  # one run_results.json
        try:
            if not written:
                _write_artifacts(manifest, result)
            if keyed and not skip_units and not unit_failures:
                key = _unit_test_key(manifest, warehouse)
                (_target_path() / UNIT_TEST_PASS).write_text(json.dumps({"key": key}))
            elif unit_failures:
                (_target_path() / UNIT_TEST_PASS).unlink(missing_ok=True)
        except Exception as exc:  # noqa: BLE001 - reported as the build's
            _say(f"writing dbt's artifacts failed: {exc}")
            return 2
    finally:
        data_tests.join()
        os.environ.pop(DBT_ACCESS_MODE, None)
    return 1 if unit_failures or not errored or errored[0] else 0


def _run_unit_tests(runner, exclude: list[str], common: list[str], verb: str):  # noqa: ANN001, ANN202
    """``dbt test`` of the unit tests alone (dbt's build runs a unit test only beside its
    selected model); dbt's runner result, or None (said why) when dbt could not run."""
    units = runner.invoke(
        ["test", "--select", "test_type:unit", *_selection(None, exclude), "--no-write-json",
         *common]
    )  # fmt: skip
    if units.result is None:
        _say(f"dbt unit tests failed to run ({verb}): {units.exception}")
        return None
    return units


def _write_artifacts(manifest, result) -> None:  # noqa: ANN001 - dbt Manifest, RunExecutionResult
    """What ``dbt build`` writes when it ends (its manifest, semantic manifest and
    run_results.json), and the run results again as :data:`BUILD_RESULTS`, a name a later
    dbt command (e.g. the data tests' compile) does not overwrite."""
    from dbt.parser.manifest import write_manifest

    target = _target_path()
    write_manifest(manifest, str(target))
    result.write(str(target / "run_results.json"))
    shutil.copyfile(target / "run_results.json", target / BUILD_RESULTS)


def _read_only(warehouse: str):  # noqa: ANN202 - a DuckDB connection
    """A read-only connection to the warehouse. Every one this process opens has the same
    configuration as dbt's read-only one (profiles.yml's ``access_mode``, its settings set
    after), so those open at once (the data tests, the unit tests, their key) share one
    database: DuckDB refuses a second open of a file with another configuration."""
    import duckdb

    memory = os.environ.get("TSRATE_DUCKDB_MEMORY_LIMIT", "4GB")
    con = duckdb.connect(warehouse, read_only=False, config={"access_mode": "READ_ONLY"})
    con.execute(f"set memory_limit = '{memory}'")
    return con


if __name__ == "__main__":
    parent = os.environ.get(PARENT_PID)
    die_with_parent(int(parent) if parent else None)
    try:  # dbt builds an event only when a logger writes it or a callback reads it
        from tsrate.platform.dbt_events import install

        install()
    except (ImportError, AttributeError):  # a dbt-common without those names: its own manager
        pass
    if len(sys.argv) > 1 and sys.argv[1] == "tsrate-build":
        code = tsrate_build(sys.argv[2:])  # every DuckDB handle is closed by now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip the interpreter's teardown of dbt's modules (seconds)
    if len(sys.argv) > 1 and sys.argv[1] == "tsrate-docs":  # tsrate.platform.dbt_docs
        from tsrate.platform.dbt_docs import generate

        code = generate(sys.argv[2:], _say, _close_dbt_connection)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    try:
        from dbt.cli.main import cli  # what `python -m dbt.cli.main` runs

        cli()
    finally:
        _close_dbt_connection()
