"""Shared fixtures: temporary real warehouses built with the real pipeline pieces."""

from __future__ import annotations

import os

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
    the project. A test that reads the target's files, builds a copy of the project or
    passes ``--vars`` keeps its own folder."""
    return tmp_path_factory.mktemp("dbt-target")


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
