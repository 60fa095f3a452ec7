"""The scheduled side's decisions, pinned for the mutation sweep of round 10 (its survivors:
tests/planted/sweep10_serve.json).

* ``platform/orchestration.py``: a step's retry options and their defaults (no retries, no
  delay), the delay of each attempt as Prefect documents ``retry_delay_seconds`` (a number,
  a list indexed by attempt and held at its last value, or a callable given the number of
  retries), and ``run_flow``'s choice among the plain function, Prefect on the configured
  API, and a temporary server of tsrate's own (without its UI) — for every ``TSRATE_PREFECT``
  mode, with and without an API, with and without ``needs_prefect``;
* ``platform/lifelines.py``: the liveness probe sends no signal (signal 0), the watch is a
  daemon thread that looks once a second where there is no pidfd, and its farewell is
  flushed before ``os._exit(1)``;
* ``platform/serve.py``: the schedule defaults are dbt_project.yml's vars, a lock wait of 0
  is allowed, the health check counts only a 200, the watch ends serving after three failed
  checks in a row (a good one resets the count) with a timeout of twice the interval capped
  at 5 s, then after the grace (30 s, 0 allowed) ends the process with status 2; serve
  serves the config it is given (``--nightly-rating``), frees a left-over writer slot only
  on a server it started (with the UI), and passes on or names how the runner ended;
* ``platform/prefect_server.py``: the logs are drained for at most 5 s before the stop;
* ``platform/locking.py``: a writer waits for the Prefect slot at least two leases.

A unit test starts no process and opens no connection, so the Prefect server of tsrate's
own, ``prefect.serve`` and ``httpx.get`` are stand-ins here that record what they are asked
(``tests/integration/test_sweep10_serve.py`` runs the real ones). The health watch's waits
are recorded and not waited, so nothing here depends on the wall clock. Each expectation is
written from the documented rule, not read back from the code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from types import SimpleNamespace

import pytest

from tsrate import TsrateError
from tsrate.platform import lifelines, orchestration, prefect_server, serve
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
    """The watch must not keep a finished process alive: its thread is a daemon. (It
    watches a pid no process has, so it ends at once whatever its kind.)"""
    from pathlib import Path

    taken = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    gone = next(pid for pid in range(4_000_000, 1, -1) if pid not in taken)
    seen: list[tuple[int, str, bool]] = []
    done = threading.Event()

    def leave(code: int) -> None:
        thread = threading.current_thread()
        seen.append((code, thread.name, thread.daemon))
        done.set()

    monkeypatch.setattr(lifelines.os, "_exit", leave)
    monkeypatch.setattr(lifelines, "_watched", set())
    lifelines.watch_parent(gone)
    assert done.wait(30)
    assert seen == [(1, "tsrate-watch-parent", True)]


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


# --- serve: the schedule config, the deployments, the health watch, how serve stops ------


def _project_vars() -> dict:
    """dbt_project.yml's vars, read here with yaml (not through tsrate.config)."""
    import yaml

    from tsrate.config import project_dir

    return yaml.safe_load((project_dir() / "dbt_project.yml").read_text())["vars"]


def test_the_schedule_defaults_are_the_projects_documented_vars():
    """ScheduleConfig's own defaults, and what an empty vars mapping reads, are the values
    dbt_project.yml ships (no suite scheduled, no nightly rating, one hour's lock wait)."""
    shipped = _project_vars()
    expected = {
        "nightly_cron": shipped["nightly_cron"],
        "weekly_cron": shipped["weekly_cron"],
        "timezone": shipped["schedule_timezone"],
        "nightly_price_source": shipped["nightly_price_source"],
        "lock_timeout_s": float(shipped["writer_lock_timeout_s"]),
        "nightly_rating": bool(shipped["nightly_rating"]),
        "suite_crons": (),
    }
    assert expected["lock_timeout_s"] == 3600.0 and expected["nightly_rating"] is False
    for config in (serve.ScheduleConfig(), serve.ScheduleConfig.from_vars({})):
        assert dataclasses.asdict(config) == expected
    assert dataclasses.asdict(serve.ScheduleConfig.from_vars()) == expected  # the project's


@pytest.mark.parametrize("seconds", [0, 0.5])
def test_a_lock_wait_of_zero_or_under_a_second_is_accepted(seconds):
    """Only a negative wait is refused: 0 means "do not wait", and fractions are seconds."""
    config = serve.ScheduleConfig.from_vars({"writer_lock_timeout_s": seconds})
    assert config.lock_timeout_s == seconds
    with pytest.raises(TsrateError, match="^writer_lock_timeout_s must be >= 0, got -0.5$"):
        serve.ScheduleConfig.from_vars({"writer_lock_timeout_s": -0.5})


