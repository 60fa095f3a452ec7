"""``owned_prefect_server`` (tsrate.platform.prefect_server) against a stand-in Prefect: a
script put in place of the interpreter (``sys.executable``), started exactly as the real
server would be, that records its arguments, environment and parent-death signal and
answers ``/health`` on the port it was given (first ``503``s, then ``200``), or never
answers, or exits at once. The stand-in starts in a fraction of a second, where a real
Prefect server takes tens of seconds here; what it pins is tsrate's side: the command
line (host, the free port of the URL, ``--no-ui`` unless asked for the UI), the
environment (no inherited ``PREFECT_API_URL``, analytics off), the kernel's SIGKILL on
the parent's death, the wait for a 200 (polled every 0.2 s with a 2 s timeout), the
start timeout's 120 s default (on a fake clock, no waiting), the exit at start, the
``PREFECT_API_URL`` set inside the block only, and the server stopped and reaped after
it (terminated, waited on for 5 s).

Written for the mutation sweep of round 10 (tests/planted/sweep10_serve.json).
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.integration.interpreter_stand_in import gone, put_stand_in
from tsrate import TsrateError
from tsrate.platform import locking, prefect_server
from tsrate.platform.prefect_server import _free_port, owned_prefect_server

pytestmark = pytest.mark.slow


def _running(script: Path) -> list[int]:
    """The pids of processes (zombies included) running ``script``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(script) in (entry / "cmdline").read_text():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def test_a_free_port_is_one_the_kernel_picked():
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    port = _free_port()
    assert isinstance(port, int) and low <= port <= high


def test_the_server_is_started_for_this_process_waited_for_and_stopped(tmp_path, monkeypatch):
    """Started as ``python -m prefect server start --host 127.0.0.1 --port P --no-ui``
    without the caller's PREFECT_API_URL, analytics off, killed by the kernel if this
    process dies; the block starts once the health check answers 200 (not before: two 503s
    first), polled every 0.2 s with a 2 s timeout; inside it PREFECT_API_URL (environment
    and Prefect's settings) is the server's; after it the variable is gone and the server
    terminated, waited on (5 s at most) and reaped."""
    import httpx
    from prefect.settings import PREFECT_API_URL

    stand_in = put_stand_in(tmp_path, monkeypatch)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:1/api")  # the caller's: not passed
    polls, sleeps, waits = [], [], []
    real_get, real_wait = httpx.get, subprocess.Popen.wait

    def get(url: str, timeout: float):  # noqa: ANN202
        polls.append(timeout)
        return real_get(url, timeout=timeout)

    def wait(self, timeout=None):  # noqa: ANN001, ANN202
        waits.append(timeout)
        return real_wait(self, timeout=timeout)

    monkeypatch.setattr(httpx, "get", get)
    monkeypatch.setattr(subprocess.Popen, "wait", wait)
    real_sleep = __import__("time").sleep
    ticks = itertools.count()  # a fake clock, one second a reading: 150 polls at most
    clock = SimpleNamespace(
        monotonic=lambda: float(next(ticks)), sleep=lambda s: (sleeps.append(s), real_sleep(s))
    )
    monkeypatch.setattr(prefect_server, "time", clock)
    with owned_prefect_server(timeout=150) as url:
        record = stand_in.record()
        port = url.removeprefix("http://127.0.0.1:").removesuffix("/api")
        assert url == f"http://127.0.0.1:{port}/api" and port.isdigit()
        assert record["argv"] == [
            "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", port, "--no-ui"
        ]  # fmt: skip
        assert record["api_url"] is None and record["analytics"] == "false"
        assert record["pdeathsig"] == 9  # SIGKILL
        assert stand_in.answers()[-1] == 200 and stand_in.answers().count(200) == 1
        assert os.environ["PREFECT_API_URL"] == url and str(PREFECT_API_URL.value()) == url
        assert gone(record["pid"]) is False
    assert "PREFECT_API_URL" not in os.environ
    assert gone(record["pid"]) is True  # terminated and reaped
    assert waits == [5]
    assert set(polls) == {2} and len(polls) >= 3
    assert sleeps and set(sleeps) == {0.2} and len(sleeps) == len(polls) - 1


def test_the_ui_is_started_when_asked_and_the_log_file_gets_the_output(tmp_path, monkeypatch):
    stand_in = put_stand_in(tmp_path, monkeypatch)
    log = tmp_path / "server.log"
    with owned_prefect_server(ui=True, timeout=60, log_file=log):
        assert "--no-ui" not in stand_in.record()["argv"]
    assert log.read_text() == "stand-in started\n"


def test_a_server_that_exits_at_start_is_named_with_its_code(tmp_path, monkeypatch):
    put_stand_in(tmp_path, monkeypatch, mode="exit")
    with pytest.raises(TsrateError) as caught:
        with owned_prefect_server(timeout=60):
            raise AssertionError("the block must not start")
    assert str(caught.value) == (
        "the Prefect server exited at start (code 3); start one yourself (`prefect server "
        "start`) and set PREFECT_API_URL"
    )


