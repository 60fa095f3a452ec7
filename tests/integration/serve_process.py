"""`tsrate serve` as a user starts it, a run triggered on its weekly deployment, and the
processes a stopped serve or run leaves (Linux /proc), for the operations tests (child
processes: integration tests only)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.integration.killed_runs import OVERRIDES, SELECT
from tsrate.config import project_dir


def start_serve(env: dict[str, str], log: Path) -> subprocess.Popen:
    """`python -m tsrate.cli serve` in its own process group (the test can list and kill
    it), its output in ``log``."""
    with open(log, "w") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "tsrate.cli", "serve"],
            cwd=project_dir(),
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for_line(serve: subprocess.Popen, log: Path, text: str, seconds: float) -> str:
    """Wait until ``log`` holds ``text`` (serve still running, within ``seconds``); return
    the log's text."""
    deadline = time.monotonic() + seconds
    while text not in (seen := log.read_text()):
        assert serve.poll() is None and time.monotonic() < deadline, seen[-3000:]
        time.sleep(0.5)
    return seen


def run_weekly(log: Path, workers: int, timeout: float):  # noqa: ANN201 - a FlowRun
    """Trigger the tiny study on serve's weekly deployment (waiting ``timeout`` s for it to
    finish; 0: not at all), retrying until the runner has registered its deployments."""
    from prefect.deployments import run_deployment

    deadline = time.monotonic() + 120
    while True:
        try:
            return run_deployment(
                "tsrate-pipeline/tsrate-weekly",
                parameters={"overrides": OVERRIDES, "select": SELECT, "workers": workers},
                timeout=timeout,
            )
        except Exception:  # noqa: BLE001 - not registered yet
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(2)


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                children = {int(child) for child in task.read_text().split()}
            except OSError:
                continue
            todo += sorted(children - found)
            found |= children
    return found


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def wait_gone(pids: set[int], seconds: float) -> dict[int, str]:
    """The processes of ``pids`` still alive after ``seconds``, with their command lines."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    alive = {}
    for pid in pids:
        if _alive(pid):
            try:
                alive[pid] = Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")[:200]
            except OSError:
                continue
    return alive
