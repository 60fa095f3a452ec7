"""``tsrate build``'s refusal of a study whose every system is withdrawn: made before the
writer lock on the live file opened read-only (a refused call leaves no lock file), left to
the check under the lock while another process writes, and judging the run the build will
build: a run stopped after its snapshot was swapped in (left ``publishing``, its publication
in the snapshot) is built, as the build marks it succeeded first. In process, on a small
real warehouse: a run of the study forecasting ``naive``, then a newer run of the same study
forecasting ``seasonal_naive``, then ``naive`` withdrawn from the study. The build itself
in that state: tests/integration/test_build_stopped_after_publication.py."""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil

import pytest

from tests.support.import_study import STUDY
from tests.support.locks import another_writer
from tests.support.publish_warehouse import scored_warehouse
from tsrate import TsrateError, cli
from tsrate.commands.pipeline import check_build, check_build_before_lock
from tsrate.config import load_companies
from tsrate.platform.locking import lock_path
from tsrate.platform.publish import publish
from tsrate.platform.published_paths import published_path
from tsrate.platform.warehouse import connect, set_run_status
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

OLDER = dataclasses.replace(STUDY, systems=("naive",))
NEWER = dataclasses.replace(STUDY, systems=("seasonal_naive",))
ALL_OUT = "would rate no system: every one is withdrawn (naive)"


@pytest.fixture(scope="module")
def withdrawn(warehouse, tmp_path_factory):
    """The module's warehouse after the two runs and the withdrawal: (warehouse, study id,
    the older run, the newer run)."""
    with connect(warehouse) as con:
        ids = []
        for study in (OLDER, NEWER):
            done = run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
            finish_run(con, done.run_id, "forecasted")
            ids.append(done.run_id)
        study_ids = con.execute(
            "select distinct study_id from raw.runs where run_id in (?, ?)", ids
        ).fetchall()
    assert len(study_ids) == 1  # the systems are not part of the study
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSRATE_WAREHOUSE", str(warehouse))
        assert cli.main(["withdraw", "naive", "--study", study_ids[0][0], "--no-build"]) == 0
    return warehouse, study_ids[0][0], *ids


@pytest.fixture
def copy(withdrawn, tmp_path, monkeypatch):
    """A copy of the module's warehouse as TSRATE_WAREHOUSE, with no lock file and no
    snapshot: (warehouse, study id, older run, newer run)."""
    source, study_id, older, newer = withdrawn
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    shutil.copy(source, warehouse)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    return warehouse, study_id, older, newer


def _newer_run(warehouse, run_id: str, status: str) -> None:
    with connect(warehouse) as con:
        if status == "publishing":
            set_run_status(con, run_id, status)
        else:
            finish_run(con, run_id, status, "a test failure")


def _published(warehouse, run_id: str) -> None:
    """The snapshot a publish of ``run_id`` swapped in (its ``published_runs`` names it)."""
    source = warehouse.parent.parent / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    scored_warehouse(source, run_id, rows=2)
    publish(source, run_id, target=published_path(warehouse))


def _args(study: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(run_id=None, study=study, no_publish=True)


def test_the_refusal_comes_before_the_lock_and_leaves_no_lock_file(copy, capsys):
    warehouse, study_id, older, newer = copy
    _newer_run(warehouse, newer, "build_failed")  # the build falls back to the older run
    before = warehouse.read_bytes()
    assert not lock_path(warehouse).exists()
    for argv in (["build"], ["build", "--study", study_id]):
        capsys.readouterr()
        assert cli.main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and f"), run {older}, {ALL_OUT}" in err, err
        assert len(err.splitlines()) == 1
        assert not lock_path(warehouse).exists()  # no lock was taken: no file left behind
    assert warehouse.read_bytes() == before


@pytest.mark.parametrize("study", [None, "the study"])
def test_a_run_stopped_after_its_publication_is_the_run_judged(copy, study):
    """The newer run, left publishing with its publication in the snapshot, is what the
    build builds (it marks it succeeded first): it rates seasonal_naive, so no refusal,
    before the lock or under it. Without its publication in the snapshot the build marks
    it interrupted and builds the older run, whose only system is withdrawn: refused."""
    warehouse, study_id, older, newer = copy
    study = study_id if study else None
    _newer_run(warehouse, newer, "publishing")
    with pytest.raises(TsrateError, match=re.escape(f"), run {older}, {ALL_OUT}")):
        check_build_before_lock(_args(study))  # stopped before its swap: not published
    _published(warehouse, newer)
    args = _args(study)
    check_build_before_lock(args)
    check_build(args, warehouse)  # the same judgement under the lock
    assert not lock_path(warehouse).exists()


def test_a_system_brought_back_by_the_run_stopped_after_its_publication_counts(copy):
    """The newer run's build was killed while building (interrupted); a later run forecasts
    ``naive`` again (it brings it back) and is stopped after its publication: the build
    builds that run, ``naive`` rated. Without its publication the build falls back to the
    older run, ``naive`` withdrawn there: refused."""
    warehouse, study_id, older, newer = copy
    _newer_run(warehouse, newer, "interrupted")
    with connect(warehouse) as con:
        again = run_forecasts(con, OLDER, load_companies(), workers=1, progress=lambda _: None)
        set_run_status(con, again.run_id, "publishing")
    for study in (None, study_id):
        with pytest.raises(TsrateError, match=re.escape(f"), run {older}, {ALL_OUT}")):
            check_build_before_lock(_args(study))
    _published(warehouse, again.run_id)
    for study in (None, study_id):
        check_build_before_lock(_args(study))


def test_while_another_process_writes_the_check_is_left_to_the_lock(copy, capsys):
    """A writer holds the lock: the read-only open before the lock is not tried (it would
    get in the writer's way), the build names the busy warehouse, and the check under the
    lock judges once the writer is gone."""
    warehouse, study_id, older, newer = copy
    _newer_run(warehouse, newer, "build_failed")
    args = _args(study_id)
    with another_writer(warehouse):
        check_build_before_lock(args)  # no judgement, no error
        assert cli.main(["build", "--study", study_id]) == 2
    err = capsys.readouterr().err
    assert "is being written by" in err and "one writer at a time" in err, err
    assert ALL_OUT not in err and "would get in its way" not in err
    with pytest.raises(TsrateError, match=re.escape(f"), run {older}, {ALL_OUT}")):
        check_build(args, warehouse)


def test_the_judgement_is_made_again_under_the_lock(copy):
    """Judged before the lock on a buildable newer run (it rates seasonal_naive), then that
    run's build fails in another process while this build waits for the lock: the build
    would fall back to the older run, every system withdrawn: refused under the lock."""
    warehouse, study_id, older, newer = copy
    _newer_run(warehouse, newer, "forecasted")
    for study in (None, study_id):
        args = _args(study)
        check_build_before_lock(args)  # nothing to refuse yet
        check_build(args, warehouse)
    args = _args(study_id)
    check_build_before_lock(args)
    _newer_run(warehouse, newer, "build_failed")  # meanwhile, before the lock
    with pytest.raises(TsrateError, match=re.escape(f"), run {older}, {ALL_OUT}")):
        check_build(args, warehouse)
