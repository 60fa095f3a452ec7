"""A Prefect server owned by one tsrate process: started on a free local port, in a session
of its own (a terminal's Ctrl-C reaches the owner, not the server), stopped with the block,
killed by the kernel if the process dies (so a killed command leaves none behind).

Used by ``tsrate serve`` (with the UI) and by flows that need orchestration when no
``PREFECT_API_URL`` is configured (``TSRATE_PREFECT=always``, the Dask path).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:  # runs in the forked child, before exec
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _send_pending_logs() -> None:
    """Send the run logs Prefect still holds to the server before it stops: otherwise
    Prefect's log shipper tries once the server is gone and prints "Error logging to API"
    on stderr at the command's exit. Waits at most 5 s; a failure here is not the run's."""
    try:
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=5)
    except Exception:  # noqa: BLE001 - the logs are a courtesy; the run's outcome stands
        pass


@contextlib.contextmanager
def owned_prefect_server(
    ui: bool = False, timeout: float = 120.0, log_file: Path | None = None
) -> Iterator[str]:
    """A ``prefect server start`` (its services, the UI when ``ui``) on a free local port, for
    this process only: ``PREFECT_API_URL`` points at it inside the block; it is stopped when
    the block ends and killed by the kernel if this process dies (``PR_SET_PDEATHSIG``), so a
    killed command leaves no server behind. Yields the API URL."""
    from prefect.settings import PREFECT_API_URL, temporary_settings  # Prefect loads on use

    from tsrate import TsrateError

    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    command = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
    command += ["--port", str(port)] + ([] if ui else ["--no-ui"])
    env = dict(os.environ, PREFECT_SERVER_ANALYTICS_ENABLED="false")
    env.pop("PREFECT_API_URL", None)
    output = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115
    # a session of its own: a terminal's Ctrl-C (SIGINT to the foreground process group)
    # reaches this process alone, which stops its work and then the server; a server
    # stopped first left serve's runner calling a dead API and reporting it gone
    process = subprocess.Popen(
        command,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent,
        start_new_session=True,
    )
    try:
        import httpx

        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise TsrateError(
                    f"the Prefect server exited at start (code {process.returncode}); start "
                    "one yourself (`prefect server start`) and set PREFECT_API_URL"
                )
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TsrateError(
                    f"the Prefect server did not answer within {timeout:.0f}s; start one "
                    "yourself (`prefect server start`) and set PREFECT_API_URL"
                )
            time.sleep(0.2)
        with temporary_settings({PREFECT_API_URL: url}):
            os.environ["PREFECT_API_URL"] = url  # for child processes (flow runs of serve)
            try:
                yield url
            finally:
                _send_pending_logs()
                os.environ.pop("PREFECT_API_URL", None)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if output is not subprocess.DEVNULL:
            output.close()
