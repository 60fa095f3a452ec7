"""A pool run stops multiprocessing's resource tracker only when no semaphore of the process
is registered with it any more, and a run stopped while a worker was being forked exits.

A tracker that stops unlinks every semaphore still registered with it and warns that they
leaked ("There appear to be N leaked semaphore objects"); their owners then fail to unlink
them when they are collected or at exit (``sem_unlink``: FileNotFoundError): in a long-lived
process (a test worker that runs many forecasts, a Dask nanny's queues beside the pool) the
process ended with those tracebacks. A run stopped (Ctrl-C, SIGTERM) while the fork server
forked a worker printed its message and never exited (the worker, unknown to the pool, kept
its queue busy); killed then, its tracker warned of the pool's 5 leaked semaphores. Each case runs in a fresh interpreter, whose whole
stderr, the interpreter's exit and the tracker's last words included, is read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

_RUNS = """
import gc, json, multiprocessing, sys, time
from multiprocessing import resource_tracker
from tests.support.forecast_inputs import priced_warehouse, plan_study
from tsrate import TsrateError
from tsrate.config import load_companies
from tsrate.robustness.forecast import execute as forecasting

study = plan_study(systems=["naive", "biased"], perturbations=["P0", "P2"])
companies = load_companies()
out = {}

def run(companies):
    con, _ = priced_warehouse()
    return forecasting.run_forecasts(con, study, companies, workers=2, progress=lambda _: None)

def tracker_running():
    return resource_tracker._resource_tracker._pid is not None

# another component's queue, alive across the runs (as a Dask nanny's are)
held = multiprocessing.get_context("spawn").Queue()
# a run stopped by a failed partition (no offset for MSFT: its biased partitions raise in
# the workers, and the pool is killed), then a normal one
try:
    run(companies[companies["ticker"] != "MSFT"])
except TsrateError as error:
    out["failed"] = str(error)
out["computed"] = run(companies).computed
out["tracker_kept_for_the_held_queue"] = tracker_running()
held.put("still usable")
out["held_queue"] = held.get(timeout=30)
out["live_with_the_queue"] = forecasting.live_semaphores()
del held  # unlinked and unregistered by its own finalizer
# once its feeder thread has seen the close: the thread holds two of the queue's locks until
# it exits, which a loaded machine may not have scheduled yet (up to 10 s here)
deadline = time.monotonic() + 10
while forecasting.live_semaphores() and time.monotonic() < deadline:
    time.sleep(0.05)
out["live_without_it"] = forecasting.live_semaphores()

# a queue that only garbage holds (a reference cycle) that no automatic collection reaches
# (as in a long-lived process's oldest generation): collected by the run's end, and the
# tracker is stopped
gc.disable()

class Cycle:
    pass

cycle = Cycle()
cycle.me, cycle.queue = cycle, multiprocessing.get_context("spawn").Queue()
del cycle
out["computed_again"] = run(companies).computed
out["tracker_stopped_at_last"] = not tracker_running()
print(json.dumps(out))
"""


_STOPPED_WHILE_FORKING = """
import json, os, signal, sys, time
from pathlib import Path
from tests.support.warehouses import ingest, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast import execute as forecasting

path = Path(sys.argv[1])
ingest(path, ["AAPL"])
# seven years of windows: each partition's batch fills the pool's pipe
study = small_study(study_tickers=["AAPL"], systems=["naive", "arima"], study_start="2015-01-01")
launches = []

def interrupt_at_the_second_launch(frame, event, arg):
    # the pool waits for the fork server to read the new worker's pid: Ctrl-C now
    if event == "call" and frame.f_code.co_name == "read_signed":
        launches.append(frame.f_code.co_filename)
        if len(launches) == 2:
            sys.setprofile(None)
            os.kill(os.getpid(), signal.SIGINT)

out = {}
with connect(path) as con:
    sys.setprofile(interrupt_at_the_second_launch)
    try:
        forecasting.run_forecasts(con, study, load_companies(), workers=2, progress=lambda _: None)
    except KeyboardInterrupt:
        out["stopped"] = True
    sys.setprofile(None)
out["launches"] = len(launches)
print(json.dumps(out), flush=True)
"""


def _run(script: str, *args: str, timeout: float = 300) -> tuple[dict, str]:
    """The script's last stdout line as JSON and its whole stderr, read once the process
    has exited and the tracker it started has written what it writes at its end."""
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    environment.pop("TSRATE_WORKER_START", None)  # the fork server's workers
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the tracker inherits stderr: reading to its end waits for the tracker too
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"the process did not exit in {timeout:.0f} s:\n{stdout}\n{stderr[-3000:]}")
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1]), stderr


def test_a_stopped_and_a_normal_pool_run_leave_every_semaphore_to_its_owner() -> None:
    out, stderr = _run(_RUNS)
    for symptom in ("FileNotFoundError", "sem_unlink", "leaked semaphore", "Traceback"):
        assert symptom not in stderr, stderr[-3000:]
    assert "no biased_offset for MSFT" in out["failed"]
    assert out["computed"] == out["computed_again"] == 8
    # the tracker would have unlinked the queue's semaphores under it: it runs on
    assert out["tracker_kept_for_the_held_queue"]
    assert out["held_queue"] == "still usable"
    assert out["live_with_the_queue"] == 3 and out["live_without_it"] == 0  # lock, lock, sem
    assert out["tracker_stopped_at_last"]  # nothing of ours alive: stopped, as before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server's children")
def test_a_run_stopped_while_a_worker_is_forked_exits(tmp_path) -> None:
    # stopped, it exits at once (the pool's waits: about 1 s); before, it never did
    out, stderr = _run(_STOPPED_WHILE_FORKING, str(tmp_path / "tsrate.duckdb"), timeout=120)
    assert out == {"stopped": True, "launches": 2}
    for symptom in ("FileNotFoundError", "leaked semaphore", "Traceback"):
        assert symptom not in stderr, stderr[-3000:]
