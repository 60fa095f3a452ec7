"""The pre-flight check of ``tsrate run`` and ``tsrate build`` (a real folder where the
published ``parquet`` link belongs is refused before any work) holds for every other
publisher too: ``tsrate import`` / ``import-predictions``, the pipeline flow (the runs that
``tsrate serve`` schedules), ``tsrate serve`` itself and the suites' flows. Before, each
found the folder only when its publish swapped the link in, after the work.

The flows are called as the plain functions they are without a Prefect API (``.fn``).
Where a publisher takes the warehouse writer lock after its check, another writer holds
the lock here (a descriptor of this process that is not registered as ours: ``flock``
locks belong to an open file), so one that got past the check stops at the lock at once,
before it writes or starts anything; the others get an input that fails at once past the
check.
"""

from __future__ import annotations

import pytest

from flows.pipeline import pipeline_flow
from tests.support import locks, published_link
from tests.support.published_link import env_warehouse, files, refusal
from tsrate import TsrateError, cli
from tsrate.platform.locking import lock_path
from tsrate.platform.published_paths import check_publish


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    return env_warehouse(tmp_path, monkeypatch)


@pytest.fixture
def another_writer(warehouse):
    with locks.another_writer(warehouse):
        yield


@pytest.fixture
def copied_over(warehouse):
    """``published/parquet`` as a real folder holding a copied Parquet file."""
    return published_link.copied_over(warehouse.parent / "published")


def test_check_publish_looks_beside_the_warehouses_snapshot(warehouse, copied_over):
    with pytest.raises(TsrateError) as refused:
        check_publish(str(warehouse))
    assert str(refused.value) == refusal(copied_over)
    check_publish(warehouse.parent / "elsewhere" / "tsrate.duckdb")  # nothing there: passes


@pytest.mark.parametrize(
    "command",
    [
        ["import", "predictions.csv", "--system", "my_model"],
        ["import-predictions", "predictions.csv", "--system", "my_model", "--manifest", "x"],
    ],
)
def test_import_refuses_it_before_it_reads_anything(
    warehouse, copied_over, tmp_path, monkeypatch, capsys, command
):
    monkeypatch.chdir(tmp_path)
    # predictions.csv exists (the CLI names a missing one at once) but is no import file:
    # read first, it would be refused for its content
    (tmp_path / "predictions.csv").write_text("not,an,import\n")
    before = files(tmp_path)
    assert cli.main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tsrate: error: {refusal(copied_over)}"]
    # the writer lock's empty file, which the CLI takes before any writing command, is all
    assert files(tmp_path) == {**before, str(lock_path(warehouse)): b""}


def test_import_that_only_stores_does_not_need_the_link(warehouse, copied_over, tmp_path, capsys):
    """Past the check, the system is looked up first: an unknown one is refused."""
    junk = tmp_path / "predictions.csv"
    junk.write_text("not,an,import\n")
    assert cli.main(["import", str(junk), "--system", "my_model", "--no-build"]) == 2
    err = capsys.readouterr().err
    assert "real folder" not in err and "unknown system 'my_model'" in err


@pytest.mark.usefixtures("another_writer")
def test_the_pipeline_flow_refuses_it_before_the_lock(
    warehouse, copied_over, tmp_path, monkeypatch
):
    """A scheduled run (``tsrate serve``'s weekly rating) is the pipeline flow itself; the
    snapshot checked is the one beside the warehouse given."""
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "default" / "tsrate.duckdb"))
    before = files(tmp_path)
    with pytest.raises(TsrateError) as refused:
        pipeline_flow.fn(warehouse=str(warehouse), source="none")
    assert str(refused.value) == refusal(copied_over)
    assert files(tmp_path) == before


@pytest.mark.usefixtures("another_writer")
def test_the_nightly_refresh_that_does_not_rate_passes_the_check(warehouse, copied_over):
    with pytest.raises(TsrateError, match="being written by another process"):
        pipeline_flow.fn(warehouse=str(warehouse), source="none", rate=False)


def test_serve_refuses_it_before_it_asks_for_a_server(warehouse, copied_over):
    """On a configured API that does not answer, a serve past the check would say so."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from tsrate.platform import serve

    config = serve.ScheduleConfig.from_vars({})
    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        with pytest.raises(TsrateError) as refused:
            serve.serve(config, say=print)
    assert str(refused.value) == refusal(copied_over)


def _suite_flows():
    from flows.interpretability import interpretability_flow
    from flows.reasoning import reasoning_flow
    from flows.understanding import understanding_flow

    return [understanding_flow, reasoning_flow, interpretability_flow]


@pytest.mark.usefixtures("another_writer")
@pytest.mark.parametrize("index", [0, 1, 2], ids=["understanding", "reasoning", "interp"])
def test_a_suite_flow_refuses_it_before_the_lock(
    warehouse, copied_over, tmp_path, monkeypatch, index
):
    """The snapshot checked is the one beside the warehouse given, not the default's."""
    flow = _suite_flows()[index]
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "default" / "tsrate.duckdb"))
    before = files(tmp_path)
    with pytest.raises(TsrateError) as refused:
        flow.fn(warehouse=str(warehouse))
    assert str(refused.value) == refusal(copied_over)
    assert files(tmp_path) == before
    # stored only (--no-build): no publish, no check; on to the lock
    with pytest.raises(TsrateError, match="being written by another process"):
        flow.fn(warehouse=str(warehouse), build=False)


@pytest.mark.usefixtures("another_writer")
def test_a_suite_flow_checks_the_default_warehouses_snapshot(warehouse, copied_over):
    """No warehouse given: the one TSRATE_WAREHOUSE names, whose snapshot is beside it."""
    with pytest.raises(TsrateError) as refused:
        _suite_flows()[1].fn()
    assert str(refused.value) == refusal(copied_over)


@pytest.mark.parametrize("suite", ["understanding", "interpretability", "reasoning"])
def test_a_suite_build_refuses_it_before_it_reads_the_warehouse(
    warehouse, copied_over, tmp_path, capsys, suite
):
    """``tsrate suite NAME build`` checks before it looks for a stored run (the warehouse does
    not even exist here: without the check it would say so instead)."""
    before = files(tmp_path)
    assert cli.main(["suite", suite, "build"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tsrate: error: {refusal(copied_over)}"]
    assert files(tmp_path) == before  # refused before the writer lock: no lock file either