def test_a_server_that_never_answers_is_given_up_after_120_s_by_default(tmp_path, monkeypatch):
    """On a fake clock: the deadline is 120 s after the start, and only a time past it (not
    one equal to it) gives up, after a poll; then the server is stopped."""
    stand_in = put_stand_in(tmp_path, monkeypatch, mode="silent")
    times = iter([0.0, 60.0, 120.0, 120.5, 1000.0, 1000.0])
    sleeps: list[float] = []
    monkeypatch.setattr(
        prefect_server, "time", SimpleNamespace(monotonic=lambda: next(times), sleep=sleeps.append)
    )
    with pytest.raises(TsrateError) as caught:
        with owned_prefect_server():
            raise AssertionError("the block must not start")
    assert str(caught.value) == (
        "the Prefect server did not answer within 120s; start one yourself (`prefect server "
        "start`) and set PREFECT_API_URL"
    )
    assert sleeps == [0.2, 0.2]  # polls at 60 and 120 went on, the one at 120.5 gave up
    assert _running(stand_in.script) == []  # stopped and reaped


# --- the warehouse writer slot on a real Prefect server (one server for the module) --------


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):  # noqa: ANN201
    """One real Prefect server (its own fresh database) for the slot's tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect-home")))
        with owned_prefect_server(timeout=300) as url:
            yield url


def _limit():  # noqa: ANN202
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(locking.WRITER_LIMIT)


def _set_limit(**fields) -> None:  # noqa: ANN003
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    with get_client(sync_client=True) as client:
        client.update_global_concurrency_limit(
            locking.WRITER_LIMIT, GlobalConcurrencyLimitUpdate(**fields)
        )


def _writing_flow():  # noqa: ANN202
    """A flow that takes the writer slot (and again inside it) and reports what it saw."""
    from prefect import flow

    @flow(name="sweep10-writer")
    def write(timeout: float) -> dict:
        seen: dict = {}
        with locking.prefect_writer_slot(timeout=timeout) as held:
            seen["held"], seen["slots"] = held, set(locking._held_slots)
            seen["taken"] = _limit().active_slots if held else None
            with locking.prefect_writer_slot(timeout=5.0) as again:  # nested: no wait
                seen["again"], seen["inner slots"] = again, set(locking._held_slots)
            seen["slots after"] = set(locking._held_slots)
        seen["left"] = set(locking._held_slots)
        return seen

    return write


def test_the_writer_slot_is_one_slot_held_only_inside_a_flow_run(prefect_api, monkeypatch):
    """No limit yet: nothing to hold, even in a flow run. ensure_writer_limit creates it
    with one slot. In a flow run the slot is held once (one slot taken on the server, asked
    strictly, with the writer's wait, a 60 s lease, and no abort on a missed renewal), a
    nested writer of the same run does not take a second, and it is free afterwards.
    Outside a flow run nothing is held."""
    from prefect.concurrency import sync

    calls: list[dict] = []
    real = sync.concurrency

    def recording(*names, **options):  # noqa: ANN002, ANN003, ANN202
        calls.append({"names": names, **options})
        return real(*names, **options)

    monkeypatch.setattr(sync, "concurrency", recording)
    write = _writing_flow()
    assert locking._writer_limit_exists() is False
    seen = write(timeout=7.0)
    assert seen["held"] is False and calls == []
    locking.ensure_writer_limit()
    assert locking._writer_limit_exists() is True
    assert (_limit().limit, _limit().active_slots) == (1, 0)
    seen = write(timeout=7.0)
    assert seen == {
        "held": True,
        "slots": {locking.WRITER_LIMIT},
        "taken": 1,
        "again": True,
        "inner slots": {locking.WRITER_LIMIT},
        "slots after": {locking.WRITER_LIMIT},  # the nested writer's exit frees nothing
        "left": set(),
    }
    assert calls == [
        {
            "names": (locking.WRITER_LIMIT,),
            "occupy": 1,
            "timeout_seconds": 7.0,
            "lease_duration": 60.0,
            "strict": True,
            "raise_on_lease_renewal_failure": False,
        }
    ]
    assert _limit().active_slots == 0
    with locking.prefect_writer_slot() as held:  # not in a flow run
        assert held is False


def test_ensure_writer_limit_resets_to_one_and_frees_a_slot_only_when_asked(prefect_api):
    locking.ensure_writer_limit()
    _set_limit(limit=3, active_slots=1)  # a changed limit, a slot left taken
    locking.ensure_writer_limit()
    assert (_limit().limit, _limit().active_slots) == (1, 1)  # not ours to free
    locking.ensure_writer_limit(release_held=True)
    assert (_limit().limit, _limit().active_slots) == (1, 0)


def test_a_limit_deleted_after_the_check_is_an_error_not_a_free_pass(prefect_api, monkeypatch):
    """strict: if the limit is gone by the time the slot is asked for (deleted between the
    existence check and the request), the writer fails instead of writing unguarded."""
    from prefect.client.orchestration import get_client
    from prefect.concurrency.asyncio import ConcurrencySlotAcquisitionError

    locking.ensure_writer_limit()

    def deleted_just_after_the_check() -> bool:
        with get_client(sync_client=True) as client:
            client.delete_global_concurrency_limit_by_name(locking.WRITER_LIMIT)
        return True

    monkeypatch.setattr(locking, "_writer_limit_exists", deleted_just_after_the_check)
    with pytest.raises(ConcurrencySlotAcquisitionError):
        _writing_flow()(timeout=7.0)
