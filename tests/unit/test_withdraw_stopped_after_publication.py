"""``tsrate withdraw`` judges the run the build after it builds: a run stopped after its
snapshot was swapped in (left ``publishing``, its publication in the snapshot) counts as
succeeded, as the build marks it first. In process, on a small real warehouse: a run of the
study forecasting ``naive``, then a newer run of the same study forecasting
``seasonal_naive``, left publishing. Withdrawing ``naive`` leaves ``seasonal_naive`` rated
when the newer run is published; without its publication the build falls back to the older
run, where ``naive`` is the last system: refused."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from tests.support.import_study import STUDY
from tests.support.publish_warehouse import scored_warehouse
from tsrate import cli
from tsrate.config import load_companies
from tsrate.platform.publish import publish
from tsrate.platform.published_paths import published_path
from tsrate.platform.warehouse import connect, set_run_status
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.studies import withdrawn_systems

OLDER = dataclasses.replace(STUDY, systems=("naive",))
NEWER = dataclasses.replace(STUDY, systems=("seasonal_naive",))
#: another study (one ticker): its run, stopped after its publication, is the newest
OTHER = dataclasses.replace(STUDY, tickers=("AAPL",), systems=("seasonal_naive",))


@pytest.fixture(scope="module")
def two_runs(warehouse):
    """(warehouse, the newer run's id): the older run forecasted, the newer left publishing."""
    with connect(warehouse) as con:
        older = run_forecasts(con, OLDER, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, older.run_id, "forecasted")
        newer = run_forecasts(con, NEWER, load_companies(), workers=1, progress=lambda _: None)
        set_run_status(con, newer.run_id, "publishing")
    return warehouse, newer.run_id


@pytest.fixture
def live(two_runs, tmp_path, monkeypatch):
    source, newer = two_runs
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    shutil.copy(source, warehouse)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    return warehouse, newer


def _withdrawn(warehouse) -> list[str]:
    with connect(warehouse, read_only=True) as con:
        return [row["system_id"] for row in withdrawn_systems(con)]


@pytest.mark.parametrize("study", [None, "by id"])
def test_a_run_stopped_after_its_publication_keeps_the_study_rated(live, study, capsys):
    warehouse, newer = live
    source = warehouse.parent.parent / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    scored_warehouse(source, newer, rows=2)
    publish(source, newer, target=published_path(warehouse))
    argv = ["withdraw", "naive", "--no-build"]
    if study:
        with connect(warehouse, read_only=True) as con:
            argv += ["--study", con.execute("select study_id from raw.runs").fetchone()[0]]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert "withdrew 'naive'" in capsys.readouterr().out
    # the withdrawal is recorded; the listing reads the newer run as the build will
    with connect(warehouse, read_only=True) as con:
        assert con.execute("select system_id from raw.study_withdrawals").fetchall() == [("naive",)]


def test_not_published_the_older_run_is_judged_and_naive_is_its_last_system(live, capsys):
    warehouse, _ = live
    assert cli.main(["withdraw", "naive", "--no-build"]) == 2
    err = capsys.readouterr().err
    assert "'naive' is the last system rated in study" in err, err
    assert _withdrawn(warehouse) == []
    with connect(warehouse, read_only=True) as con:
        assert con.execute("select count(*) from raw.study_withdrawals").fetchone() == (0,)


def test_without_study_the_default_is_the_stopped_runs_study(live, capsys):
    """A newest run of another study stopped after its publication: the build builds that
    study, so withdraw (no --study) names it, where ``naive`` has no forecasts; without the
    publication it would be the first study's, where ``naive`` is the last system."""
    warehouse, newer = live
    with connect(warehouse) as con:
        finish_run(con, newer, "build_failed", "a test failure")
        other = run_forecasts(con, OTHER, load_companies(), workers=1, progress=lambda _: None)
        set_run_status(con, other.run_id, "publishing")
        other_study = con.execute(
            "select study_id from raw.runs where run_id = ?", [other.run_id]
        ).fetchone()[0]
    source = warehouse.parent.parent / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    scored_warehouse(source, other.run_id, rows=2)
    publish(source, other.run_id, target=published_path(warehouse))
    assert cli.main(["withdraw", "naive", "--no-build"]) == 2
    err = capsys.readouterr().err
    assert "system 'naive' has no forecasts in study" in err and other_study in err, err
