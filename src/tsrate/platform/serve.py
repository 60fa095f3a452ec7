"""Scheduled runs: the Prefect deployments behind ``tsrate serve``.

Two deployments of the pipeline flow, scheduled by cron from the ``vars:`` of
``dbt_project.yml`` (``nightly_cron``, ``weekly_cron``, ``schedule_timezone``):

* ``tsrate-nightly`` — refresh prices (``nightly_price_source``) and forecast every
  partition not stored yet (finished ones are reused), without the rating build;
* ``tsrate-weekly`` — the full rating: forecasts, dbt build, publish, report.

Neither deployment fixes the study: each run reads the study from ``dbt_project.yml`` when it
starts, so editing the config changes the next scheduled run without redeploying. Both wait
up to ``writer_lock_timeout_s`` for another writer, hold the Prefect global concurrency
limit ``tsrate-warehouse-writer`` (created here, limit 1), and run one at a time per
deployment. ``prefect.yaml`` at the repository root describes the same deployments for
``prefect deploy`` onto a work pool.

Schedules need a Prefect server with its services (the scheduler creates the runs):
``tsrate serve`` uses the one ``PREFECT_API_URL`` names, else starts its own
(:func:`tsrate.platform.prefect_server.owned_prefect_server`: ``prefect server start`` with the UI, on a free local port,
killed with ``tsrate serve``) and says where its UI is and, apart, its API (``.../api``: the
``PREFECT_API_URL`` of ``prefect deployment run``). ``nightly_rating: true`` (var) or
``tsrate serve --nightly-rating`` makes the nightly deployment a full rating too.

The suites can be scheduled too, each off unless its cron var is set (``understanding_cron``,
``reasoning_cron``, ``interpretability_cron``; e.g. ``"0 8 * * 0"``): a deployment
``tsrate-<suite>`` of the suite's flow with its default (small) configuration, building and
publishing its marts, waiting up to ``writer_lock_timeout_s`` for the warehouse.

While serving, the Prefect server is asked for its health every ``TSRATE_SERVER_CHECK_S``
seconds (default 10); after three failed checks in a row (and at once if it does not answer
at the start) ``tsrate serve`` stops with one line naming the server, instead of running on
without a scheduler.

Each scheduled run is a process of its own (Prefect's Runner starts it). A serve stopped by
SIGTERM or Ctrl-C (SIGINT) stops its Runner as Prefect's own SIGTERM handler does: the Runner
cancels the runs in flight (the process stopped, then the state) before it returns, each
``Cancelled`` with :func:`stopped_message` (Prefect's own SIGINT handling leaves them
``Running`` in the API for ever). A second signal while the Runner stops still stops serve
at once, but first gives the API up to :data:`FORCED_MARK_S` seconds to set the runs in
flight ``Cancelled`` (:func:`forced_message`; best effort, one line says what became of
them). A serve stopped outright (SIGKILL, the OOM killer) runs no cleanup at all. Either way
its runs notice (:func:`tsrate.platform.lifelines.stop_with_serve`) and stop at once, as a
killed ``tsrate run`` does, with their forecast workers and dbt; the next run closes them as
interrupted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from tsrate import TsrateError
from tsrate.config import project_vars

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment

PRICE_SOURCES = ("skfolio", "yahoo")
#: the suites ``tsrate serve`` can schedule: var of the cron, flow entrypoint (name)
SUITES = ("understanding", "reasoning", "interpretability")
#: failed health checks in a row after which the Prefect server counts as gone
SERVER_CHECK_FAILURES = 3
#: seconds a serve whose server is gone gets to stop before it is ended outright
#: (``TSRATE_SERVER_GONE_GRACE_S`` overrides it)
SERVER_GONE_GRACE_S = 30.0
#: exit status of a serve whose server is gone, however it stops (the CLI's status for an
#: error the user can act on)
SERVER_GONE_STATUS = 2
#: seconds a serve stopped by a second signal gives the Prefect API to set its runs in
#: flight ``Cancelled`` before it ends (a stuck API must not keep it from stopping)
FORCED_MARK_S = 2.0


@dataclasses.dataclass(frozen=True)
class ScheduleConfig:
    """The operations vars of ``dbt_project.yml``."""

    nightly_cron: str = "0 2 * * 2-6"
    weekly_cron: str = "0 5 * * 6"
    timezone: str = "UTC"
    nightly_price_source: str = "skfolio"
    lock_timeout_s: float = 3600.0
    nightly_rating: bool = False
    #: cron per suite (``<suite>_cron`` vars); empty: the suite is not scheduled
    suite_crons: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_vars(cls, values: dict[str, Any] | None = None) -> ScheduleConfig:
        """Read ``nightly_cron``, ``weekly_cron``, ``schedule_timezone``,
        ``nightly_price_source`` and ``writer_lock_timeout_s`` (defaults above)."""
        values = project_vars() if values is None else values
        config = cls(
            nightly_cron=str(values.get("nightly_cron", cls.nightly_cron)),
            weekly_cron=str(values.get("weekly_cron", cls.weekly_cron)),
            timezone=str(values.get("schedule_timezone", cls.timezone)),
            nightly_price_source=str(values.get("nightly_price_source", cls.nightly_price_source)),
            lock_timeout_s=_var_seconds(values.get("writer_lock_timeout_s", cls.lock_timeout_s)),
            nightly_rating=str(values.get("nightly_rating", False)).lower() in ("true", "1"),
            suite_crons=tuple(
                (suite, str(values[f"{suite}_cron"]).strip())
                for suite in SUITES
                if str(values.get(f"{suite}_cron") or "").strip()
            ),
        )
        config.validate()
        return config

    def validate(self) -> None:
        """Raise a :class:`TsrateError` naming the var that is wrong."""
        from prefect.client.schemas.schedules import CronSchedule
        from pydantic import ValidationError

        crons = {"nightly_cron": self.nightly_cron, "weekly_cron": self.weekly_cron}
        crons.update({f"{suite}_cron": cron for suite, cron in self.suite_crons})
        try:  # the time zone alone first, so that a bad one is not blamed on a cron
            CronSchedule(cron="0 0 * * *", timezone=self.timezone)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise TsrateError(f"schedule_timezone in dbt_project.yml: {problem}") from None
        for name, cron in crons.items():
            try:
                CronSchedule(cron=cron, timezone=self.timezone)
            except ValidationError as exc:
                problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
                off = "; an empty string turns the schedule off" if name not in CORE_CRONS else ""
                raise TsrateError(
                    f"{name} in dbt_project.yml: {problem} (hint: five fields, minute hour "
                    f'day-of-month month day-of-week, e.g. "0 2 * * 2-6"{off})'
                ) from None
        if self.nightly_price_source not in PRICE_SOURCES:
            raise TsrateError(
                f"nightly_price_source: {self.nightly_price_source!r}; use one of {PRICE_SOURCES}"
            )
        if self.lock_timeout_s < 0:
            raise TsrateError(f"writer_lock_timeout_s must be >= 0, got {self.lock_timeout_s}")


#: the pipeline's crons; the suites' (``<suite>_cron``) may be empty: not scheduled
CORE_CRONS = ("nightly_cron", "weekly_cron")


def _var_seconds(value: Any) -> float:
    """``writer_lock_timeout_s`` as seconds; a value that is not a number is named."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TsrateError(
            f"writer_lock_timeout_s in dbt_project.yml must be a number of seconds, got "
            f"{value!r} (hint: e.g. 3600 to wait up to an hour for another writer; 0: do not "
            "wait)"
        ) from None


