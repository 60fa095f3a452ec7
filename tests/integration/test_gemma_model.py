"""The real packaged Gemma 3 270M through every language-model path: a few short windows
forecast by ``run_forecasts`` into a real warehouse and built into ``marts.window_errors``;
a few understanding questions and reasoning items answered, stored and built into the
suites' marts and reports. Each path's rerun reads the stored replies without loading the
model. New tokens are capped (``TSRATE_HF_MAX_NEW_TOKENS``) in the suite tests to keep the
test short on a CPU.

Needs the ``gemma`` extra (``make setup`` installs it; under ``CI=true`` a missing package
fails instead of skipping). The first run ever de-quantizes the GGUF into the cache
(``TSRATE_CACHE``, default ``~/.cache/tsrate``; about a minute on a small CPU), later ones load
the cached checkpoint in seconds.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import ingest, read, small_study
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import run_forecasts
from tsrate.suites import SUITES
from tsrate.systems import gemma

MISSING = gemma.missing_packages()
if MISSING and os.environ.get("CI") != "true":
    pytest.skip(f"{MISSING[0]} is not installed ({gemma.INSTALL_HINT})", allow_module_level=True)

HORIZON = 5


@pytest.mark.slow
def test_packaged_gemma_forecasts_short_windows_through_the_core(tmp_path, monkeypatch, dbt_target):
    assert not MISSING, f"{MISSING[0]} is not installed under CI: {gemma.INSTALL_HINT}"
    assert importlib.util.find_spec(gemma.GGUF_PACKAGE) is not None
    system = gemma.GemmaSystem()
    assert system.availability().available, system.availability().reason
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])
    monkeypatch.setenv("TSRATE_HF_BATCH_SIZE", "4")
    study = small_study(
        study_tickers=["AAPL"],
        study_start="2022-11-01",
        study_end="2022-12-28",
        context_length=20,
        horizon=HORIZON,
        stride=10,
        perturbations=["P0", "P3"],
        systems=["naive", "gemma3_270m"],
    )
    run_id = forecast_and_build(warehouse, study, dbt_target)
    windows = int(
        read(warehouse, "select count(*) as n from raw.windows where run_id = ?", [run_id])["n"][0]
    )
    assert 2 <= windows <= 4
    forecasts = read(
        warehouse,
        "select f.ticker, f.window_end_date, f.perturbation_id, f.horizon_step, f.forecast "
        "from raw.forecasts f join raw.run_partitions p using (partition_key) "
        "where p.run_id = ? and f.system_id = 'gemma3_270m'",
        [run_id],
    )
    failures = read(
        warehouse,
        "select x.* from raw.forecast_failures x join raw.run_partitions p using (partition_key) "
        "where p.run_id = ? and x.system_id = 'gemma3_270m'",
        [run_id],
    )
    # every window of both perturbations is a forecast of HORIZON steps or a failure row
    forecast_windows = forecasts.groupby(["window_end_date", "perturbation_id"]).size()
    assert (forecast_windows == HORIZON).all()
    assert len(forecast_windows) + len(failures) == 2 * windows
    assert len(forecast_windows) >= 1, failures[["reason", "raw_text"]].to_string()
    # a real model continues a price series at the price's level (AAPL ≈ 130-150 here)
    assert np.isfinite(forecasts["forecast"]).all()
    assert forecasts["forecast"].between(50, 500).mean() > 0.8
    # a window any system failed is left out for every system (docs/systems.md)
    failed_windows = failures["window_end_date"].nunique() if len(failures) else 0
    rated = read(
        warehouse,
        "select count(*) as n from marts.window_errors where system_id = 'gemma3_270m'",
    )["n"][0]
    assert rated == 2 * (windows - failed_windows)
    # rescoring reads what is stored: a rerun reuses every partition, the model is not asked
    monkeypatch.setattr(gemma.GemmaSystem, "load", refuse_to_load)
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=lambda m: None)
    assert summary.computed == 0 and summary.reused == summary.partitions == 4
    assert summary.failed_windows.get("gemma3_270m", 0) == len(failures)
    # a forced recompute re-parses the stored replies (<warehouse dir>/cache/llm)
    with connect(warehouse) as con:
        forced = run_forecasts(
            con, study, load_companies(), force=True, workers=1, progress=lambda m: None
        )
    assert forced.computed == 4
    assert forced.failed_windows.get("gemma3_270m", 0) == len(failures)


def refuse_to_load(self) -> None:  # noqa: ANN001
    raise AssertionError("a rerun must not load the model")


@pytest.mark.slow
def test_packaged_gemma_answers_understanding_questions_into_the_marts(
    tmp_path, monkeypatch, dbt_target
):
    from tsrate.suites.understanding.report import write_report
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    assert not MISSING, f"{MISSING[0]} is not installed under CI: {gemma.INSTALL_HINT}"
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "24")
    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config(
        "small",
        {
            "train": 1,
            "validation": 1,
            "test": 2,
            "max_length": 40,
            "datasets": ["trend"],
            "formats": ["csv"],
            "tasks": ["detection", "classification"],
        },
    )
    systems = open_systems(["hf_local:gemma3_270m"], references=True)
    suite_run_id, counts = run_suite(warehouse, config, systems, progress=lambda _: None)
    asked, reused = counts["gemma3_270m"]
    assert asked >= 2 and reused == 0
    replies = read(
        warehouse,
        "select raw_text, parse_ok from raw.und_responses where system_id = 'gemma3_270m'",
    )
    assert len(replies) == asked and replies["raw_text"].str.len().gt(0).all()
    # detection and classification are closed questions: decoded over their admissible
    # answers in Gemma's chat turns, every reply is one the strict parser reads
    assert replies["parse_ok"].all(), replies.to_string()
    # rescoring reads the stored replies: a rerun asks nothing and never loads the model
    monkeypatch.setattr(gemma.GemmaSystem, "load", refuse_to_load)
    _, again = run_suite(
        warehouse, config, open_systems(["hf_local:gemma3_270m"]), progress=lambda _: None
    )
    assert again["gemma3_270m"] == (0, asked)
    dbt.run_dbt(
        ["tsrate-build", "--select", "tag:understanding"],  # what the suite's flow runs
        None,
        warehouse,
        lambda _: None,
        dbt_target,
        {SUITES["understanding"].run_env: suite_run_id},  # not --vars: keeps the shared parse
    )
    scores = read(warehouse, "select * from marts.und_scores where system_id = 'gemma3_270m'")
    assert scores["n_prompts"].sum() == asked
    assert scores["n_unparsed"].sum() == (~replies["parse_ok"]).sum()
    ratings = read(warehouse, "select distinct system_id from marts.und_ratings")
    assert {"gemma3_270m", "und_random", "und_analyst"} <= set(ratings["system_id"])
    report = write_report(warehouse, tmp_path / "understanding.html").read_text()
    assert "<h2>Against chance</h2>" in report and "gemma3_270m" in report


@pytest.mark.slow
def test_packaged_gemma_answers_reasoning_items_into_the_marts(tmp_path, monkeypatch, dbt_target):
    from tsrate.suites.reasoning.report import write_report
    from tsrate.suites.reasoning.scenarios import GeneratorConfig
    from tsrate.suites.reasoning.suite import RunConfig, run_suite

    assert not MISSING, f"{MISSING[0]} is not installed under CI: {gemma.INSTALL_HINT}"
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "24")
    warehouse = tmp_path / "tsrate.duckdb"
    config = RunConfig(
        generator=GeneratorConfig(seed=11, scenarios=4, forecasts=1, length=40),
        llms=("hf_local:gemma3_270m",),
        fracast=0,
        tasks=("etiological", "qa_single"),  # 10 prompts: short on a CPU
    )
    suite_run_id, asked, reused = run_suite(warehouse, config, progress=lambda _: None)
    assert reused == 0
    replies = read(
        warehouse,
        "select i.task, p.condition, r.raw_text, r.parse_ok from raw.rsn_responses r "
        "join raw.rsn_prompts p using (prompt_hash) join raw.rsn_items i using (item_id) "
        "where r.system_id = 'gemma3_270m'",
    )
    assert set(replies["task"]) == {"etiological", "qa_single"}
    assert set(replies["condition"]) == {"with_series", "without_series"}
    assert replies["raw_text"].notna().all()
    assert replies["parse_ok"].all(), replies.to_string()  # choice items: an option letter
    # rescoring reads the stored replies: a rerun asks nothing and never loads the model
    monkeypatch.setattr(gemma.GemmaSystem, "load", refuse_to_load)
    _, asked_again, reused_again = run_suite(warehouse, config, progress=lambda _: None)
    assert asked_again == 0 and reused_again == asked
    dbt.run_dbt(
        ["tsrate-build", "--select", "tag:reasoning"],  # what the suite's flow runs
        None,
        warehouse,
        lambda _: None,
        dbt_target,
        {SUITES["reasoning"].run_env: suite_run_id},  # not --vars: keeps the shared parse
    )
    tasks = read(warehouse, "select * from marts.rsn_task_accuracy where system_id = 'gemma3_270m'")
    assert {"etiological", "qa_single"} <= set(tasks["task"])
    assert tasks["chance_level"].notna().all()
    assert (
        tasks["n_unparseable"].sum() + tasks["n_unparseable_without_series"].fillna(0).sum()
        == (~replies["parse_ok"]).sum()
    )
    ratings = read(warehouse, "select distinct system_id from marts.rsn_ratings")
    assert {"gemma3_270m", "random"} <= set(ratings["system_id"])
    report = write_report(warehouse, tmp_path / "reasoning.html").read_text()
    assert "gemma3_270m" in report