def test_a_bad_cron_names_the_var_and_the_problem():
    with pytest.raises(TsrateError, match=r"^nightly_cron in dbt_project\.yml: \S.*$") as caught:
        serve.ScheduleConfig.from_vars({"nightly_cron": "every night"})
    assert "Value error, " not in str(caught.value)


def test_build_deployments_without_a_config_reads_the_project_vars():
    shipped = _project_vars()
    deployments = {d.name: d for d in serve.build_deployments()}
    assert set(deployments) == {"tsrate-nightly", "tsrate-weekly"}
    nightly, weekly = deployments["tsrate-nightly"], deployments["tsrate-weekly"]
    assert [s.schedule.cron for s in nightly.schedules] == [shipped["nightly_cron"]]
    assert [s.schedule.cron for s in weekly.schedules] == [shipped["weekly_cron"]]
    assert nightly.parameters["source"] == shipped["nightly_price_source"]


class _Health:
    """Stands in for httpx.get against a Prefect API: scripted answers (a status code, or
    "refused" for a connection error), recording each (url, timeout)."""

    def __init__(self, answers) -> None:  # noqa: ANN001
        self.answers = list(answers)
        self.asked: list[tuple[str, float]] = []

    def __call__(self, url: str, timeout: float):  # noqa: ANN204
        import httpx

        self.asked.append((url, timeout))
        answer = self.answers.pop(0) if self.answers else 500
        if answer == "refused":
            raise httpx.ConnectError("refused")
        return SimpleNamespace(status_code=answer)


def test_the_server_answers_only_a_200_to_its_health_check(monkeypatch):
    import httpx

    health = _Health([200, 201, 199, 500, "refused"])
    monkeypatch.setattr(httpx, "get", health)
    url = "http://127.0.0.1:9/api/"
    assert [serve.server_answers(url) for _ in range(5)] == [True, False, False, False, False]
    assert health.asked == [("http://127.0.0.1:9/api/health", 5.0)] * 5


@pytest.fixture
def watch(monkeypatch):
    """server_watch with its waits recorded and not waited (the watch thread's only), the
    health checks scripted, the outright end recorded instead of taken, SIGINT raising
    KeyboardInterrupt in this thread (as in a plain process)."""
    import signal

    record = SimpleNamespace(waits=[], daemon=[], exits=[], grace_ends=False, health=None)
    record.gone, record.entered = None, threading.Event()  # a real event: made before the patch

    class Recording(threading.Event):
        def wait(self, timeout=None):  # noqa: ANN001, ANN202
            if threading.current_thread().name != "tsrate-server-watch":
                return super().wait(timeout)
            record.entered.wait(30)  # the test is inside the watch's block
            record.waits.append(timeout)
            record.daemon.append(threading.current_thread().daemon)
            return record.grace_ends if record.gone else False  # the grace: after "gone"

    monkeypatch.setattr(threading, "Event", Recording)
    monkeypatch.setattr(serve.os, "_exit", record.exits.append)
    monkeypatch.delenv("TSRATE_SERVER_GONE_GRACE_S", raising=False)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield record
    signal.signal(signal.SIGINT, previous)


def _watch(record, monkeypatch, answers, interval) -> list[str]:  # noqa: ANN001
    """Run server_watch until it interrupts this thread; return what it recorded as gone."""
    import httpx

    record.health = _Health(answers)
    monkeypatch.setattr(httpx, "get", record.health)
    url = "http://127.0.0.1:9/api"
    with pytest.raises(KeyboardInterrupt), serve.server_watch(url, interval=interval) as gone:
        record.gone = gone
        record.entered.set()
        for _ in range(20_000):  # the watch runs without waiting: it ends within a moment
            threading.Event().wait(0.001)
        raise AssertionError("the watch never interrupted serving")
    return record.gone


def test_the_watch_ends_serving_after_three_failed_checks_in_a_row(monkeypatch, watch, capsys):
    """A check that answers resets the count: fail, fail, ok, fail (refused), fail, fail ends
    serving at the sixth check, with the line naming the three checks, then after the grace
    (30 s by default) the outright end with status 2 and the same line on stderr."""
    gone = _watch(watch, monkeypatch, [500, 500, 200, "refused", 500, 500, 200], interval=0.5)
    line = (
        "the Prefect server at http://127.0.0.1:9/api stopped answering (3 health checks 0.5s "
        "apart failed); no schedule runs without it: restart tsrate serve (it starts its own "
        "server unless PREFECT_API_URL is set)"
    )
    assert gone == [line]
    assert [timeout for _, timeout in watch.health.asked] == [1.0] * 6  # min(5, 2 x 0.5)
    assert watch.waits == [0.5] * 6 + [30.0] and all(watch.daemon)
    assert watch.exits == [2]
    assert capsys.readouterr().err == f"tsrate: error: {line}\n"


