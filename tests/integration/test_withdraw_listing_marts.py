"""The withdrawal listing (``tsrate studies``, ``tsrate systems``, ``tsrate withdraw``'s own
checks: :func:`tsrate.robustness.studies.withdrawn_systems`) restates in Python the rule
``int_run_partitions_selected`` applies in SQL. Here both meet on real dbt builds of one
warehouse, through the rule's cases: after each step the study is built as ``tsrate build
--study`` builds it, and the systems its marts leave out of what the build reads
(:func:`tsrate.robustness.withdrawals.systems_held`) must be exactly the ones listed as
withdrawn.

The cases, in order: an imported system withdrawn; a system withdrawn from another study
(only that study's marts change); a withdrawn system forecast again by a run that did not
complete (still out); then by a run that did (back); a system withdrawn and forecast again
by a newer run whose build failed (the build takes the older run: still out); the import
again (the system and its baselines back)."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from tests.integration.imported_system import METADATA_YAML, prediction_file
from tests.support.import_study import STUDY, import_warehouse
from tests.support.warehouses import rows
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.studies import withdrawn_systems
from tsrate.robustness.withdrawals import built_run, systems_held, withdraw_system

pytestmark = pytest.mark.slow

BASELINES = dataclasses.replace(STUDY, systems=("naive", "seasonal_naive"))
OTHER = dataclasses.replace(BASELINES, horizon=4)


def _left_out(warehouse, dbt_target, study_id: str) -> set[str]:  # noqa: ANN001 - Paths
    """Build the study's marts as ``tsrate build --study`` does; the systems they leave out,
    checked equal to the listing's; the run built is the one tsrate's checks take."""
    dbt.build(
        warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
        select="+run_provenance", study_id=study_id,
    )  # fmt: skip
    ((run_id,),) = rows(warehouse, "select run_id from intermediate.int_runs_selected")
    rated = {r[0] for r in rows(warehouse, "select distinct system_id from marts.run_provenance")}
    with connect(warehouse, read_only=True) as con:
        assert built_run(con, study_id) == run_id  # the run tsrate's checks take is dbt's
        held = set(systems_held(con, run_id))
        listed = {w["system_id"] for w in withdrawn_systems(con) if w["study_id"] == study_id}
    assert rated <= held and rated, (rated, held)
    assert held - rated == listed, (held - rated, listed)
    return listed


def _run(warehouse, study, status: str) -> str:  # noqa: ANN001 - a Path, a Study
    with connect(warehouse) as con:
        run = run_forecasts(con, study, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, run.run_id, status, None if status == "forecasted" else "a test")
        return run.run_id


def _withdraw(warehouse, system: str, study_id: str) -> None:  # noqa: ANN001 - a Path
    with connect(warehouse) as con:
        assert withdraw_system(con, system, study_id).recorded


def test_the_listing_names_exactly_what_the_marts_leave_out(tmp_path, monkeypatch, dbt_target):
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    predictions, _ = prediction_file(warehouse, tmp_path)
    with connect(warehouse) as con:
        first = import_forecasts(
            con, predictions, "external_llm", BASELINES, workers=1,
            metadata=yaml.safe_load(METADATA_YAML),
        )  # fmt: skip
    study = first.study_id
    assert _left_out(warehouse, dbt_target, study) == set()

    _withdraw(warehouse, "external_llm", study)  # a mistaken import
    assert _left_out(warehouse, dbt_target, study) == {"external_llm"}

    other_run = _run(warehouse, OTHER, "forecasted")  # another study, its naive withdrawn
    (other,) = rows(warehouse, "select study_id from raw.runs where run_id = ?", [other_run])[0]
    assert other != study
    _withdraw(warehouse, "naive", other)
    assert _left_out(warehouse, dbt_target, other) == {"naive"}
    assert _left_out(warehouse, dbt_target, study) == {"external_llm"}

    seasonal = dataclasses.replace(STUDY, systems=("seasonal_naive",))
    _withdraw(warehouse, "seasonal_naive", study)
    _run(warehouse, seasonal, "failed")  # forecasts it again, but did not complete
    assert _left_out(warehouse, dbt_target, study) == {"external_llm", "seasonal_naive"}
    _run(warehouse, seasonal, "forecasted")  # withdrawn, then run again: back
    assert _left_out(warehouse, dbt_target, study) == {"external_llm"}

    _withdraw(warehouse, "naive", study)
    _run(warehouse, STUDY, "build_failed")  # naive again, in a run the build does not take
    assert _left_out(warehouse, dbt_target, study) == {"external_llm", "naive"}

    with connect(warehouse) as con:  # imported again (with its baselines): all back
        import_forecasts(con, predictions, "external_llm", BASELINES, workers=1)
    assert _left_out(warehouse, dbt_target, study) == set()
