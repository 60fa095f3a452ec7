"""The real packaged Gemma 3 270M through the core path: a few short windows forecast by
``run_forecasts`` into a real warehouse and built into ``marts.window_errors``.

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

from tests.integration.helpers import forecast_and_build, ingest, read, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import run_forecasts
from tsrate.systems import gemma

MISSING = gemma.missing_packages()
if MISSING and os.environ.get("CI") != "true":
    pytest.skip(f"{MISSING[0]} is not installed ({gemma.INSTALL_HINT})", allow_module_level=True)

HORIZON = 5


@pytest.mark.slow
def test_packaged_gemma_forecasts_short_windows_through_the_core(tmp_path, monkeypatch):
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
    run_id = forecast_and_build(warehouse, study, tmp_path / "target", workers=1)
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