def deployment_parameters(config: ScheduleConfig) -> dict[str, dict[str, Any]]:
    """Pipeline-flow parameters of each deployment, by deployment name."""
    return {
        "tsrate-nightly": {
            "source": config.nightly_price_source,
            "rate": config.nightly_rating,
            "lock_timeout": config.lock_timeout_s,
        },
        "tsrate-weekly": {"source": "auto", "rate": True, "lock_timeout": config.lock_timeout_s},
        **{
            f"tsrate-{suite}": {"lock_timeout": config.lock_timeout_s}
            for suite, _ in config.suite_crons
        },
    }


def build_deployments(config: ScheduleConfig | None = None) -> list[RunnerDeployment]:
    """The nightly and weekly deployments of the pipeline flow, and one per suite whose cron
    is set (not yet served)."""
    from prefect.schedules import Cron

    from tsrate.platform import entrypoints
    from tsrate.platform.entrypoints import PIPELINE_FLOW, load_entrypoint

    pipeline_flow = load_entrypoint(PIPELINE_FLOW)

    config = config or ScheduleConfig.from_vars()
    parameters = deployment_parameters(config)
    crons = {"tsrate-nightly": config.nightly_cron, "tsrate-weekly": config.weekly_cron}
    descriptions = {
        "tsrate-nightly": (
            "Refresh prices, forecast new partitions and rate (nightly_rating)."
            if config.nightly_rating
            else "Refresh prices and forecast new partitions (no rating build)."
        ),
        "tsrate-weekly": "Full rating: forecasts, dbt build, publish the snapshot, report.",
    }
    deployments = [
        pipeline_flow.to_deployment(
            name=name,
            schedules=[Cron(crons[name], timezone=config.timezone)],
            parameters=parameters[name],
            concurrency_limit=1,
            description=descriptions[name],
            tags=["tsrate"],
        )
        for name in ("tsrate-nightly", "tsrate-weekly")
    ]
    for suite, cron in config.suite_crons:
        suite_flow = load_entrypoint(getattr(entrypoints, f"{suite.upper()}_FLOW"))
        deployments.append(
            suite_flow.to_deployment(
                name=f"tsrate-{suite}",
                schedules=[Cron(cron, timezone=config.timezone)],
                parameters=parameters[f"tsrate-{suite}"],
                concurrency_limit=1,
                description=f"The {suite} suite (default configuration): answers, marts, report.",
                tags=["tsrate", "suite"],
            )
        )
    return deployments


