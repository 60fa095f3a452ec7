"""The forecast plumbing's parts that start processes (round 9's mutation sweep; its
survivors are tests/planted/sweep9_forecast.json): the run's pool of workers, the fork
server they come from, and the run provenance's git revision.

* The pool path stores what finished together in one transaction of at most
  ``MAX_PARTITIONS_PER_COMMIT`` partitions (the run's first alone), read back from the rows'
  ``finished_at`` (DuckDB's ``now()`` is the transaction's start), and keeps
  ``IN_FLIGHT_PER_WORKER`` partitions per worker under way (their batches held by the parent).
* ``worker_context`` and ``start_early`` start the fork server exactly when they should; each
  case runs in a fresh interpreter (a process keeps the first fork server it starts).
* ``run_provenance`` and ``git_revision`` run git: the revision is the checkout's HEAD as
  text, read here from the checkout's files; the price rows counted are the study period's,
  both ends included, and the partitions each system's own in its run.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.integration.scripts import run_script
from tests.support.forecast_inputs import made_by_the_run, plan_study, priced_warehouse
from tsrate import __version__
from tsrate.config import load_companies
from tsrate.robustness.forecast import execute as forecasting
from tsrate.robustness.marts.provenance import git_revision, run_provenance

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


# --- the pool ---------------------------------------------------------------------------------


def test_the_pool_commits_at_most_max_partitions_at_once_and_keeps_four_per_worker_in_flight(
    monkeypatch,
) -> None:
    # every result held until the end of the run (nothing is due before): the commits are
    # the first partition alone, then full batches of MAX_PARTITIONS_PER_COMMIT, then the rest
    monkeypatch.setattr(forecasting, "STORE_EVERY", 600.0)
    con, _ = priced_warehouse()
    study = plan_study(
        study_tickers=["AAPL", "MSFT"],
        systems=["naive", "biased", "random"],
        perturbations=["P0", "P1", "P2", "P3", "P4", "P5", "P6"],
    )
    held: list[int] = []
    lazy = made_by_the_run(monkeypatch, forecasting, "LazyBatches")
    bars = made_by_the_run(monkeypatch, forecasting, "Progress")

    def say(line: str) -> None:
        if line.startswith("[1/"):  # the parent's batches, when the first result is stored
            held.append(lazy[-1].n_held)
            parallel.append(bars[-1].parallel)

    parallel: list = []
    summary = forecasting.run_forecasts(con, study, load_companies(), workers=2, progress=say)
    n = summary.computed
    assert n == summary.partitions and n > 33  # (the image perturbations only where accepted)
    sizes = [
        count
        for (count,) in con.execute(
            "select count(*) from raw.forecast_partitions group by finished_at order by finished_at"
        ).fetchall()
    ]
    assert sizes == [1, 32, n - 33]
    # 2 workers x 4 in flight: the first result's batch released, the next one's built
    assert held == [8]
    assert parallel == [2]  # the ETA counts the 2 workers' partitions as under way
    # two partitions on two workers: a pool too
    two = plan_study(study_tickers=["AAPL"], systems=["naive", "biased"], perturbations=["P0"])
    parallel.clear()
    built: dict = {}
    monkeypatch.setattr(forecasting, "_WORKER_SYSTEMS", built)
    forecasting.run_forecasts(con, two, load_companies(), workers=2, force=True, progress=say)
    assert parallel == [2]
    assert built == {}  # computed in the workers, not here
    # one partition on two workers: computed here, nothing under way beside it
    one = plan_study(study_tickers=["AAPL"], systems=["naive"], perturbations=["P0"])
    parallel.clear()
    forecasting.run_forecasts(con, one, load_companies(), workers=2, force=True, progress=say)
    assert parallel == [None]
    assert list(built) == [f"naive|{one.to_json()}"]


def test_without_a_worker_count_the_pool_has_one_worker_per_core(monkeypatch) -> None:
    cores = os.cpu_count() or 1
    if cores < 2:
        pytest.skip("one core: the run computes in its own process")
    con, _ = priced_warehouse()
    study = plan_study(
        study_tickers=["AAPL", "MSFT"],
        systems=["naive", "biased", "random"],
        perturbations=["P0", "P1", "P2", "P3"],
    )
    held: list[int] = []
    lazy = made_by_the_run(monkeypatch, forecasting, "LazyBatches")

    def say(line: str) -> None:
        if line.startswith("[1/"):
            held.append(lazy[-1].n_held)

    summary = forecasting.run_forecasts(con, study, load_companies(), progress=say)
    # 4 partitions per worker in flight; the first result's batch released, the next built
    assert held == [min(4 * cores, summary.computed - 1)]


def test_the_eta_prices_an_unseen_system_by_its_own_stated_cost(monkeypatch) -> None:
    pytest.importorskip("fracast")
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", "full")  # 37 ms a window, not the table's 8
    con, _ = priced_warehouse()
    study = plan_study(systems=["fracast", "naive"], study_tickers=["AAPL"], perturbations=["P0"])
    priors = []
    bars = made_by_the_run(monkeypatch, forecasting, "Progress")

    def executor(study_json, companies, todo, batches):
        priors.append(dict(bars[-1].prior))
        return iter(())

    forecasting.run_forecasts(
        con, study, load_companies(), executor=executor, progress=lambda _: None
    )
    assert priors == [{"fracast": 37.0, "naive": 0.35}]


# --- the fork server --------------------------------------------------------------------------

_SERVER = """
import json, os, sys
from tsrate.robustness.forecast import workers
warehouse, stored, case = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {"before": workers.server_running()}
if case == "context":
    context = workers.worker_context(["tsrate.systems.naive"])
    seen["method"] = context.get_start_method()
