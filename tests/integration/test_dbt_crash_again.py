"""A build dbt itself crashed in is built again once, on one thread (real dbt children).

dbt raising out of its build (no node failed: dbt or a library in its process did) ends
the child with status 2 and the summary line ``dbt build failed: <what it raised>``; the
parent (``tsrate.platform.dbt_runner``) then builds again once with ``TSRATE_DBT_THREADS=1``
(profiles.yml's threads), says so in one line, and keeps the first attempt's log. The crash
is dbt's own exception path, made to happen by the test hook ``TSRATE_TEST_DBT_CRASHES`` (a
file counting the crashes left: an event callback raising in dbt's main thread). Checked on
the tiny project of the runner tests, its profile reading the same env var, by every way a
build starts (plain, started ahead, released early, ``run_dbt``); a model that fails, or a
second crash, is not built again.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.integration.runner_fixture import tiny_project
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.dbt_child import CRASHES

pytestmark = pytest.mark.slow

AGAIN = "dbt crashed during the build"


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    yield from tiny_project(tmp_path, monkeypatch)


def crashes(monkeypatch, tmp_path: Path, count: int) -> Path:
    counter = tmp_path / "crashes"
    counter.write_text(str(count))
    monkeypatch.setenv(CRASHES, str(counter))
    monkeypatch.setenv(dbt.THREADS, "3")  # the first attempt's threads, as profiles.yml reads
    return counter


def logs(warehouse: Path) -> list[Path]:
    return sorted((warehouse.parent / "logs").glob("dbt-build-*.log"))


def test_a_crashed_build_is_built_again_once_on_one_thread(tiny, monkeypatch, tmp_path):
    project, warehouse, target = tiny
    counter = crashes(monkeypatch, tmp_path, 1)
    said: list[str] = []
    dbt.build("r1", warehouse, said.append, None, target)
    assert not counter.exists()
    again = [line for line in said if line.startswith(AGAIN)]
    assert len(again) == 1 and f"crash injected by {CRASHES}" in again[0], said
    assert "building again once, on one thread" in again[0] and "\n" not in again[0]
    second, first = logs(warehouse)  # "-again.log" sorts before ".log"
    assert second.name == first.name.replace(".log", "-again.log")
    assert "Concurrency: 3 threads" in first.read_text()
    assert "Concurrency: 1 threads" in second.read_text()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select run_id from main.run_info").fetchall() == [("r1",)]
        assert con.execute("select sum(m) from main.doubled").fetchone()[0] == 6


def test_a_second_crash_fails_the_build_with_what_dbt_raised(tiny, monkeypatch, tmp_path):
    project, warehouse, target = tiny
    counter = crashes(monkeypatch, tmp_path, 3)
    said: list[str] = []
    with pytest.raises(dbt.DbtError, match="dbt build failed: crash injected") as failed:
        dbt.build("r2", warehouse, said.append, None, target)
    assert counter.read_text() == "1"  # two attempts, not three
    assert failed.value.crash == f"crash injected by {CRASHES}"
    assert sum(line.startswith(AGAIN) for line in said) == 1
    assert len(logs(warehouse)) == 2


@pytest.mark.parametrize("way", ["ahead", "released early", "run_dbt"])
def test_every_way_a_build_starts_builds_again(tiny, monkeypatch, tmp_path, way):
    project, warehouse, target = tiny
    counter = crashes(monkeypatch, tmp_path, 1)
    said: list[str] = []
    if way == "ahead":
        dbt.prepare_build(warehouse, None, target)
        dbt.build("r3", warehouse, said.append, None, target)
    elif way == "released early":
        got = dbt.build("r3", warehouse, said.append, None, target, release_early=True)
        assert got == [] and dbt.pending_build(warehouse)  # the second attempt released early
        dbt.finish_build(warehouse)
    else:
        dbt.run_dbt(["tsrate-build"], None, warehouse, said.append, target, verbose=False,
                    env_vars={"TSRATE_RUN_ID": "r3"})  # fmt: skip
    assert not counter.exists()
    assert sum(line.startswith(AGAIN) for line in said) == 1, said
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select run_id from main.run_info").fetchall() == [("r3",)]


def test_a_failing_model_is_not_built_again(tiny, monkeypatch):
    project, warehouse, target = tiny
    monkeypatch.setenv("TINY_BREAK", "1")
    said: list[str] = []
    with pytest.raises(dbt.DbtError) as failed:
        dbt.build("r4", warehouse, said.append, None, target)
    assert failed.value.crash is None
    assert not any(line.startswith(AGAIN) for line in said)
    assert len(logs(warehouse)) == 1