def schedule_lines(deployments: list[RunnerDeployment]) -> list[str]:
    """What ``tsrate serve --dry-run`` prints: one line per deployment, four tab-separated
    fields (name, cron, time zone, parameters as one line of JSON), for a scheduler or a
    script to read (``cut -f``; the cron's own spaces stay inside its field)."""
    import json

    lines = []
    for deployment in deployments:
        for schedule in deployment.schedules or ():
            cron = schedule.schedule
            fields = (
                deployment.name,
                cron.cron,
                str(cron.timezone or "UTC"),
                json.dumps(deployment.parameters or {}, sort_keys=True),
            )
            lines.append("\t".join(fields))
    return lines


#: Prefect's log formats stamp the time of day only (``07:40:30.088 | INFO | ...``): a serve
#: log of several nights needs the date. Prefect reads these overrides of its logging.yml
#: when it sets up logging; the scheduled runs (processes of their own) inherit them.
DATED_LOGS = {
    "PREFECT_LOGGING_FORMATTERS_STANDARD_DATEFMT": "%Y-%m-%d %H:%M:%S",
    "PREFECT_LOGGING_FORMATTERS_SIMPLE_DATEFMT": "%Y-%m-%d %H:%M:%S",
}


def date_the_logs(environ: dict[str, str] | os._Environ = os.environ) -> None:
    """Stamp Prefect's log lines with the date too (:data:`DATED_LOGS`), unless the user
    set a format of their own."""
    for variable, value in DATED_LOGS.items():
        environ.setdefault(variable, value)


