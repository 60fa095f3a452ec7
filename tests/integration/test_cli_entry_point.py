"""The real ``tsrate`` entry point, in a child process as a user starts it: a failure is one
line ``tsrate: error: ...`` on stderr (log lines included: nothing else says "error"), and
``--debug``, before or after the command, adds the traceback. Every other bad input is
checked in-process through the same function (tests/unit/test_cli_errors.py). A reader that
closes the pipe early (`| head -1`) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from tsrate.config import project_dir
from tsrate.platform.publish import published_path

#: The children import this checkout (src/ first), not an installed copy.
PYTHONPATH = os.pathsep.join([str(project_dir() / "src"), str(project_dir())])


def _tsrate(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH, TSRATE_PROJECT_DIR=str(project_dir()), **env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_child_prints_one_line_and_a_traceback_only_with_debug(tmp_path):
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database, just text\n" * 400)
    zones = tmp_path / "zones.csv"
    zones.write_text(
        "ticker,date,close\nAAPL,2022-01-03T00:00:00+00:00,10\nAAPL,2022-01-04T00:00:00-05:00,11\n"
    )
    prices = tmp_path / "prices.csv"
    prices.write_text("ticker,date,close\nAAPL,2022-01-03,10\nAAPL,2022-01-04,11\n")
    warehouse = {"TSRATE_WAREHOUSE": str(tmp_path / "wh" / "tsrate.duckdb")}
    cases = [
        ("ingest into junk", ["ingest", str(prices)], {"TSRATE_WAREHOUSE": str(junk)}, "DuckDB: "),
        ("mixed time zones", ["ingest", str(zones)], warehouse, "the dates mix time zones"),
    ]
    for name, argv, env, expected in cases:
        quiet = _tsrate(*argv, env=env, cwd=tmp_path)
        assert quiet.returncode == 2, (name, quiet.stdout, quiet.stderr)
        assert "Traceback" not in quiet.stderr + quiet.stdout, (name, quiet.stderr)
        last = quiet.stderr.strip().splitlines()[-1]
        assert last.startswith("tsrate: error: ") and expected in last, (name, quiet.stderr)
        errors = [line for line in quiet.stderr.splitlines() if "error" in line.lower()]
        assert errors == [last], (name, quiet.stderr)  # nothing else says "error"
        loud = _tsrate("--debug", *argv, env=env, cwd=tmp_path)
        assert loud.returncode == quiet.returncode, name
        assert "Traceback (most recent call last)" in loud.stderr, (name, loud.stderr)
        assert loud.stderr.strip().splitlines()[-1] == last, name
    debug_after = _tsrate(*cases[1][1], "--debug", env=cases[1][2], cwd=tmp_path)
    assert "Traceback" in debug_after.stderr  # --debug works after the command too


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`tsrate query ... | head -1`: the reader leaves early; no 'unexpected BrokenPipeError'."""
    live = tmp_path / "warehouse" / "tsrate.duckdb"
    snapshot = published_path(live)  # what `tsrate query` reads
    snapshot.parent.mkdir(parents=True)
    con = duckdb.connect(str(snapshot))
    con.execute("create schema marts")
    con.execute("create table marts.big as select range as i from range(200000)")
    con.close()
    process = subprocess.Popen(
        [sys.executable, "-m", "tsrate.cli", "query", "from marts.big", "--limit", "200000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=PYTHONPATH, TSRATE_WAREHOUSE=str(live)),
    )
    assert process.stdout.readline().split() == [b"i"]
    process.stdout.close()  # what `head -1` does after its line
    stderr = process.stderr.read().decode()
    code = process.wait(timeout=60)
    assert stderr == ""
    assert code == 141  # 128 + SIGPIPE, as a Unix tool killed by the closed pipe


def test_the_command_exits_without_the_interpreter_teardown_but_after_every_flush(tmp_path):
    """The ``tsrate`` script is :func:`tsrate.cli.entry`: main's status, piped output
    flushed, non-daemon threads joined and atexit handlers run (logging, Prefect), then
    ``os._exit`` instead of the interpreter's module teardown (about 0.5 s)."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "tsrate"]
    assert script.value == "tsrate.cli:entry"
    duckdb.connect(str(tmp_path / "w.duckdb")).close()  # an (empty) live warehouse to query
    child = (
        "import atexit, sys, threading, time\n"
        "from tsrate.cli import entry\n"
        "atexit.register(lambda: print('atexit handler ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), print('thread finished'))).start()\n"
        "sys.argv = ['tsrate', *sys.argv[1:]]\n"
        "entry()\n"
    )
    run = lambda *argv: subprocess.run(  # noqa: E731 - a local shorthand
        [sys.executable, "-c", child, *argv],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH, TSRATE_WAREHOUSE=str(tmp_path / "w.duckdb")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    ok = run("query", "select 7 as seven", "--live", "--format", "csv")
    assert ok.returncode == 0, ok.stderr
    lines = ok.stdout.splitlines()  # the thread's line may come before the query's
    assert [line for line in lines if "thread" not in line] == ["seven", "7", "atexit handler ran"]
    assert "thread finished" in lines
    failed = run("query", "select * from no_such_table", "--live")
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines()[-1].startswith("tsrate: error: ")
    assert sorted(failed.stdout.splitlines()) == ["atexit handler ran", "thread finished"]
    assert failed.stdout.splitlines()[-1] == "atexit handler ran"