elif case == "stored":
    workers.start_early(["naive"], stored, force=False)  # reuses: not started early
    seen["after_stored"] = workers.server_running()
    workers.start_early(["naive"], stored, force=True)
elif case == "new":
    workers.start_early(["naive"], warehouse, force=False)
    seen["read"] = os.path.exists(warehouse)  # opened to count its partitions
seen["after"] = workers.server_running()
print(json.dumps(seen))
"""


def _server(tmp_path: Path, case: str, **env: str) -> dict:
    stored = tmp_path / "stored.duckdb"
    if not stored.exists():
        from tsrate.platform.raw_schema import create_raw_tables

        with duckdb.connect(str(stored)) as con:
            create_raw_tables(con)
            con.execute(
                "insert into raw.forecast_partitions values "
                "('k', 'k', 'r', 'naive', 'AAPL', 'P0', 1, 1, 0.1, now()::timestamp, 0, null)"
            )
    return run_script(
        _SERVER,
        str(tmp_path / "new.duckdb"),
        str(stored),
        case,
        env=env,
        unset=() if env else ("TSRATE_WORKER_START",),
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork server: Linux here")
def test_the_fork_server_starts_when_a_context_is_asked_for_or_a_run_computes_everything(
    tmp_path,
) -> None:
    assert _server(tmp_path, "context") == {
        "before": False,
        "method": "forkserver",
        "after": True,
    }
    assert _server(tmp_path, "new") == {"before": False, "read": True, "after": True}
    assert _server(tmp_path, "stored") == {
        "before": False,
        "after_stored": False,
        "after": True,
    }
    spawn = {"TSRATE_WORKER_START": "spawn"}
    assert _server(tmp_path, "context", **spawn) == {
        "before": False,
        "method": "spawn",
        "after": False,
    }
    (tmp_path / "new.duckdb").unlink()
    # spawned workers need no server: the warehouse is not even opened
    assert _server(tmp_path, "new", **spawn) == {"before": False, "read": False, "after": False}


# --- provenance (runs git) --------------------------------------------------------------------


def _head_of(root: Path) -> str | None:
    """The checkout's HEAD commit read from its files (a worktree's .git is a file naming
    its git folder; refs may be loose or packed)."""
    git = root / ".git"
    if git.is_file():
        git = (root / git.read_text().split("gitdir:", 1)[1].strip()).resolve()
    if not git.is_dir():
        return None
    common = git / "commondir"
    shared = (git / common.read_text().strip()).resolve() if common.exists() else git
    head = (git / "HEAD").read_text().strip()
    if not head.startswith("ref:"):
        return head
    ref = head.split(":", 1)[1].strip()
    for folder in (git, shared):
        if (folder / ref).exists():
            return (folder / ref).read_text().strip()
    packed = shared / "packed-refs"
    for line in packed.read_text().splitlines() if packed.exists() else []:
        if line.endswith(" " + ref):
            return line.split()[0]
    return None


def test_git_revision_is_the_checkouts_head_as_text_or_says_why_not(tmp_path) -> None:
    head = _head_of(ROOT)
    if head is None:
        pytest.skip("not a git checkout")
    assert git_revision(ROOT) == (head, None)
    assert re.fullmatch("[0-9a-f]{40}", head)
    assert git_revision(tmp_path) == (None, "the project is not a git checkout")


def test_run_provenance_counts_the_study_periods_rows_and_each_systems_own_partitions() -> None:
    runs = pd.DataFrame(
        [
            dict(run_id="r1", tickers=["AAA"], study_start="2022-01-04",
                 study_end="2022-01-06", study_hash="h1"),
            dict(run_id="r2", tickers=["AAA", "BBB"], study_start="2022-01-03",
                 study_end="2022-01-04", study_hash="h2"),
        ]
    )  # fmt: skip
    prices = pd.DataFrame(
        {
            "ticker": ["AAA"] * 5 + ["BBB", "CCC"],
            "price_date": pd.to_datetime(
                ["2022-01-03", "2022-01-04", "2022-01-05", "2022-01-06", "2022-01-07"]
                + ["2022-01-04", "2022-01-04"]
            ),
            "close": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 9.0],
        }
    )
    partitions = pd.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r2", "r2"],
            "system_id": ["naive", "naive", "arima", "naive", "ghost"],
            "input_key": ["k2", "k1", "k3", "k9", "k8"],
        }
    )
    out = run_provenance(runs, prices, partitions, {"dbt": "1.9", "duckdb": "1.2"}, ROOT)
    columns = ["run_id", "system_id", "study_hash", "price_rows", "partitions"]
    assert out[columns].values.tolist() == [
        ["r1", "arima", "h1", 3, 1],
        ["r1", "naive", "h1", 3, 2],
        ["r2", "ghost", "h2", 3, 1],
        ["r2", "naive", "h2", 3, 1],
    ]
    # r1: AAA from the 4th to the 6th, both ends in; r2: AAA 3rd-4th and BBB 4th, not CCC
    r1 = "AAA|2022-01-04|2.0\nAAA|2022-01-05|3.0\nAAA|2022-01-06|4.0\n"
    r2 = "AAA|2022-01-03|1.0\nAAA|2022-01-04|2.0\nBBB|2022-01-04|7.0\n"
    assert out["price_rows_fingerprint"].tolist() == [
        hashlib.sha256(text.encode()).hexdigest() for text in (r1, r1, r2, r2)
    ]
    assert out["partitions_fingerprint"].tolist() == [
        hashlib.sha256(keys.encode()).hexdigest() for keys in ("k3", "k1\nk2", "k8", "k9")
    ]
    assert set(out["dbt_version"]) == {"1.9"} and set(out["duckdb_version"]) == {"1.2"}
    assert set(out["tsrate_version"]) == {__version__}
    head = _head_of(ROOT)
    if head is not None:
        assert set(out["git_revision"]) == {head} and out["git_reason"].isna().all()


def test_a_killed_pool_leaves_no_worker_and_a_pool_without_work_is_killed_quietly() -> None:
    import concurrent.futures
    import multiprocessing
    import time

    context = multiprocessing.get_context("spawn")
    idle = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context)
    forecasting._kill_pool(idle)  # no work was ever submitted: no thread, no worker
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context)
    futures = [pool.submit(time.sleep, 90) for _ in range(2)]
    while len(pool._processes) < 2 or not all(p.pid for p in pool._processes.values()):
        time.sleep(0.05)
    processes = list(pool._processes.values())
    forecasting._kill_pool(pool)
    assert not any(p.is_alive() for p in processes)
    assert all(f.done() for f in futures)


def test_a_pool_run_stops_the_resource_tracker_it_started(monkeypatch) -> None:
    from multiprocessing import resource_tracker

    con, _ = priced_warehouse()
    study = plan_study(systems=["naive", "biased"], perturbations=["P0"])
    summary = forecasting.run_forecasts(
        con, study, load_companies(), workers=2, progress=lambda _: None
    )
    assert summary.computed == 4
    tracker = resource_tracker._resource_tracker
    if forecasting.live_semaphores():
        # an earlier test of this worker process holds a queue or lock that is still alive:
        # stopping the tracker would unlink it under its owner, so the tracker runs on
        # (test_resource_tracker checks both branches in a fresh interpreter)
        assert getattr(tracker, "_pid", None) is not None
    else:
        assert getattr(tracker, "_pid", None) is None  # stopped: it would outlive a killed run