def serve(config: ScheduleConfig | None = None, say=print) -> None:  # noqa: ANN001
    """Serve the deployments (blocks until stopped), on the Prefect server ``PREFECT_API_URL``
    names or, without one, on a server started here (with its UI) and stopped with us."""
    date_the_logs()  # before Prefect is imported here: it sets up its logging then
    from prefect.settings import PREFECT_API_URL

    from tsrate.config import warehouse_path
    from tsrate.platform.published_paths import check_publish

    config = config or ScheduleConfig.from_vars()
    check_publish(warehouse_path())  # the weekly rating publishes: refused now, not then
    if PREFECT_API_URL.value():
        url = str(PREFECT_API_URL.value())
        if not server_answers(url):
            raise TsrateError(
                f"the Prefect server at {url} does not answer; start it (`prefect server "
                "start`) or unset PREFECT_API_URL so that tsrate serve starts its own"
            )
        say(f"serving on the Prefect API {url}")
        _serve(config, url, owned=False)
        return
    from tsrate.platform.prefect_server import owned_prefect_server

    with owned_prefect_server(ui=True) as url:
        say(f"started a Prefect server for the schedules; UI and runs: {url.removesuffix('/api')}")
        say(api_line(url))
        _serve(config, url, owned=True)


def api_line(url: str) -> str:
    """The line naming the API of the server ``tsrate serve`` started, as ``prefect`` commands
    (``prefect deployment run``) take it: the UI's address answers them "not found"."""
    return f"API for prefect commands: PREFECT_API_URL={url}"


