"""The warehouse writer slot after the Prefect server that `tsrate serve` owns restarts.

A server keeps a global concurrency limit's taken slots in its database and their leases in
memory. A run killed while it held the slot (with the serve that owned the server) leaves the
slot taken after a restart, with no lease left to expire (seen by hand: still taken 75 s
after the restart, past the 60 s lease; a server that stays up expired a dead holder's lease
within 80 s), so every later run waited for it in vain. `tsrate serve` on a server it
started releases it (`ensure_writer_limit(release_held=True)`); on a server it does not own,
the slot is left to that server's leases."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tsrate.platform.locking import WRITER_LEASE_SECONDS, WRITER_LIMIT, ensure_writer_limit
from tsrate.platform.prefect_server import owned_prefect_server

pytestmark = pytest.mark.slow

#: a process that takes the writer slot inside a flow run, says so, and waits to be killed
HOLDER = f"""
import time
from prefect import flow
from prefect.concurrency.sync import concurrency

@flow
def hold():
    with concurrency({WRITER_LIMIT!r}, occupy=1, timeout_seconds=60,
                     lease_duration={WRITER_LEASE_SECONDS}, strict=True):
        print("HELD", flush=True)
        time.sleep(600)

hold()
"""


def _taken() -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(WRITER_LIMIT).active_slots


def test_serve_releases_a_slot_left_taken_across_a_restart_of_its_own_server(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    with owned_prefect_server() as url:
        ensure_writer_limit()
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER],
            env={**os.environ, "PREFECT_API_URL": url},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert holder.stdout.readline().strip() == "HELD"
            assert _taken() == 1
        finally:
            holder.kill()  # killed while writing, with the server (as serve's kernel kill does)
            holder.wait(timeout=30)
    with owned_prefect_server():  # the same database, no lease in memory
        assert _taken() == 1
        ensure_writer_limit()  # a server serve does not own: the slot is left alone
        assert _taken() == 1
        ensure_writer_limit(release_held=True)  # its own server: released
        assert _taken() == 0
