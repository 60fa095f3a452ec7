"""The three suites' flows (``flows/understanding.py``, ``interpretability.py``,
``reasoning.py``) run in this process as plain functions, without their build: the
defaults their docstrings state reach the suite run, and a busy warehouse fails at once.

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json). What is pinned: reasoning asks the reference answerers
and fracast on every forecasting item by default, one greedy reply per forecast prompt,
16 prompts a chunk, the generator settings given, and no language model unless named
(the stored run configuration says so); understanding asks the statistical analyst and
the random answerer by default; interpretability adds the sensitivity study by default
and trains in this process when asked for one worker; every suite flow's ``lock_timeout``
defaults to 0 (fail at once, no "after waiting"). That a suite flow builds by default is
tests/integration/test_sweep10_flows_suites.py's (a build starts dbt).

Real parts: tiny suite runs (the sizes the suites' integration tests use) on temporary
DuckDB files; fracast is the real model.
"""

from __future__ import annotations

import json
import logging

import pytest

from flows.interpretability import interpretability_flow
from flows.reasoning import reasoning_flow
from flows.understanding import understanding_flow
from tests.support.locks import another_writer
from tests.support.tiny_suites import GENERATOR, INTERPRETABILITY, UNDERSTANDING
from tests.support.warehouses import rows as _rows
from tsrate.platform.locking import WarehouseBusy
from tsrate.suites.interpretability import suite as interp_suite


def test_reasoning_runs_with_its_documented_defaults(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    reasoning_flow.fn(generator=GENERATOR, build=False, warehouse=str(warehouse))
    ((config,),) = _rows(warehouse, "select config from raw.suite_runs")
    config = json.loads(config)
    assert config["references"] is True and config["fracast"] is True
    assert config["forecast_samples"] == 1 and config["forecast_temperature"] is None
    assert config["chunk_size"] == 16 and config["llms"] == [] and config["tasks"] is None
    assert (config["choice_encoding"], config["forecast_encoding"]) == (
        "llmtime_gpt4",
        "llmtime_gpt4",
    )
    assert (config["generator"]["scenarios"], config["generator"]["forecasts"]) == (4, 1)
    systems = {r[0] for r in _rows(warehouse, "select distinct system_id from raw.rsn_responses")}
    assert {"fracast", "random", "context_rule"} <= systems


def test_reasoning_refuses_a_bad_generator_setting_by_name():
    with pytest.raises(Exception, match="bad generator settings"):
        reasoning_flow.fn(generator={"no_such_setting": 1}, build=False)


def test_understanding_asks_the_reference_answerers_by_default(tmp_path, caplog):
    warehouse = tmp_path / "w.duckdb"
    caplog.set_level(logging.INFO, logger="tsrate.run")
    understanding_flow.fn(overrides=UNDERSTANDING, build=False, warehouse=str(warehouse))
    assert "understanding suite (small): systems und_analyst, und_random" in caplog.text
    systems = _rows(warehouse, "select distinct system_id from raw.und_responses order by 1")
    assert systems == [("und_analyst",), ("und_random",)]


def test_interpretability_adds_the_sensitivity_study_and_trains_here_with_one_worker(
    tmp_path, caplog
):
    """One dataset, one model, one seed: 1 unit; the sensitivity study (by default) adds
    its f x sigma x n variants of the reference dataset for its models: 2 more here (the
    reference code's two datasets). ``workers=1``: trained in this process (the dataset
    cache a worker keeps is this process's)."""
    warehouse = tmp_path / "w.duckdb"
    caplog.set_level(logging.INFO, logger="tsrate.run")
    interp_suite._worker_cache.clear()
    options = dict(datasets=[2], models=["imv_tensor"], seeds=[0], overrides=INTERPRETABILITY,
                   workers=1, build=False, warehouse=str(warehouse))  # fmt: skip
    interpretability_flow.fn(**options)
    assert "interpretability suite (small): 3 dataset variants, 3 training units" in caplog.text
    assert interp_suite._worker_cache  # trained in this process
    caplog.clear()
    interpretability_flow.fn(**options, sensitivity=False)
    assert "1 dataset variants, 1 training units" in caplog.text


@pytest.mark.parametrize("suite", ["understanding", "interpretability", "reasoning"])
def test_a_busy_warehouse_fails_a_suite_at_once_by_default(tmp_path, suite):
    warehouse = tmp_path / "w.duckdb"
    run = {
        "understanding": lambda: understanding_flow.fn(
            overrides=UNDERSTANDING, warehouse=str(warehouse)
        ),
        "interpretability": lambda: interpretability_flow.fn(
            datasets=[2], models=["imv_tensor"], warehouse=str(warehouse)
        ),
        "reasoning": lambda: reasoning_flow.fn(generator=GENERATOR, warehouse=str(warehouse)),
    }[suite]
    with another_writer(warehouse), pytest.raises(WarehouseBusy) as failed:
        run()
    assert "after waiting" not in str(failed.value)
