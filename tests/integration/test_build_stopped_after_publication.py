"""``tsrate build`` after a run stopped after its snapshot was swapped in (left
``publishing``, its publication in the snapshot), in a study whose older run's only system
was withdrawn while the newer run could build: the build marks the newer run succeeded and
builds it (it rates the newer run's system), where its refusal of a study with every system
withdrawn used to judge the older run and refuse the build. A real dbt build of the project
on a small warehouse, the command run in process. The refusal's other cases:
tests/unit/test_build_withdrawn_before_lock.py."""

from __future__ import annotations

import dataclasses

import pytest

from tests.support.import_study import STUDY, import_warehouse
from tests.support.publish_warehouse import scored_warehouse
from tests.support.warehouses import read
from tsrate import cli
from tsrate.config import load_companies
from tsrate.platform.publish import publish
from tsrate.platform.published_paths import published_path
from tsrate.platform.warehouse import connect, set_run_status
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow


def test_the_build_rates_the_run_stopped_after_its_publication(
    tmp_path, monkeypatch, dbt_target, capsys
):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    with connect(warehouse) as con:
        ids = []
        for systems in (("naive",), ("seasonal_naive",)):
            study = dataclasses.replace(STUDY, systems=systems)
            done = run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
            finish_run(con, done.run_id, "forecasted")
            ids.append(done.run_id)
        older, newer = ids
        query = "select study_id from raw.runs where run_id = ?"
        (study_id,) = con.execute(query, [newer]).fetchone()
    # the older run's only system leaves the study while the newer run can build
    assert cli.main(["withdraw", "naive", "--study", study_id, "--no-build"]) == 0
    # then the newer run's build swapped its snapshot in and was killed before `succeeded`
    with connect(warehouse) as con:
        set_run_status(con, newer, "publishing")
    source = tmp_path / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    scored_warehouse(source, newer, rows=2)
    publish(source, newer, target=published_path(warehouse))
    capsys.readouterr()

    status = cli.main(["build", "--no-publish"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert f"run {newer} was stopped after its publication: marked succeeded" in out
    assert f"building the marts of run {newer} and its study" in out
    rated = read(warehouse, "select distinct run_id, system_id from marts.ratings")
    assert rated.values.tolist() == [[newer, "seasonal_naive"]]  # naive stays withdrawn
    runs = read(warehouse, "select run_id, status from raw.runs order by started_at")
    assert runs.values.tolist() == [[older, "forecasted"], [newer, "succeeded"]]
