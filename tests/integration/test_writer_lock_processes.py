"""The writer lock between real processes: another process holds it, a second writer
fails fast or waits, a killed holder leaves no stale lock, and the command line refuses a
held warehouse before it opens the file or imports Prefect."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tsrate.config import project_dir
from tsrate.platform.locking import WarehouseBusy, lock_path, writer_lock

HOLDER = textwrap.dedent(
    """
    import sys
    from tsrate.platform.locking import writer_lock

    with writer_lock(sys.argv[1]):
        print("locked", flush=True)
        sys.stdin.read()  # hold until the test closes stdin (or kills us)
    """
)


@pytest.fixture
def holder(tmp_path):
    """Another process holding the writer lock of ``tmp_path/tsrate.duckdb``."""
    warehouse = tmp_path / "tsrate.duckdb"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(warehouse)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(project_dir())),
    )
    assert process.stdout.readline().strip() == "locked"
    yield warehouse, process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_a_second_writer_fails_fast_naming_the_holder(holder):
    warehouse, process = holder
    started = time.monotonic()
    with pytest.raises(WarehouseBusy, match=f"pid {process.pid}") as caught:
        with writer_lock(warehouse):
            pytest.fail("two writers held the lock")
    assert time.monotonic() - started < 2
    assert "one writer at a time" in str(caught.value)
    assert str(lock_path(warehouse)) in str(caught.value)


def test_a_waiting_writer_says_so_and_gets_the_lock_when_the_holder_ends(holder):
    warehouse, process = holder
    said = []
    with pytest.raises(WarehouseBusy, match="after waiting 1s"):
        with writer_lock(warehouse, timeout=1, say=said.append):
            pass
    assert said and f"pid {process.pid}" in said[0]
    process.stdin.close()  # the holder finishes
    with writer_lock(warehouse, timeout=30):
        assert process.wait(timeout=10) == 0


def test_a_killed_holder_leaves_no_stale_lock(holder):
    warehouse, process = holder
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    with writer_lock(warehouse):
        pass


def test_the_lock_is_reentrant_within_a_process_and_released_after(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    with writer_lock(warehouse), writer_lock(warehouse):
        info = json.loads(lock_path(warehouse).read_text())
        assert info["pid"] == os.getpid()
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tsrate.platform.locking import writer_lock\n"
            "with writer_lock(sys.argv[1]): print('ok')",
            str(warehouse),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(project_dir())),
    )
    assert probe.stdout.strip() == "ok", probe.stderr


def test_cli_writers_refuse_a_held_warehouse(holder, monkeypatch, capsys):
    from tsrate.cli import main

    warehouse, process = holder
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert main(["ingest", "--tickers", "AAPL"]) == 2
    assert f"is being written by pid {process.pid}" in capsys.readouterr().err
    assert not warehouse.exists()  # nothing was opened, let alone written


def test_tsrate_run_refuses_a_held_warehouse_before_importing_prefect(holder):
    """The writer lock is checked before Prefect (seconds to import) is even loaded."""
    warehouse, process = holder
    script = (
        "import sys, time\n"
        "from tsrate.cli import main\n"
        "started = time.perf_counter()\n"
        "code = main(['run', '--systems', 'naive'])\n"
        "print(code, 'prefect' in sys.modules, round(time.perf_counter() - started, 2))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=dict(
            os.environ,
            PYTHONPATH=f"{project_dir() / 'src'}{os.pathsep}{project_dir()}",
            TSRATE_WAREHOUSE=str(warehouse),
        ),
        timeout=120,
    )
    code, prefect_loaded, _seconds = result.stdout.split()
    assert (code, prefect_loaded) == ("2", "False"), result.stderr
    assert f"is being written by pid {process.pid}" in result.stderr
    assert "Traceback" not in result.stderr
