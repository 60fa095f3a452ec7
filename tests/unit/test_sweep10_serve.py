"""The scheduled side's decisions, pinned for the mutation sweep of round 10 (its survivors:
tests/planted/sweep10_serve.json).

* ``platform/orchestration.py``: a step's retry options and their defaults (no retries, no
  delay), the delay of each attempt as Prefect documents ``retry_delay_seconds`` (a number,
  a list indexed by attempt and held at its last value, or a callable given the number of
  retries), and ``run_flow``'s choice among the plain function, Prefect on the configured
  API, and a temporary server of tsrate's own (without its UI) — for every ``TSRATE_PREFECT``
  mode, with and without an API, with and without ``needs_prefect``. A unit test may not
  start a Prefect server, so the temporary server is a stand-in that records being asked.

Each expectation is written from the documented rule, not read back from the code.
"""

from __future__ import annotations

import contextlib
import threading
from types import SimpleNamespace

import pytest

from tsrate.platform import lifelines, orchestration, prefect_server
from tsrate.platform.orchestration import Step, _delay, call, prefect_api_configured, run_flow

# --- a step's retries and delays outside a flow run -----------------------------------------


def test_a_step_without_retry_options_runs_once_and_never_sleeps(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(orchestration.time, "sleep", slept.append)
    attempts = []

    def broken() -> None:
        attempts.append(1)
        raise OSError("down")

    step = Step("task", broken, {})
    assert (step.retries, step.retry_delay_seconds, step.retry_condition_fn) == (0, 0, None)
    with pytest.raises(OSError):
        call(step)
    assert attempts == [1] and slept == []


def test_a_steps_retry_delay_is_slept_between_attempts(monkeypatch):
    """retries=2, retry_delay_seconds=5: three attempts, five seconds before each retry; a
    step with retries and no delay retries at once (a sleep of 0)."""
    slept: list[float] = []
    monkeypatch.setattr(orchestration.time, "sleep", slept.append)

    def broken() -> None:
        raise OSError("down")

    step = Step("task", broken, {"retries": 2, "retry_delay_seconds": 5})
    assert step.retry_delay_seconds == 5
    with pytest.raises(OSError):
        call(step)
    assert slept == [5.0, 5.0]
    slept.clear()
    with pytest.raises(OSError):
        call(Step("task", broken, {"retries": 1}))
    assert slept == [0.0]


def test_the_delay_of_each_attempt_follows_prefects_rule():
    """A list is indexed by the attempt (0 = before the first retry) and holds its last value
    past its end; an empty list is no delay; a callable is given the step's retries and its
    list used the same way; a missing or None delay is no delay."""
    listed = SimpleNamespace(retries=3, retry_delay_seconds=[1, 2])
    assert [_delay(listed, attempt) for attempt in range(3)] == [1.0, 2.0, 2.0]
    assert _delay(SimpleNamespace(retries=3, retry_delay_seconds=[]), 0) == 0.0
    assert _delay(SimpleNamespace(retries=2, retry_delay_seconds=7), 1) == 7.0
    assert _delay(SimpleNamespace(retries=2, retry_delay_seconds=None), 0) == 0.0
    assert _delay(SimpleNamespace(retries=2), 0) == 0.0  # no delay option at all
    asked: list[int] = []

    def backoff(retries: int) -> list[float]:
        asked.append(retries)
        return [10.0 * (i + 1) for i in range(retries)]

    assert _delay(SimpleNamespace(retries=3, retry_delay_seconds=backoff), 2) == 30.0
    assert _delay(SimpleNamespace(retry_delay_seconds=backoff), 0) == 0.0  # no retries: []
    assert asked == [3, 0]


# --- run_flow: the plain function, the configured API, or a server of tsrate's own ----------


class _Flow:
    """Stands in for a top-level flow: records whether it ran orchestrated or plain."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict]] = []

    def fn(self, **parameters):  # noqa: ANN003, ANN201
        self.ran.append(("plain", parameters))
        return "plain"

    def __call__(self, **parameters):  # noqa: ANN003, ANN204
        self.ran.append(("orchestrated", parameters))
        return "orchestrated"


@pytest.fixture
def servers(monkeypatch):
    """Records each temporary Prefect server run_flow asks for (its ``ui``), without one."""
    asked: list[bool] = []

    @contextlib.contextmanager
    def recorded(ui: bool = False, **_):  # noqa: ANN003, ANN202
        asked.append(ui)
        yield "http://127.0.0.1:9/api"

    monkeypatch.setattr(prefect_server, "owned_prefect_server", recorded)
    return asked


def _no_api(tmp_path, monkeypatch) -> None:
    """Nothing names a Prefect API: no PREFECT_ variables, an empty home and working folder."""
    import os

    for variable in list(os.environ):
        if variable.startswith("PREFECT_") and variable != "PREFECT_SERVER_ANALYTICS_ENABLED":
            monkeypatch.delenv(variable)
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")


@contextlib.contextmanager
def _an_api(tmp_path, monkeypatch):  # noqa: ANN202
    """PREFECT_API_URL set in the environment and in Prefect's current settings."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    _no_api(tmp_path, monkeypatch)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4999/api")
    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:4999/api"}):
        yield


@pytest.mark.parametrize(
    ("mode", "needs_prefect", "expected", "server"),
    [
        ("auto", False, "plain", []),
        ("never", False, "plain", []),
        ("always", False, "orchestrated", [False]),
        ("auto", True, "orchestrated", [False]),
        ("never", True, "orchestrated", [False]),
    ],
)
def test_without_an_api_run_flow_is_plain_unless_prefect_is_asked_for(
    tmp_path, monkeypatch, servers, mode, needs_prefect, expected, server
):
    """No API: plain, unless TSRATE_PREFECT=always or the flow needs Prefect; then on a
    temporary server of tsrate's own, without its UI."""
    _no_api(tmp_path, monkeypatch)
    monkeypatch.setenv(orchestration.PREFECT_MODE, mode)
    flow = _Flow()
    assert prefect_api_configured() is False
    assert run_flow(flow, needs_prefect=needs_prefect, x=1) == expected
    assert flow.ran == [(expected, {"x": 1})] and servers == server


@pytest.mark.parametrize(
    ("mode", "needs_prefect", "expected"),
    [
        ("auto", False, "orchestrated"),
        ("always", False, "orchestrated"),
        ("never", False, "plain"),
        ("never", True, "orchestrated"),
        ("auto", True, "orchestrated"),
    ],
)
def test_with_an_api_run_flow_orchestrates_there_unless_told_never(
    tmp_path, monkeypatch, servers, mode, needs_prefect, expected
):
    """A configured API: orchestrated on it (no server of our own), except with
    TSRATE_PREFECT=never for a flow that does not need Prefect."""
    with _an_api(tmp_path, monkeypatch):
        monkeypatch.setenv(orchestration.PREFECT_MODE, mode)
        flow = _Flow()
        assert prefect_api_configured() is True
        assert run_flow(flow, needs_prefect=needs_prefect, y=2) == expected
    assert flow.ran == [(expected, {"y": 2})] and servers == []


def test_a_profile_in_the_default_prefect_home_names_an_api(tmp_path, monkeypatch):
    """Without PREFECT_HOME, Prefect reads ``~/.prefect/profiles.toml``: an API named there
    sends the check to Prefect's settings."""
    _no_api(tmp_path, monkeypatch)
    monkeypatch.delenv("PREFECT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert orchestration._settings_may_name_an_api() is False
    (tmp_path / "home" / ".prefect").mkdir()
    (tmp_path / "home" / ".prefect" / "profiles.toml").write_text(
        'active = "remote"\n[profiles.remote]\nPREFECT_API_URL = "http://127.0.0.1:4999/api"\n'
    )
    assert orchestration._settings_may_name_an_api() is True


def test_a_plain_function_or_one_whose_retries_are_none_is_called_once(monkeypatch):
    """``call`` on a plain function (no ``retries``) or on one whose ``retries`` is None does
    not retry a failure."""
    monkeypatch.setattr(orchestration.time, "sleep", lambda seconds: None)
    attempts: list[str] = []

    def plain() -> None:
        attempts.append("plain")
        raise OSError("down")

    def unset() -> None:
        attempts.append("unset")
        raise OSError("down")

    unset.retries = None
    for function in (plain, unset):
        with pytest.raises(OSError):
            call(function)
    assert attempts == ["plain", "unset"]


# --- lifelines: a run that ends with its serve --------------------------------------------


def test_alive_asks_without_sending_a_signal(monkeypatch):
    """``alive`` probes with signal 0 (no signal is delivered): asking about this very
    process must not deliver anything to it. A gone pid is not alive; one we may not signal
    (someone else's process: EPERM) is."""
    import os
    import signal

    got: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))
    try:
        assert lifelines.alive(os.getpid()) is True
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert got == []

    def refused(pid: int, signum: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(lifelines.os, "kill", refused)
    assert lifelines.alive(1) is True


def _left(monkeypatch) -> list[int]:
    """Record ``os._exit`` (and return) instead of leaving the test process."""
    codes: list[int] = []
    monkeypatch.setattr(lifelines.os, "_exit", codes.append)
    monkeypatch.setattr(lifelines, "_watched", set())
    return codes


def _watcher_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "tsrate-watch-parent"}