def test_a_slow_check_interval_caps_the_health_timeout_at_five_seconds(monkeypatch, watch):
    monkeypatch.setenv("TSRATE_SERVER_GONE_GRACE_S", "0")  # no grace: 0 is allowed
    _watch(watch, monkeypatch, [500, 500, 500], interval=4.0)
    assert [timeout for _, timeout in watch.health.asked] == [5.0] * 3
    assert watch.waits == [4.0] * 3 + [0.0] and watch.exits == [2]


def test_a_serve_that_stops_within_the_grace_is_not_ended_outright(monkeypatch, watch, capsys):
    watch.grace_ends = True  # serving stopped (the block ended) before the grace ran out
    gone = _watch(watch, monkeypatch, [500, 500, 500], interval=1.0)
    assert len(gone) == 1 and watch.exits == [] and capsys.readouterr().err == ""


class _Served:
    """Stands in for ``prefect.serve`` (and records what the serve around it set up): the
    deployments it was given, this process's SERVE_PID while serving, the writer-limit call;
    then ends as ``ends`` says (an exception to raise, or None to return)."""

    def __init__(self, monkeypatch, ends=None) -> None:  # noqa: ANN001
        import prefect

        self.ends = ends
        self.deployments: dict = {}
        self.serve_pid: list[str | None] = []
        self.release_held: list[bool] = []
        monkeypatch.setattr(prefect, "serve", self)
        monkeypatch.setattr(
            "tsrate.platform.locking.ensure_writer_limit",
            lambda release_held=False: self.release_held.append(release_held),
        )
        monkeypatch.setenv(lifelines.SERVE_PID, "not set by serve")  # restored afterwards
        monkeypatch.setenv("TSRATE_SERVER_CHECK_S", "600")  # no health check while serving

    def __call__(self, *deployments) -> None:  # noqa: ANN002
        import os

        self.deployments = {d.name: d for d in deployments}
        self.serve_pid.append(os.environ.get(lifelines.SERVE_PID))
        if self.ends is not None:
            raise self.ends


def _nightly_rating() -> serve.ScheduleConfig:
    return dataclasses.replace(serve.ScheduleConfig.from_vars({}), nightly_rating=True)


def test_serve_on_a_configured_api_serves_the_given_config_and_keeps_others_slots(monkeypatch):
    """`tsrate serve --nightly-rating` on PREFECT_API_URL: the deployments are the config
    given (the nightly one rates), the writer slot of a server serve does not own is left to
    that server's leases, and the runs are told this serve's pid."""
    import os

    import httpx
    from prefect.settings import PREFECT_API_URL, temporary_settings

    served = _Served(monkeypatch)
    health = _Health([200])
    monkeypatch.setattr(httpx, "get", health)
    said: list[str] = []
    url = "http://127.0.0.1:4999/api"
    with temporary_settings({PREFECT_API_URL: url}):
        serve.serve(_nightly_rating(), say=said.append)
    assert said == [f"serving on the Prefect API {url}"]
    assert health.asked[0] == (f"{url}/health", 5.0)
    assert served.deployments["tsrate-nightly"].parameters["rate"] is True
    assert served.release_held == [False]
    assert served.serve_pid == [str(os.getpid())]


