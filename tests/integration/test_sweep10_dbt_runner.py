"""The dbt runner and tsrate's build with real dbt children, on a tiny project (round 10).

``tsrate.platform.dbt_runner`` starts ``python -m tsrate.platform.dbt_child`` with the build's
run, study and scope as env vars (read by the models when they run), streams its output
back, and can start the build's child ahead (``prepare_build``: parsed, then waiting for
the go on stdin) or return once the child released the warehouse (``release_early``; the
verdict of the data tests comes from ``finish_build``). These tests run the real runner and
the real child on a project of three small models, one unit test and two data tests, in
``TSRATE_PROJECT_DIR`` (a build of it takes seconds), with its own target folder each:

- what a build's models read is the run, study and scope the caller gave (or ``latest``,
  ``latest``, ``study``), by a plain child and by one started ahead;
- the build says its summary lines, writes its whole log beside the warehouse, makes the
  raw schema, and returns its lines (a plain build does not release early);
- a build that released early returns while its data tests still run (one reads a named
  pipe the test writes only then), and ``finish_build`` raises their failure by name;
- a failing data test, model or unit test fails the build, named;
- ``run_dbt`` makes the raw schema only for commands that build, and says dbt's own lines
  unless told otherwise; ``docs`` writes the site where asked (default: ``docs`` beside the
  warehouse) and refuses a warehouse that does not exist.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import duckdb
import pytest

from tests.integration.runner_fixture import tiny_project
from tests.integration.runner_project import schema_yml
from tsrate import TsrateError
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.dbt_child import RELEASED

pytestmark = pytest.mark.slow


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    yield from tiny_project(tmp_path, monkeypatch)


def query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql).fetchall()


def summaries(lines: list[str]) -> list[str]:
    prefix = "tsrate-dbt:"
    return [line[len(prefix) :].strip() for line in lines if line.startswith(prefix)]


def test_a_build_gives_its_models_the_run_study_and_scope_and_logs_beside_the_warehouse(tiny):
    project, warehouse, target = tiny
    said: list[str] = []
    lines = dbt.build("run-7", warehouse, said.append, None, target, study_id="study-3",
                      scope="run")  # fmt: skip
    assert query(warehouse, "select * from main.run_info") == [("run-7", "study-3", "run")]
    assert lines and said == summaries(lines)  # not verbose: the summary lines only
    assert any(line.startswith("data tests: 3 run") and "FAIL=0" in line for line in said)
    finished = [line.split() for line in lines if line.startswith("tsrate-dbt-progress:")]
    assert {words[4] for words in finished} == {"numbers", "doubled", "run_info"}  # each once
    assert len(finished) == 3 and all(words[2] == "of" for words in finished)
    assert sorted(int(words[1]) for words in finished) == [1, 2, 3]
    logs = list((warehouse.parent / "logs").glob("dbt-build-run-7-*.log"))
    assert len(logs) == 1 and logs[0].read_text().splitlines() == lines
    tables = query(warehouse, "select table_name from duckdb_tables() where schema_name = 'raw'")
    assert ("prices",) in tables and ("runs",) in tables  # made before dbt reads raw.*
    assert not Path(os.environ["TSRATE_WAREHOUSE"]).parent.exists()  # the given one only

    said.clear()
    dbt.build(None, warehouse, said.append, None, target)  # the defaults
    assert query(warehouse, "select * from main.run_info") == [("latest", "latest", "study")]
    assert list((warehouse.parent / "logs").glob("dbt-build-latest-*.log"))


def test_a_child_started_ahead_gets_the_run_on_its_stdin(tiny, monkeypatch):
    _, warehouse, target = tiny
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))  # the configured warehouse
    dbt.prepare_build(None, None, target)
    assert list(dbt._PREPARED) == [dbt._key(warehouse.resolve(), None, target)]
    said: list[str] = []
    dbt.build("run-ahead", warehouse, said.append, None, target, study_id="s", scope="run")
    assert "build started (dbt was started and parsed ahead)" in said
    assert not dbt._PREPARED  # used, not left waiting
    assert query(warehouse, "select * from main.run_info") == [("run-ahead", "s", "run")]


def _feed(pipe: Path, text: str, within: float = 180.0) -> bool:
    """Write ``text`` to the named pipe once a reader has it open (within ``within``
    seconds); False when none opened it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            time.sleep(0.1)
            continue
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return True
    return False