def server_answers(url: str, timeout: float = 5.0) -> bool:
    """Whether the Prefect API at ``url`` answers its health check."""
    import httpx

    try:
        return httpx.get(f"{url.rstrip('/')}/health", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def check_interval() -> float:
    """Seconds between health checks of the Prefect server (``TSRATE_SERVER_CHECK_S``)."""
    return _seconds("TSRATE_SERVER_CHECK_S", 10.0, minimum=0.1)


def _seconds(variable: str, default: float, minimum: float) -> float:
    """A number of seconds from the environment (at least ``minimum``), else ``default``."""
    try:
        return max(minimum, float(os.environ.get(variable, default)))
    except ValueError:
        raise TsrateError(
            f"{variable} must be a number of seconds, got {os.environ[variable]!r}"
        ) from None


def gone_line(url: str, detail: str) -> str:
    """The one line ``tsrate serve`` ends with when its Prefect server has gone."""
    return (
        f"the Prefect server at {url} stopped answering ({detail}); no schedule runs without "
        "it: restart tsrate serve (it starts its own server unless PREFECT_API_URL is set)"
    )


@contextlib.contextmanager
def server_watch(url: str, interval: float | None = None):  # noqa: ANN201 - yields list[str]
    """Check the Prefect server's health every ``interval`` seconds in a thread; after
    :data:`SERVER_CHECK_FAILURES` failures in a row, record why (the yielded list) and
    interrupt the main thread as a Ctrl-C would. If the process has not ended
    :data:`SERVER_GONE_GRACE_S` later (a Runner stuck on the dead API: its own stop, pausing
    the deployments, calls the API and retries), it prints the same line and ends outright
    with the same status as the CLI's (2: an error the user can act on, restart serve), so
    the exit does not depend on how long Prefect's client retries."""
    import _thread

    interval = check_interval() if interval is None else interval
    grace = _seconds("TSRATE_SERVER_GONE_GRACE_S", SERVER_GONE_GRACE_S, minimum=0.0)
    gone: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        failures = 0
        while not stop.wait(interval):
            failures = 0 if server_answers(url, timeout=min(5.0, interval * 2)) else failures + 1
            if failures >= SERVER_CHECK_FAILURES:
                gone.append(gone_line(url, f"{failures} health checks {interval:g}s apart failed"))
                _thread.interrupt_main(signal.SIGINT)
                if not stop.wait(grace):
                    sys.stderr.write(f"tsrate: error: {gone[0]}\n")
                    sys.stderr.flush()
                    os._exit(SERVER_GONE_STATUS)
                return

    thread = threading.Thread(target=watch, name="tsrate-server-watch", daemon=True)
    thread.start()
    try:
        yield gone
    finally:
        stop.set()


def _serve(config: ScheduleConfig, url: str, owned: bool) -> None:
    """Serve the deployments on ``url`` (``owned``: a server started here, whose writer slot
    nobody else can hold: :func:`tsrate.platform.locking.ensure_writer_limit`)."""
    from prefect import serve as prefect_serve

    from tsrate.platform.lifelines import SERVE_PID
    from tsrate.platform.locking import ensure_writer_limit

    deployments = build_deployments(config)
    ensure_writer_limit(release_held=owned)
    # the Runner starts each flow run as a process of its own, with this environment: a run
    # stops when this process ends, even killed outright (lifelines.stop_with_serve)
    os.environ[SERVE_PID] = str(os.getpid())
    with server_watch(url) as gone, _signal_recorder(gone) as received:
        try:
            prefect_serve(*deployments)
        except SystemExit:  # Prefect's Runner exits 0 on a SIGTERM before it has started
            if not received:
                raise
        except KeyboardInterrupt:
            if not gone:
                raise
        except Exception as exc:  # the runner's own calls to a server that has gone
            if not gone and server_answers(url, timeout=2):
                raise
            if not gone:
                gone.append(gone_line(url, f"{type(exc).__name__} from the runner"))
    if gone:
        raise TsrateError(gone[0])
    if received:
        # a signal while serving stops the Runner gracefully (prefect.serve returns normally;
        # it also swallows the KeyboardInterrupt of one before). Re-raise, so that the CLI
        # exits 130 (SIGINT) or 143 (SIGTERM), not 0
        raise KeyboardInterrupt(received[0])


def stopped_message(signame: str) -> str:
    """The message of the ``Cancelled`` state of a run in flight when serve was stopped."""
    return (
        f"tsrate serve stopped by {signame}: the run was cancelled with it (the next run "
        "marks it interrupted and reuses its stored forecasts)"
    )


def forced_message(signame: str) -> str:
    """The message of the ``Cancelled`` state of a run in flight when a second signal stopped
    serve at once (during the graceful stop of the first)."""
    return (
        f"tsrate serve stopped at once by a second {signame}: the run stopped with it (the "
        "next run marks it interrupted and reuses its stored forecasts)"
    )


def cancel_in_flight(
    flow_run_ids: set[Any], message: str, seconds: float = FORCED_MARK_S
) -> tuple[list[str], str | None]:
    """Set each of ``flow_run_ids`` that is not final yet ``Cancelled`` with ``message``
    (forced: whatever state the Runner's stop left it in; that frees its deployment's
    concurrency slot), on the Prefect API this process uses, within ``seconds`` (a thread:
    an API that does not answer is left behind). Returns the names of the runs set, and
    what went wrong (None: nothing)."""
    import contextvars

    marked: list[str] = []
    failed: list[str] = []

    def mark() -> None:
        from prefect.client.orchestration import get_client
        from prefect.states import Cancelled

        try:
            with get_client(sync_client=True) as client:
                for run_id in sorted(flow_run_ids, key=str):
                    run = client.read_flow_run(run_id)
                    if run.state is None or not run.state.is_final():
                        client.set_flow_run_state(run_id, Cancelled(message=message), force=True)
                        marked.append(run.name)
        except Exception as exc:  # noqa: BLE001 - best effort: serve stops anyway
            failed.append(" ".join(f"{type(exc).__name__}: {exc}".split())[:120])

    # the thread runs in this context: the settings of the Prefect server serve runs on
    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(mark,), name="tsrate-mark", daemon=True
    )
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        failed.append(f"no answer within {seconds:g}s")
    return list(marked), (failed[0] if failed else None)


def forced_line(signame: str, flow_run_ids: set[Any], seconds: float = FORCED_MARK_S) -> str:
    """Set the runs in flight ``Cancelled`` (:func:`cancel_in_flight`) and say so: the one
    line of a serve stopped at once by a second signal."""
    head = f"tsrate: stopped at once by a second {signame}"
    if not flow_run_ids:
        return f"{head} (no flow run in flight)"
    marked, problem = cancel_in_flight(flow_run_ids, forced_message(signame), seconds)
    if marked:
        head += f"; flow run {', '.join(map(repr, marked))} set Cancelled in Prefect"
    if problem is None:
        return f"{head}; its process stops with serve" if marked else head
    return (
        f"{head}; {len(flow_run_ids) - len(marked)} flow run(s) may still show Running in "
        f"Prefect ({problem}): cancel them in its UI"
    )


