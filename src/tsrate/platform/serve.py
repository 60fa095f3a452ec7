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
killed with ``tsrate serve``) and says where its UI is. ``nightly_rating: true`` (var) or
``tsrate serve --nightly-rating`` makes the nightly deployment a full rating too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from typing import TYPE_CHECKING, Any

from tsrate import TsrateError
from tsrate.config import project_vars

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment

PRICE_SOURCES = ("skfolio", "yahoo")


@dataclasses.dataclass(frozen=True)
class ScheduleConfig:
    """The operations vars of ``dbt_project.yml``."""

    nightly_cron: str = "0 2 * * 2-6"
    weekly_cron: str = "0 5 * * 6"
    timezone: str = "UTC"
    nightly_price_source: str = "skfolio"
    lock_timeout_s: float = 3600.0
    nightly_rating: bool = False

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
            lock_timeout_s=float(values.get("writer_lock_timeout_s", cls.lock_timeout_s)),
            nightly_rating=str(values.get("nightly_rating", False)).lower() in ("true", "1"),
        )
        config.validate()
        return config

    def validate(self) -> None:
        """Raise a :class:`TsrateError` naming the var that is wrong."""
        from prefect.client.schemas.schedules import CronSchedule
        from pydantic import ValidationError

        for name in ("nightly_cron", "weekly_cron"):
            try:
                CronSchedule(cron=getattr(self, name), timezone=self.timezone)
            except ValidationError as exc:
                problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
                raise TsrateError(f"{name} / schedule_timezone: {problem}") from None
        if self.nightly_price_source not in PRICE_SOURCES:
            raise TsrateError(
                f"nightly_price_source: {self.nightly_price_source!r}; use one of {PRICE_SOURCES}"
            )
        if self.lock_timeout_s < 0:
            raise TsrateError(f"writer_lock_timeout_s must be >= 0, got {self.lock_timeout_s}")


def deployment_parameters(config: ScheduleConfig) -> dict[str, dict[str, Any]]:
    """Pipeline-flow parameters of each deployment, by deployment name."""
    return {
        "tsrate-nightly": {
            "source": config.nightly_price_source,
            "rate": config.nightly_rating,
            "lock_timeout": config.lock_timeout_s,
        },
        "tsrate-weekly": {"source": "auto", "rate": True, "lock_timeout": config.lock_timeout_s},
    }


def build_deployments(config: ScheduleConfig | None = None) -> list[RunnerDeployment]:
    """The nightly and weekly deployments of the pipeline flow (not yet served)."""
    from prefect.schedules import Cron

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
    return [
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


def serve(config: ScheduleConfig | None = None, say=print) -> None:  # noqa: ANN001
    """Serve both deployments (blocks until stopped), on the Prefect server ``PREFECT_API_URL``
    names or, without one, on a server started here (with its UI) and stopped with us."""
    from prefect.settings import PREFECT_API_URL

    config = config or ScheduleConfig.from_vars()
    if PREFECT_API_URL.value():
        say(f"serving on the Prefect API {PREFECT_API_URL.value()}")
        _serve(config)
        return
    from tsrate.platform.prefect_server import owned_prefect_server

    with owned_prefect_server(ui=True) as url:
        say(f"started a Prefect server for the schedules; UI and runs: {url.removesuffix('/api')}")
        _serve(config)


def _serve(config: ScheduleConfig) -> None:
    from prefect import serve as prefect_serve

    from tsrate.platform.locking import ensure_writer_limit

    deployments = build_deployments(config)
    ensure_writer_limit()
    with _signal_recorder() as received:
        try:
            prefect_serve(*deployments)
        except SystemExit:  # Prefect's Runner exits 0 on a SIGTERM before it has started
            if not received:
                raise
    if received:
        # prefect.serve swallows the KeyboardInterrupt of a SIGINT, and its Runner replaces our
        # SIGTERM handler with a graceful stop; both return normally. Re-raise, so that the
        # CLI exits 130 (SIGINT) or 143 (SIGTERM), not 0
        raise KeyboardInterrupt(received[0])


@contextlib.contextmanager
def _signal_recorder():  # noqa: ANN202 - yields the list of signal names received
    """Record SIGINT/SIGTERM (by name) while still stopping with KeyboardInterrupt."""
    received: list[str] = []
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def stop(signum: int, frame: object) -> None:  # noqa: ARG001 - signal handler signature
        received.append(signal.Signals(signum).name)
        signal.signal(signum, signal.SIG_DFL)  # a second signal kills at once
        raise KeyboardInterrupt(signal.Signals(signum).name)

    from prefect.runner import Runner

    graceful = Runner.handle_sigterm

    def handle_sigterm(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN001 - a Runner
        received.append("SIGTERM")
        graceful(self, *args, **kwargs)

    for sig in previous:
        signal.signal(sig, stop)
    Runner.handle_sigterm = handle_sigterm  # the Runner installs it as its SIGTERM handler
    try:
        yield received
    finally:
        Runner.handle_sigterm = graceful
        for sig, handler in previous.items():
            signal.signal(sig, handler)