def test_serve_without_an_api_starts_a_server_with_its_ui_and_owns_its_slot(monkeypatch):
    """No PREFECT_API_URL: serve asks for a server of its own, with the UI, says where the
    UI is (the API URL without /api) and, on a line of its own, the API URL that `prefect`
    commands take (the UI's address answers `prefect deployment run` "not found"), and
    releases a slot left taken in that server."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    served = _Served(monkeypatch)
    asked: list[bool] = []

    @contextlib.contextmanager
    def own_server(ui: bool = False, **_):  # noqa: ANN003, ANN202
        asked.append(ui)
        yield "http://127.0.0.1:4998/api"

    monkeypatch.setattr(prefect_server, "owned_prefect_server", own_server)
    said: list[str] = []
    with temporary_settings({PREFECT_API_URL: None}):
        serve.serve(_nightly_rating(), say=said.append)
    assert asked == [True]
    assert said == [
        "started a Prefect server for the schedules; UI and runs: http://127.0.0.1:4998",
        "API for prefect commands: PREFECT_API_URL=http://127.0.0.1:4998/api",
    ]
    assert served.release_held == [True]
    assert served.deployments["tsrate-nightly"].parameters["rate"] is True


def test_the_docs_show_the_api_line_and_a_prefect_command_that_uses_it():
    """docs/operations.md shows serve's two lines and a `prefect deployment run` with the
    API URL the second one prints (the UI's address answers it "not found")."""
    import re

    from tsrate.config import project_dir

    text = (project_dir() / "docs" / "operations.md").read_text()
    api = "http://127.0.0.1:<port>/api"
    assert serve.api_line(api) in text.splitlines()
    assert f"UI and runs: {api.removesuffix('/api')}" in text
    commands = re.findall(r"^PREFECT_API_URL=(\S+) prefect deployment run ", text, re.MULTILINE)
    assert commands == [api]


def test_a_runner_that_exits_or_is_interrupted_without_cause_passes_it_on(monkeypatch):
    """SystemExit with no signal received, and a KeyboardInterrupt the health watch did not
    cause, are not serve's to swallow: the CLI sees them."""
    for ends in (SystemExit(3), KeyboardInterrupt()):
        _Served(monkeypatch, ends=ends)
        with pytest.raises(type(ends)):
            serve._serve(serve.ScheduleConfig.from_vars({}), "http://127.0.0.1:9/api", owned=False)


def test_a_runner_error_is_serves_own_unless_the_server_is_gone(monkeypatch):
    """An error from the runner while the server answers (asked with a 2 s timeout) is
    raised as it is; once the server does not answer it becomes the one line naming it."""
    import httpx

    url = "http://127.0.0.1:9/api"
    config = serve.ScheduleConfig.from_vars({})
    _Served(monkeypatch, ends=RuntimeError("a bug in the runner"))
    health = _Health([200])
    monkeypatch.setattr(httpx, "get", health)
    with pytest.raises(RuntimeError, match="a bug in the runner"):
        serve._serve(config, url, owned=False)
    assert health.asked == [(f"{url}/health", 2)]
    _Served(monkeypatch, ends=RuntimeError("connection refused"))
    monkeypatch.setattr(httpx, "get", _Health(["refused"]))
    with pytest.raises(TsrateError) as caught:
        serve._serve(config, url, owned=False)
    assert str(caught.value) == (
        f"the Prefect server at {url} stopped answering (RuntimeError from the runner); no "
        "schedule runs without it: restart tsrate serve (it starts its own server unless "
        "PREFECT_API_URL is set)"
    )


def test_a_server_that_does_not_answer_at_the_start_is_one_line(monkeypatch):
    import httpx
    from prefect.settings import PREFECT_API_URL, temporary_settings

    served = _Served(monkeypatch)
    monkeypatch.setattr(httpx, "get", _Health(["refused"]))
    url = "http://127.0.0.1:9/api"
    with temporary_settings({PREFECT_API_URL: url}), pytest.raises(TsrateError) as caught:
        serve.serve(serve.ScheduleConfig.from_vars({}), say=print)
    assert str(caught.value) == (
        f"the Prefect server at {url} does not answer; start it (`prefect server start`) or "
        "unset PREFECT_API_URL so that tsrate serve starts its own"
    )
    assert served.deployments == {}


def test_the_logs_prefect_still_holds_are_sent_for_at_most_five_seconds(monkeypatch):
    """Before the owned server stops, Prefect's log shipper is drained with a 5 s bound."""
    from prefect.logging.handlers import APILogWorker

    asked: list[float] = []
    monkeypatch.setattr(APILogWorker, "drain_all", lambda timeout=None: asked.append(timeout))
    prefect_server._send_pending_logs()
    assert asked == [5]


# --- locking: the Prefect writer slot's wait ------------------------------------------------


def test_a_writer_waits_for_the_prefect_slot_at_least_two_leases(tmp_path, monkeypatch):
    """warehouse_writer asks the Prefect slot for its own wait, but never less than two
    leases (2 x 60 s): a holder that died is expired by the server within one lease."""
    from tsrate.platform import locking

    asked: list[float | None] = []
    real = locking.prefect_writer_slot

    def recording(timeout=None):  # noqa: ANN001, ANN202
        asked.append(timeout)
        return real(timeout=timeout)

    monkeypatch.setattr(locking, "prefect_writer_slot", recording)
    monkeypatch.delenv(lifelines.SERVE_PID, raising=False)
    for timeout in (0.0, 5.0, 500.0):
        with locking.warehouse_writer(tmp_path / "w.duckdb", timeout=timeout):
            pass
    assert asked == [120.0, 120.0, 500.0]