def _in_flight(runner: Any) -> set[Any]:
    """The ids of the flow runs ``runner`` has a process for (none if it cannot say)."""
    try:
        return set(runner._process_manager.flow_run_ids())  # noqa: SLF001 - no public list
    except Exception:  # noqa: BLE001 - another Prefect: nothing to mark, serve still stops
        return set()


@contextlib.contextmanager
def _signal_recorder(gone: list[str] | None = None):  # noqa: ANN202 - yields signal names
    """Record SIGINT/SIGTERM (by name). Before Prefect's Runner serves, and once its server
    is ``gone`` (its stop would call the dead API), a signal stops with KeyboardInterrupt;
    while it serves, SIGINT stops it as its SIGTERM handler does (gracefully: it cancels the
    runs in flight), and the runs it cancels get :func:`stopped_message`. A second signal
    during that stop ends the process at once, by that signal, after :func:`forced_line`
    (at most :data:`FORCED_MARK_S` seconds)."""
    received: list[str] = []
    in_flight: set[Any] = set()  # the runs of the Runner stopping, noted by the first signal
    runners: list[Any] = []
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    from prefect.runner import Runner

    def force(signum: int, frame: object) -> None:  # noqa: ARG001 - signal handler signature
        for sig in previous:  # a third signal kills at once
            signal.signal(sig, signal.SIG_DFL)
        runs = in_flight.union(*(_in_flight(runner) for runner in runners))
        line = forced_line(signal.Signals(signum).name, set() if gone else runs)
        with contextlib.suppress(Exception):  # a closed stderr must not keep serve alive
            print(line, file=sys.stderr, flush=True)
        os.kill(os.getpid(), signum)  # ends as the signal ends it (a shell sees 128 + signum)
        os._exit(128 + signum)  # pragma: no cover - the signal above ends the process

    def stopping(runner: Any) -> None:
        """The Runner stops gracefully: note its runs, and let a second signal force."""
        runners.append(runner)
        in_flight.update(_in_flight(runner))
        for sig in previous:
            signal.signal(sig, force)

    def stop(signum: int, frame: object) -> None:  # noqa: ARG001 - signal handler signature
        name = signal.Signals(signum).name
        received.append(name)
        signal.signal(signum, signal.SIG_DFL)  # not serving yet: a second signal kills at once
        runner = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
        serving = isinstance(runner, Runner) and runner.started and not runner.stopping
        if not serving or gone:
            raise KeyboardInterrupt(name)
        stopping(runner)
        runner.stopping = True  # what the Runner's SIGTERM handler does, SIGINT named
        runner.execute_in_background(runner.astop)

    graceful = Runner.handle_sigterm
    cancel_all = Runner.cancel_all

    def handle_sigterm(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN001 - a Runner
        received.append("SIGTERM")
        if self.started and not self.stopping and not gone:
            stopping(self)
        graceful(self, *args, **kwargs)

    async def cancel_with_reason(self) -> None:  # noqa: ANN001 - a Runner
        """The Runner's stop cancels its runs "Runner is shutting down."; say why instead."""
        manager = getattr(self, "_cancellation_manager", None)
        if not received or manager is None:
            return await cancel_all(self)
        return await manager.cancel_all(state_msg=stopped_message(received[0]))

    for sig in previous:
        signal.signal(sig, stop)
    Runner.handle_sigterm = handle_sigterm  # the Runner installs it as its SIGTERM handler
    Runner.cancel_all = cancel_with_reason  # what its stop (astop) calls
    try:
        yield received
    finally:
        Runner.handle_sigterm = graceful
        Runner.cancel_all = cancel_all
        for sig, handler in previous.items():
            signal.signal(sig, handler)
