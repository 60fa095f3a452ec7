"""A rating someone can cite: ``marts.run_provenance`` of a real build records the study id
(the one ``tsrate studies`` shows, not the run's study hash) and the analysis settings the
build resolved, and a build with another ``--vars`` value records that value (two builds
whose ratings differ no longer show the same provenance). The report's provenance section,
rendered from the mart, shows it.

Real forecasts (naive) of the import study in a real warehouse, as the source-run tests
(test_s31_source_prices.py) make them; a real dbt build, then a second with ``--vars`` (its
own target folder: ``--vars`` parses the project afresh). Expected values are read from
dbt_project.yml, the confidence_levels seed and raw.runs, not from the model.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.import_study import STUDY
from tests.support.source_runs import forecast
from tests.support.warehouses import ingest, read
from tsrate.config import project_dir, project_vars
from tsrate.platform import dbt_runner as dbt
from tsrate.robustness.report.probabilistic import provenance_section

pytestmark = pytest.mark.slow


def settings_of(warehouse) -> dict:
    frame = read(warehouse, "select distinct analysis_settings from marts.run_provenance")
    assert len(frame) == 1  # one build, one set of settings on every system's row
    return json.loads(frame.iloc[0, 0])


def test_the_provenance_records_the_study_id_and_the_settings_of_each_build(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    run = forecast(warehouse, ["naive", "random"])
    dbt.build(warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
              select="+run_provenance")  # fmt: skip

    stored = read(warehouse, "select study_id, study_hash from raw.runs where run_id = ?", [run])
    provenance = read(warehouse, "select * from marts.run_provenance")
    assert set(provenance["system_id"]) == {"naive", "random"}
    assert set(provenance["study_id"]) == {stored.study_id[0]}  # what `tsrate studies` shows
    assert stored.study_id[0] != stored.study_hash[0]  # two hashes of two things
    assert set(provenance["study_hash"]) == {stored.study_hash[0]}

    defaults = project_vars()
    settings = settings_of(warehouse)
    for name in ("causal_seed", "treatment_draws", "bootstrap_seed", "bootstrap_resamples",
                 "rating_levels", "matching_estimand", "effect_strata", "robustness_outcomes",
                 "leaderboard_bootstrap_seed", "baseline_families"):  # fmt: skip
        assert settings[name] == defaults[name], name
    levels = pd.read_csv(project_dir() / "seeds" / "confidence_levels.csv")
    expected = levels.sort_values("confidence", ascending=False).to_dict("records")
    assert settings["confidence_levels"] == expected  # the seed's decimals, as JSON numbers
    assert settings["run_scope"] == "study"

    # the README's direct build with an override, as a researcher varies the treatment draws
    changed = {"causal_seed": defaults["causal_seed"] + 7, "bootstrap_resamples": 17}
    dbt.run_dbt(["build", "--select", "run_provenance", "--exclude", "test_type:data"],
                changed, warehouse, None, tmp_path / "target",
                env_vars={"TSRATE_RUN_ID": run})  # fmt: skip
    overridden = settings_of(warehouse)
    assert overridden == {**settings, **changed}

    text = provenance_section(read(warehouse, "select * from marts.run_provenance"))
    assert f"<code>causal_seed</code> {changed['causal_seed']};" in text
    assert f"study <code>{stored.study_id[0]}</code>" in text