def test_the_watch_is_a_daemon_thread(monkeypatch):
    """The watch must not keep a finished process alive: its thread is a daemon."""
    import os

    _left(monkeypatch)
    before = _watcher_threads()
    lifelines.watch_parent(os.getppid())  # alive for the whole test
    (started,) = _watcher_threads() - before
    assert started.daemon is True


def test_without_a_pidfd_the_watch_looks_once_a_second_then_leaves(monkeypatch):
    """No pidfd: one look a second (a wait of 1 s between looks) while the process lives,
    then the farewell and exit status 1 once it is gone."""
    import os

    codes = _left(monkeypatch)
    waits: list[float | None] = []

    class Recording(threading.Event):
        def wait(self, timeout=None):  # noqa: ANN001, ANN202
            if threading.current_thread().name == "tsrate-watch-parent":
                waits.append(timeout)
                return False
            return super().wait(timeout)

    looks = iter([None, None])  # alive twice, then gone

    def kill(pid: int, signum: int) -> None:
        assert signum == 0
        if next(looks, "gone") == "gone":
            raise ProcessLookupError(pid)

    def no_pidfd(pid: int) -> int:
        raise OSError("no pidfd here")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    monkeypatch.setattr(threading, "Event", Recording)
    monkeypatch.setattr(lifelines.os, "kill", kill)
    before = _watcher_threads()
    lifelines.watch_parent(424242)
    for thread in _watcher_threads() - before:
        thread.join(timeout=30)
    assert waits == [1.0, 1.0] and codes == [1]


def test_the_farewell_is_flushed_before_the_exit(monkeypatch):
    """``os._exit`` flushes nothing: the farewell must be flushed by the print itself."""

    class Buffered:
        """A stream that keeps only what was flushed (as a pipe's buffer would)."""

        def __init__(self) -> None:
            self.pending, self.flushed = "", ""

        def write(self, text: str) -> int:
            self.pending += text
            return len(text)

        def flush(self) -> None:
            self.flushed += self.pending
            self.pending = ""

    codes = _left(monkeypatch)
    stream = Buffered()
    monkeypatch.setattr(lifelines.sys, "stderr", stream)
    lifelines._leave("tsrate serve (pid 7) is gone")
    assert stream.flushed == "tsrate serve (pid 7) is gone\n" and codes == [1]
