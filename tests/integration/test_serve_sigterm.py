"""`tsrate serve` stopped by SIGTERM or Ctrl-C while a scheduled run writes the warehouse:
the run's Prefect flow run ends ``Cancelled`` with a message naming the signal (Prefect's own
Ctrl-C handling left it ``Running`` in the API for ever, its SIGTERM handling said "Runner is
shutting down."), serve still exits 143 / 130, within seconds; a second Ctrl-C ends serve at
once and still leaves the run ``Cancelled``."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

import pytest

from tests.integration.killed_runs import run_environment
from tests.integration.serve_process import (
    descendants,
    run_weekly,
    start_serve,
    wait_for_line,
    wait_gone,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc"),
]


@contextlib.contextmanager
def serving_a_paused_run(tmp_path):
    """A ``tsrate serve`` whose weekly run holds the warehouse, paused after one stored
    partition: yields (serve, its flow run, the run's processes, serve's log); whatever is
    left is killed after, and the writer's concurrency limit deleted, for the next tests."""
    from prefect.client.orchestration import get_client

    from tsrate.platform.locking import WRITER_LIMIT

    warehouse = tmp_path / "live" / "tsrate.duckdb"
    marker = tmp_path / "paused-inference"
    log = tmp_path / "serve.log"
    env = run_environment(
        tmp_path, warehouse, TSRATE_TEST_PAUSE_AT="inference", TSRATE_TEST_PAUSE_FILE=str(marker)
    )
    serve = start_serve(env, log)
    try:
        wait_for_line(serve, log, "serving on the Prefect API", 120)
        _free_the_weekly_deployment()
        flow_run = run_weekly(log, workers=1, timeout=0)
        deadline = time.monotonic() + 300
        while not marker.exists():  # the run holds the warehouse, one partition stored
            assert serve.poll() is None and time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.2)
        children = descendants(serve.pid)
        assert children, "expected the run's process"
        yield serve, flow_run, children, log
    finally:
        with contextlib.suppress(ProcessLookupError):  # whatever is left, for the next tests
            os.killpg(serve.pid, signal.SIGKILL)
        with get_client(sync_client=True) as client, contextlib.suppress(Exception):
            client.delete_global_concurrency_limit_by_name(WRITER_LIMIT)


@pytest.mark.parametrize(
    ("signum", "group", "status"),
    [
        (signal.SIGTERM, False, 143),  # `kill`, a container stop: serve alone
        (signal.SIGTERM, True, 143),  # systemd, `timeout`: the whole group
        (signal.SIGINT, True, 130),  # Ctrl-C in a terminal: the whole group
    ],
    ids=["sigterm", "sigterm-group", "ctrl-c"],
)
def test_a_stopped_serve_cancels_its_flow_run_saying_why(
    tmp_path, prefect_harness, signum, group, status
):
    from prefect.client.orchestration import get_client

    from tsrate.platform.serve import stopped_message

    with serving_a_paused_run(tmp_path) as (serve, flow_run, children, log):
        stopped = time.monotonic()
        if group:
            os.killpg(serve.pid, signum)
        else:
            serve.send_signal(signum)
        code = serve.wait(timeout=60)
        took = time.monotonic() - stopped
        left = wait_gone(children, 10.0)
    text = log.read_text()
    assert code == status, text[-4000:]
    assert f"tsrate: stopped by {signum.name}" in text and "Traceback" not in text, text[-4000:]
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run.id).state
    assert state.is_cancelled(), (state, text[-4000:])
    assert state.message == stopped_message(signum.name), state
    assert took < 15, f"serve took {took:.1f}s to stop"
    assert left == {}, f"processes outlived the stopped tsrate serve: {left}"


def test_a_second_ctrl_c_stops_serve_at_once_and_still_cancels_its_flow_run(
    tmp_path, prefect_harness
):
    """A second Ctrl-C while serve stops gracefully ends it at once (by SIGINT, as before),
    but first sets the flow run in flight ``Cancelled`` (it was left ``Running`` for ever),
    which frees the deployment's concurrency slot, and says so in one line; the run's
    processes still go with serve."""
    from prefect.client.orchestration import get_client

    from tsrate.platform.serve import forced_message

    with serving_a_paused_run(tmp_path) as (serve, flow_run, children, log):
        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C: the runner starts its graceful stop
        time.sleep(0.5)  # within it (about 3 s: the run's process stops first)
        stopped = time.monotonic()
        os.killpg(serve.pid, signal.SIGINT)
        code = serve.wait(timeout=60)
        took = time.monotonic() - stopped
        left = wait_gone(children, 10.0)
    text = log.read_text()
    assert code == -signal.SIGINT, text[-4000:]  # ended by the signal, as a shell expects
    said = f"tsrate: stopped at once by a second SIGINT; flow run '{flow_run.name}' set Cancelled"
    assert said in text and "Traceback" not in text, text[-4000:]
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run.id).state
        deployment = client.read_deployment_by_name("tsrate-pipeline/tsrate-weekly")
    assert state.is_cancelled(), (state, text[-4000:])
    assert state.message == forced_message("SIGINT"), state
    assert deployment.global_concurrency_limit.active_slots == 0, deployment
    assert took < 5, f"serve took {took:.1f}s to stop after the second Ctrl-C"
    assert left == {}, f"processes outlived the stopped tsrate serve: {left}"


def _free_the_weekly_deployment() -> None:
    """The session's Prefect API is shared with earlier tests, some of which stop a serve
    outright: their flow runs of the weekly deployment stay Running and keep its one
    concurrency slot (the test API revokes no expired lease), so this test's run would wait
    for ever. Delete every unfinished run of it and free the slot before triggering. Not
    registered yet (the first serve on this API: its runner registers it after saying it
    serves): no earlier run holds it."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.exceptions import ObjectNotFound

    unfinished = [StateType.SCHEDULED, StateType.PENDING, StateType.RUNNING, StateType.CANCELLING]
    with get_client(sync_client=True) as client:
        try:
            deployment = client.read_deployment_by_name("tsrate-pipeline/tsrate-weekly")
        except ObjectNotFound:
            return
        runs = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=unfinished))
            ),
        )
        for run in runs:
            client.delete_flow_run(run.id)
        limit = deployment.global_concurrency_limit
        if limit is not None:
            client.update_global_concurrency_limit(
                limit.name, GlobalConcurrencyLimitUpdate(active_slots=0)
            )
