"""Forecast workers fork from a server that imported their systems' libraries once
(tsrate.robustness.forecast.workers): a worker starts with them loaded, with the parent's
environment as it is now (not as it was when the server started), one BLAS thread, and
TSRATE_WORKER_START=spawn spawns them as before. Each case runs in a fresh process: a
process keeps the first fork server it starts."""

from __future__ import annotations

import sys

import pytest

from tests.integration.scripts import run_script

SCRIPT = """
import concurrent.futures, json, os
from tsrate.robustness.forecast import workers
from tsrate.robustness.forecast.execute import init_worker
from tests.support.worker_probe import probe

context = workers.worker_context(workers.system_modules(["arima", "naive", "no_such_system"]))
os.environ["TSRATE_PROBE"] = "set after the server started"
with workers.single_threaded_children(), concurrent.futures.ProcessPoolExecutor(
    1, mp_context=context, initializer=init_worker, initargs=(os.getpid(), dict(os.environ))
) as pool:
    seen = pool.submit(probe).result()
print(json.dumps({**seen, "run": os.getpid(), "method": workers.start_method()}))
"""


def _probe(**env: str) -> dict:
    return run_script(SCRIPT, env=env, unset=("OPENBLAS_NUM_THREADS",))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork server: Linux here")
def test_a_forked_worker_has_its_systems_libraries_and_the_parents_environment():
    seen = _probe()
    assert seen["method"] == "forkserver"
    assert seen["parent"] != seen["run"]  # forked by the server, not by the run's process
    assert seen["statsmodels_loaded"]  # arima's libraries, before any forecast
    assert seen["parent_threads"] == 1  # forking a threaded process can copy a held lock
    assert seen["setting"] == "set after the server started"
    assert seen["blas_threads"] == "1"


def test_spawned_workers_import_their_libraries_themselves():
    seen = _probe(TSRATE_WORKER_START="spawn")
    assert seen["method"] == "spawn"
    assert seen["parent"] == seen["run"]
    assert not seen["statsmodels_loaded"]
    assert seen["setting"] == "set after the server started"
    assert seen["blas_threads"] == "1"


def test_the_systems_modules_come_from_the_systems_seed():
    from tsrate.robustness.forecast.workers import system_modules

    assert system_modules(["arima", "fracast", "arima", "no_such_system"]) == [
        "tsrate.systems.arima",
        "tsrate.systems.fracast_model",
    ]
