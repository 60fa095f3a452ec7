"""The writing commands that end in a dbt build (``tsrate.commands.pipeline``: ``run``,
``import`` without ``--no-build``, ``build``) exit 0 and say what they built, run through
``tsrate.cli.main`` in this process on a tiny study (each test one build).

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json): nothing else checked a successful ``import`` with its
build and publish, nor ``build``'s exit status and its line naming the run and its study,
nor its refusals of ``--run-id`` with ``--study`` and of a study without complete forecasts
(``build`` starts dbt's child before it refuses, so these are here, not in a unit test); the
unit-side checks of these commands are tests/unit/test_sweep9_studies_pipeline.py.
"""

from __future__ import annotations

import pytest

from tests.support.import_study import STUDY_P0_FLAGS, external_p0_import, import_warehouse
from tsrate.cli import main
from tsrate.config import Study, load_companies
from tsrate.platform.warehouse import connect

pytestmark = pytest.mark.slow


@pytest.fixture
def warehouse(tmp_path, monkeypatch, dbt_target):
    return import_warehouse(tmp_path, monkeypatch, dbt_target)


def test_an_import_with_its_build_exits_0_and_says_where_it_published(warehouse, tmp_path, capsys):
    argv = [*external_p0_import(warehouse, tmp_path), "--no-baselines"]
    assert main(argv) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("run ") and " rated and published to " in last


def test_a_run_exits_0(warehouse, capsys):
    argv = [
        "run",
        "--source",
        "none",
        *STUDY_P0_FLAGS,
        "--workers",
        "1",
        "--select",
        "+window_errors",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "succeeded. Try: tsrate query" in out


def test_build_exits_0_naming_the_run_and_its_study(warehouse, capsys):
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    study = Study.from_mapping(
        dict(study_tickers="AAPL,JPM", study_start="2022-09-01", study_end="2022-12-28",
             context_length=30, horizon=5, systems="naive", perturbations="P0")
    )  # fmt: skip
    with connect(warehouse) as con:
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert f"building the marts of run {run_id} and its study\n" in out
    # published as a run publishes: the nightly run left forecasted is rated now
    assert f"run {run_id} built and published to " in out
    with connect(warehouse) as con:
        status = con.execute("select status from raw.runs where run_id = ?", [run_id]).fetchone()
    assert status == ("succeeded",)


def test_build_refuses_a_run_id_with_a_study_and_a_study_without_complete_forecasts(
    warehouse, capsys
):
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts
    from tsrate.robustness.studies import register_study

    study = Study.from_mapping(
        dict(study_tickers="AAPL", study_start="2022-09-01", study_end="2022-12-28",
             context_length=30, horizon=5, systems="naive", perturbations="P0")
    )  # fmt: skip
    with connect(warehouse) as con:
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
        name = con.execute("select study_name from raw.studies").fetchone()[0]
        strided = Study.from_mapping(
            dict(study_tickers="AAPL", study_start="2022-09-01", study_end="2022-12-28",
                 context_length=30, horizon=5, stride=2, systems="naive", perturbations="P0")
        )  # fmt: skip
        other = register_study(con, strided, None)  # a study without any run
    assert main(["build", "--run-id", run_id, "--study", name]) == 2
    assert capsys.readouterr().err == (
        "tsrate: error: --run-id builds one run's own systems, --study a whole study: give one\n"
    )
    assert main(["build", "--study", other]) == 2
    assert capsys.readouterr().err.startswith(
        f"tsrate: error: study {other} has no run with complete forecasts"
    )


def test_an_import_into_another_study_says_the_snapshot_now_holds_it(warehouse, tmp_path, capsys):
    """A build of one study publishes it; an import (its study flags) into another study is
    refused unless --switch-study; then it replaces the first in the snapshot and says so,
    naming both and how to bring the first back."""
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    first = Study.from_mapping(
        dict(study_tickers="AAPL", study_start="2022-09-01", study_end="2022-12-28",
             context_length=30, horizon=5, systems="naive", perturbations="P0")
    )  # fmt: skip
    with connect(warehouse) as con:
        run_id = run_forecasts(con, first, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
        name = con.execute(
            "select s.study_name from raw.runs r join raw.studies s using (study_id) "
            "where r.run_id = ?",
            [run_id],
        ).fetchone()[0]
    assert main(["build"]) == 0
    assert "the snapshot now holds" not in capsys.readouterr().out  # a first publication
    importing = [*external_p0_import(warehouse, tmp_path), "--no-baselines"]
    # a study this warehouse never ran: refused up front unless --switch-study
    assert main(importing) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and "--switch-study rates and publishes" in refused.err
    assert f"is not this warehouse's study {name} (" in refused.err, refused.err
    assert main([*importing, "--switch-study"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--switch-study: the study of the flags "), out
    assert f"(it held {name}):" in out and f"tsrate build --study {name}" in out, out
