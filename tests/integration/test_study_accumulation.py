"""Systems accumulate in a study: a model imported black-box stays in the marts after a
later `tsrate run` of the same study, beside the systems that run forecast.

Real dbt builds of the project as it is (the imported system is registered with metadata).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml

from tests.integration.imported_system import METADATA_YAML, prediction_file, tsrate_cli
from tests.support.import_study import STUDY
from tests.support.source_runs import study
from tests.support.systems_listing import listing_entries, squeezed
from tests.support.warehouses import ingest, read
from tsrate.config import Study, load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow

#: what the rating marts and the error marts need
SELECT = "+ratings +window_errors +run_provenance"
LATER = study(["naive", "seasonal_naive"])


def build(warehouse, target, select=SELECT, **kwargs):
    dbt.build(
        warehouse=warehouse, target_path=target, on_line=lambda _: None,
        select=select, **kwargs,
    )  # fmt: skip


def test_an_imported_system_stays_rated_after_a_later_run_of_its_study(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    predictions, n_windows = prediction_file(warehouse, tmp_path)
    metadata = yaml.safe_load(METADATA_YAML)
    with connect(warehouse) as con:
        imported = import_forecasts(
            con, predictions, "external_llm", STUDY, workers=1, metadata=metadata
        )
    build(warehouse, dbt_target, "+window_errors", run_id=imported.run_id)  # what is read here
    query = "select * from marts.window_errors where system_id = 'external_llm' order by all"
    at_import = read(warehouse, query)
    assert len(at_import) == n_windows * len(STUDY.perturbations)

    # a later run of the same study forecasts only the baselines (one more than before)
    with connect(warehouse) as con:
        later = run_forecasts(con, LATER, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "forecasted")
        study_ids = con.execute(
            "select distinct study_id from raw.runs where run_id in (?, ?)",
            [imported.run_id, later.run_id],
        ).fetchall()
    assert study_ids == [(imported.study_id,)]  # systems do not change the study

    build(warehouse, dbt_target)  # the newest run's study, as `tsrate run` / `tsrate build`
    ratings = read(warehouse, "select distinct run_id, system_id from marts.ratings")
    assert set(ratings["system_id"]) == {"naive", "seasonal_naive", "external_llm"}
    assert set(ratings["run_id"]) == {later.run_id}
    together = read(warehouse, "select distinct study_id, systems_rated_together, n_systems "
                               "from marts.ratings where raw_score is not null and "
                               "(outcome is null or outcome not in ('wql', 'coverage_error_80'))"
                               )  # fmt: skip
    assert together.values.tolist() == [[imported.study_id, "external_llm naive seasonal_naive", 3]]
    # the import has no quantile columns: at the probabilistic outcomes it is not rated, with
    # the reason, and not among the systems rated together
    probabilistic = read(warehouse, "select * from marts.ratings "
                                    "where outcome in ('wql', 'coverage_error_80')")  # fmt: skip
    unrated = probabilistic[probabilistic["system_id"] == "external_llm"]
    assert len(unrated) and unrated["rating"].isna().all()
    assert unrated["rating_reason"].str.contains("gives no quantile forecasts").all()
    rated = probabilistic[probabilistic["raw_score"].notna()]
    assert set(rated["systems_rated_together"]) == {"naive seasonal_naive"}
    after = read(warehouse, query)
    # the imported forecasts are the file's: actuals + 1 on every window, as at import
    np.testing.assert_allclose(after["max_abs_residual"], 1.0, rtol=0, atol=1e-9)
    same = ["ticker", "window_end_date", "perturbation_id", "mae", "max_abs_residual"]
    shared = [c for c in same if c in after.columns]
    assert after[shared].equals(at_import[shared])
    provenance = read(warehouse, "select system_id from marts.run_provenance")
    assert "external_llm" in set(provenance["system_id"])

    # the single-run view (`tsrate build --run-id`): only the run's own systems
    build(warehouse, dbt_target, run_id=later.run_id, scope="run")
    ratings = read(warehouse, "select distinct system_id from marts.ratings")
    assert set(ratings["system_id"]) == {"naive", "seasonal_naive"}

    listed = tsrate_cli(warehouse, "systems")
    assert listed.returncode == 0, listed.stderr
    entries = listing_entries(listed.stdout)  # an entry's lines joined (long paths wrap)
    line = squeezed(next(x for x in entries if x.startswith("external_llm ")))
    assert predictions.name in line and imported.study_id in line and imported.run_id in line
    studies = tsrate_cli(warehouse, "studies")
    assert studies.returncode == 0, studies.stderr
    assert imported.study_id in studies.stdout
    assert "external_llm, naive, seasonal_naive" in studies.stdout
    # export-inputs without study flags exports the current study, not dbt_project.yml's
    exported = tsrate_cli(warehouse, "export-inputs", str(tmp_path / "export"))
    assert exported.returncode == 0, exported.stderr
    assert "the study of the newest run" in exported.stdout
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert Study.from_json(json.dumps(manifest["study"])) == LATER


def test_a_warehouse_of_the_previous_release_builds_with_its_history(tmp_path, dbt_target):
    """Runs written before studies existed (no raw.studies, no raw.runs.study_id) join their
    study at the next build, nothing lost, and the study's systems are rated together."""
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    with connect(warehouse) as con:
        only_random = dataclasses.replace(STUDY, systems=("random",))
        first = run_forecasts(con, only_random, load_companies(), workers=1, progress=print)
        finish_run(con, first.run_id, "succeeded")
        later = run_forecasts(con, LATER, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "succeeded")
        # back to the previous release's shape
        con.execute("drop table raw.studies")
        con.execute("drop table raw.study_imports")
        con.execute("alter table raw.runs drop column study_id")
        before = con.execute("select * from raw.runs order by run_id").fetchall()
        n_forecasts = con.execute("select count(*) from raw.forecasts").fetchone()[0]

    build(warehouse, dbt_target)

    with connect(warehouse, read_only=True) as con:
        after = con.execute("select * exclude (study_id) from raw.runs order by run_id").fetchall()
        assigned = con.execute("select distinct study_id from raw.runs").fetchall()
        assert con.execute("select count(*) from raw.forecasts").fetchone()[0] == n_forecasts
    assert after == before and len(assigned) == 1 and assigned[0][0] is not None
    ratings = read(warehouse, "select distinct run_id, system_id from marts.ratings")
    # random comes from the older run: both runs were assigned the same study
    assert set(ratings["system_id"]) == {"random", "naive", "seasonal_naive"}
    assert set(ratings["run_id"]) == {later.run_id}
