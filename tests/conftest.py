"""Shared fixtures: temporary real warehouses built with the real pipeline pieces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The shared helpers' asserts (tests/support/) report their values as a test's own do.
pytest.register_assert_rewrite("tests.support")

# Keep Prefect and dbt quiet and offline in tests.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

# Under pytest-xdist (pyproject.toml's addopts) each worker's numeric libraries (torch's
# OpenMP, BLAS; read at import, inherited by the children) get one thread, as tsrate gives
# its own forecast workers: with a thread per core in every worker, OpenMP's spinning threads
# fought over the cores (the packaged Gemma test took 230 s beside another worker, 24 s alone).
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")


#: Variables that change the path of a dbt build (tsrate.platform.dbt_child, dbt_runner):
#: one that a test leaves set (``tsrate --verbose`` sets TSRATE_VERBOSE in its own process,
#: and a test calls the CLI in process) would reach a later test's build or subprocess on the
#: same pytest-xdist worker. Every test gets them back as they were before it.
BUILD_PATH_VARIABLES = ("TSRATE_ALWAYS_UNIT_TESTS", "TSRATE_VERBOSE")


@pytest.fixture(autouse=True)
def _build_path_variables_restored():
    """Put :data:`BUILD_PATH_VARIABLES` back after each test (after monkeypatch's undo too:
    an autouse fixture is set up first, so it is torn down last)."""
    before = {name: os.environ.get(name) for name in BUILD_PATH_VARIABLES}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


#: Test files that read one session-scoped warehouse, run on one pytest-xdist worker so that
#: it is built once: file -> the name of its group (the other files: their own)
SHARED_WORKER = {
    # quantile_run (tests/integration/conftest.py): about 17 CPU-s to build
    "tests/integration/test_leaderboard_fev.py": "quantile_run",
    "tests/integration/test_probabilistic_marts.py": "quantile_run",
    "tests/integration/test_uncertainty_robustness.py": "quantile_run",
}


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (pyproject.toml), with the files of :data:`SHARED_WORKER` sent
    to one worker as one unit: whole files per worker, so a module's warehouse is built
    once, and a session warehouse that several files read is built once too."""
    if config.getvalue("dist") != "loadfile":
        return None
    missing = [name for name in SHARED_WORKER if not (config.rootpath / name).is_file()]
    if missing:  # a renamed file would silently get a worker (and a warehouse) of its own
        raise pytest.UsageError(f"SHARED_WORKER in tests/conftest.py names no file: {missing}")
    from xdist.scheduler import LoadFileScheduling

    class SharedFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_WORKER.get(scope, scope)

    return SharedFileScheduling(config, log)


@pytest.fixture(scope="session")
def prefect_harness():
    """A temporary Prefect API (own database) for flow tests."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def dbt_target(tmp_path_factory):
    """One dbt target folder for every build of the session that only passes one through.

    dbt keeps its parse there (partial parse): a later build of another warehouse of the
    same file name (``tsrate.duckdb``: the profile names the file alone, see
    ``tsrate.platform.dbt_runner._command``) and without ``--vars`` skips the full parse of
    the project. A test that reads the target's files or builds a copy of the project keeps
    its own folder, started from this one's parse (``parsed_target``); one that passes
    ``--vars`` (a full parse in any folder) keeps its own.

    ``TSRATE_TEST_DBT_TARGET`` names a folder kept across pytest sessions instead: the
    planted-error scripts (``tests/planted/``) run one short session per planted error, and
    with the folder kept dbt re-parses only the file planted in, not the whole project in
    every session."""
    kept = os.environ.get("TSRATE_TEST_DBT_TARGET")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return Path(kept)
    return tmp_path_factory.mktemp("dbt-target")


@pytest.fixture(scope="session")
def session_parse(dbt_target, tmp_path_factory) -> Path:
    """The session target's parse of the project (``dbt parse`` once, when no build has
    saved one there yet), to seed other target folders with
    (:func:`tests.support.dbt_project.seed_parse`)."""
    from tests.support.dbt_project import PARSE_STATE

    state = dbt_target / PARSE_STATE
    if not state.exists():
        from tsrate.platform import dbt_runner

        warehouse = tmp_path_factory.mktemp("parse") / "tsrate.duckdb"  # the profile's name
        dbt_runner.run_dbt(
            ["parse", "--no-write-json"], None, warehouse, lambda _: None, dbt_target
        )
    assert state.exists(), f"dbt parse saved no {PARSE_STATE} in {dbt_target}"
    return state


@pytest.fixture
def parsed_target(session_parse, tmp_path):
    """``parsed_target(name)``: a target folder under the test's tmp_path seeded with the
    session's parse (:func:`tests.support.dbt_project.seed_parse`)."""
    from tests.support.dbt_project import seed_parse

    return lambda name="target": seed_parse(session_parse, tmp_path / name)


@pytest.fixture(scope="session", autouse=True)
def _dbt_target_for_commands(dbt_target):
    """Builds that name no target (``tsrate run`` in a child process, flows) use the
    session's folder too, not the developer's ``target/`` in the project."""
    previous = os.environ.get("DBT_TARGET_PATH")
    os.environ["DBT_TARGET_PATH"] = str(dbt_target)
    yield
    if previous is None:
        os.environ.pop("DBT_TARGET_PATH", None)
    else:
        os.environ["DBT_TARGET_PATH"] = previous
