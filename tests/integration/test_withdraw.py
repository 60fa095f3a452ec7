"""`tsrate withdraw SYSTEM`: a system imported into a study by mistake leaves the study's
marts at the build the command runs, its stored forecasts kept; a later import of it brings
it back. Real dbt builds of the project on a small warehouse (the import study of
tests/support/import_study.py, its two baselines); the command itself run as a user runs it.
Also: ``--study`` of a study whose newest run is not the newest overall builds that study
(its newest run), and the last system of a study is refused before anything is written or
built. The refusals: tests/unit/test_withdraw_refusals.py."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from tests.integration.imported_system import METADATA_YAML, prediction_file, tsrate_cli
from tests.support.import_study import STUDY, import_warehouse
from tests.support.systems_listing import listing_entries
from tests.support.warehouses import read, rows
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow

BASELINES = dataclasses.replace(STUDY, systems=("naive", "seasonal_naive"))
OTHER = dataclasses.replace(STUDY, horizon=4, systems=("naive",))
RATED = "select distinct run_id, system_id from marts.ratings"
STORED = "select count(*) from raw.forecasts where system_id = 'external_llm'"


def _imported(tmp_path, monkeypatch, dbt_target):  # noqa: ANN001, ANN202 - pytest's fixtures
    """A warehouse with the baselines and ``external_llm`` imported with its metadata:
    (warehouse, the prediction file, the import)."""
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    predictions, _ = prediction_file(warehouse, tmp_path)
    metadata = yaml.safe_load(METADATA_YAML)
    with connect(warehouse) as con:
        first = import_forecasts(
            con, predictions, "external_llm", BASELINES, workers=1, metadata=metadata
        )
    return warehouse, predictions, first


def test_a_withdrawn_import_leaves_the_marts_until_it_is_imported_again(
    tmp_path, monkeypatch, dbt_target
):
    warehouse, predictions, first = _imported(tmp_path, monkeypatch, dbt_target)
    (stored,) = rows(warehouse, STORED)
    assert stored[0] > 0

    done = tsrate_cli(warehouse, "withdraw", "external_llm", "--reason", "a test id")
    assert done.returncode == 0, done.stderr
    assert "withdrew 'external_llm' from study " in done.stdout
    assert f"({first.study_id}, the newest run)" in done.stdout
    assert f"run {first.run_id} built and published" in done.stdout  # the build ran
    rated = read(warehouse, RATED)
    assert set(rated["system_id"]) == {"naive", "seasonal_naive"}
    assert set(rated["run_id"]) == {first.run_id}
    provenance = read(warehouse, "select distinct system_id from marts.run_provenance")
    assert "external_llm" not in set(provenance["system_id"])
    assert rows(warehouse, STORED) == [stored]  # nothing deleted
    assert rows(warehouse, "select study_id, system_id, reason from raw.study_withdrawals") == [
        (first.study_id, "external_llm", "a test id")
    ]
    studies = tsrate_cli(warehouse, "studies")
    assert studies.returncode == 0, studies.stderr
    assert "systems: naive, seasonal_naive  withdrawn: external_llm" in studies.stdout
    systems = tsrate_cli(warehouse, "systems")
    line = next(x for x in listing_entries(systems.stdout) if x.startswith("external_llm "))
    assert "; withdrawn " in line

    # a later import of it (the same file: its partitions reused) brings it back
    with connect(warehouse) as con:
        again = import_forecasts(con, predictions, "external_llm", BASELINES, workers=1)
    dbt.build(
        warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
        select="+ratings +run_provenance",
    )  # fmt: skip
    rated = read(warehouse, RATED)
    assert set(rated["system_id"]) == {"naive", "seasonal_naive", "external_llm"}
    assert set(rated["run_id"]) == {again.run_id}
    assert rows(warehouse, STORED) == [stored]  # reused, not stored twice
    studies = tsrate_cli(warehouse, "studies")
    assert "systems: external_llm, naive, seasonal_naive" in studies.stdout
    assert "withdrawn" not in studies.stdout


def test_an_import_that_forecasts_a_withdrawn_baseline_says_it_brings_it_back(
    tmp_path, monkeypatch, dbt_target
):
    warehouse, predictions, first = _imported(tmp_path, monkeypatch, dbt_target)
    done = tsrate_cli(warehouse, "withdraw", "naive", "--reason", "not wanted")
    assert done.returncode == 0, done.stderr
    said: list[str] = []
    with connect(warehouse) as con:
        import_forecasts(
            con, predictions, "external_llm", BASELINES, workers=1, progress=said.append
        )
    back = [line for line in said if "this import brings it back" in line]
    assert len(back) == 1, said
    assert back[0].startswith("naive was withdrawn from study ")
    assert "(not wanted): this import brings it back into the study's marts" in back[0]
    # without the baselines nothing of the study's own is forecast: no such line
    said.clear()
    with connect(warehouse) as con:
        import_forecasts(
            con, predictions, "external_llm", BASELINES, workers=1, progress=said.append,
            baselines=False,
        )  # fmt: skip
    assert not [line for line in said if "brings it back" in line], said


def test_withdrawing_from_an_older_study_builds_that_study_and_keeps_its_last_system(
    tmp_path, monkeypatch, dbt_target
):
    warehouse, _, first = _imported(tmp_path, monkeypatch, dbt_target)
    with connect(warehouse) as con:
        later = run_forecasts(con, OTHER, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "forecasted")  # the newest run overall, not built
        (other,) = con.execute(
            "select study_id from raw.runs where run_id = ?", [later.run_id]
        ).fetchone()
    assert other != first.study_id

    done = tsrate_cli(warehouse, "withdraw", "external_llm", "--study", first.study_id)
    assert done.returncode == 0, done.stderr
    assert f"({first.study_id}, --study {first.study_id}) at " in done.stdout
    assert f"building the marts of run {first.run_id} and its study" in done.stdout
    assert f"run {first.run_id} built and published" in done.stdout
    rated = read(warehouse, "select distinct run_id, study_id, system_id from marts.ratings")
    assert set(rated["run_id"]) == {first.run_id}
    assert set(rated["study_id"]) == {first.study_id}
    assert set(rated["system_id"]) == {"naive", "seasonal_naive"}
    status = "select status from raw.runs where run_id = ?"
    with connect(warehouse, read_only=True) as con:
        assert con.execute(status, [later.run_id]).fetchone() == ("forecasted",)

    # the newest run's study has one system: withdrawing it is refused, nothing built
    done = tsrate_cli(warehouse, "withdraw", "naive")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.startswith("tsrate: error: 'naive' is the last system rated in study ")
    assert f"({other}): withdrawing it would leave the study nothing to rate" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert rows(warehouse, "select study_id, system_id from raw.study_withdrawals") == [
        (first.study_id, "external_llm")
    ]
    assert set(read(warehouse, "select distinct run_id from marts.ratings")["run_id"]) == {
        first.run_id
    }