def test_a_build_released_early_returns_before_its_data_tests_end(tiny, monkeypatch, tmp_path):
    _, warehouse, target = tiny
    pipe = tmp_path / "verdict"
    os.mkfifo(pipe)
    monkeypatch.setenv("TINY_GATE", str(pipe))
    done = threading.Event()
    # a runner that waited for the end would wait for ever: the pipe is fed after a while
    safety = threading.Thread(target=lambda: done.wait(240) or _feed(pipe, "pass\n", 60))
    safety.start()
    said: list[str] = []
    try:
        got = dbt.build("r", warehouse, said.append, None, target, release_early=True)
        assert got == [] and dbt.pending_build(warehouse)
        assert RELEASED in said
        process = dbt._PENDING[str(warehouse.resolve())][0]
        assert process.poll() is None  # its data test waits for the pipe
        # the models are built and the file released: it opens read-only beside the child
        assert query(warehouse, "select m from main.doubled order by m") == [(2,), (4,)]
        assert _feed(pipe, "fail\nfail\npass\n")
        with pytest.raises(dbt.DbtError) as raised:
            dbt.finish_build(warehouse)
    finally:
        done.set()
        safety.join()
    assert "FAIL gate: 2 failing rows" in str(raised.value)
    assert not dbt.pending_build(warehouse)


def test_a_failing_data_test_model_or_unit_test_fails_the_build_by_name(tiny, monkeypatch):
    project, warehouse, target = tiny
    said: list[str] = []
    monkeypatch.setenv("TINY_LIMIT", "3")  # doubled's 4 is over it
    with pytest.raises(dbt.DbtError, match="FAIL no_big: 1 failing rows"):
        dbt.build("r", warehouse, said.append, None, target)
    assert any(line.startswith("data tests: 3 run") and "FAIL=1" in line for line in said)

    monkeypatch.delenv("TINY_LIMIT")
    monkeypatch.setenv("TINY_BREAK", "1")
    with pytest.raises(dbt.DbtError, match="ERROR model run_info"):
        dbt.build("r", warehouse, said.append, None, target, release_early=True)
    assert not dbt.pending_build(warehouse)  # it ended before releasing: raised at once

    monkeypatch.delenv("TINY_BREAK")
    (project / "models" / "schema.yml").write_text(schema_yml(3, 7))
    with pytest.raises(dbt.DbtError, match="doubled_doubles"):
        dbt.build("r", warehouse, said.append, None, target)


def test_run_dbt_makes_the_raw_schema_only_to_build_and_is_verbose_by_default(tiny):
    _, warehouse, target = tiny
    said: list[str] = []
    dbt.run_dbt(["parse"], None, warehouse, said.append, target)
    assert any("Running with dbt=" in line for line in said), said  # dbt's own lines
    assert not warehouse.exists()  # nothing to build: the warehouse is not touched

    dbt.run_dbt(["run", "--select", "numbers"], None, warehouse, lambda _: None, target)
    assert query(warehouse, "select n from main.numbers order by n") == [(1,), (2,)]
    tables = query(warehouse, "select table_name from duckdb_tables() where schema_name = 'raw'")
    assert ("prices",) in tables and ("runs",) in tables


def test_docs_are_written_where_asked_and_refused_without_a_warehouse(tiny, tmp_path):
    _, warehouse, _ = tiny
    with pytest.raises(TsrateError, match="no warehouse at"):
        dbt.docs(warehouse)
    dbt.run_dbt(["run"], None, warehouse, lambda _: None, tmp_path / "target")
    site = tmp_path / "site"
    assert dbt.docs(warehouse, lambda _: None, site) == site.resolve()
    assert (site / "static_index.html").is_file()
    assert not (warehouse.parent / "docs").exists()
    assert dbt.docs(warehouse, lambda _: None) == warehouse.parent / "docs"
    assert (warehouse.parent / "docs" / "static_index.html").is_file()


def test_the_child_module_runs_tsrates_build_by_its_first_argument_else_dbt(tiny):
    """``python -m tsrate.platform.dbt_child`` by hand: with no argument it is dbt's own
    command line (its usage), with ``tsrate-build`` alone tsrate's build of the project in
    the current folder."""
    import subprocess
    import sys

    project, warehouse, target = tiny
    warehouse.parent.mkdir(parents=True)
    env = dict(os.environ, TSRATE_WAREHOUSE=str(warehouse), DBT_PROFILES_DIR=str(project))
    env["DBT_TARGET_PATH"] = str(target)
    env.pop("TSRATE_DBT_PARENT_PID", None)
    module = [sys.executable, "-m", "tsrate.platform.dbt_child"]
    usage = subprocess.run(module, capture_output=True, text=True, env=env, timeout=300)
    said = usage.stdout + usage.stderr
    assert "Usage: " in said and "Traceback" not in said, said
    built = subprocess.run(
        [*module, "tsrate-build"], capture_output=True, text=True, env=env, cwd=project,
        timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "tsrate-dbt: data tests: 3 run" in built.stdout
    assert query(warehouse, "select m from main.doubled order by m") == [(2,), (4,)]
