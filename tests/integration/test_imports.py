"""An imported model is scored by dbt like any system, beside the study's baselines.

dbt reads the systems seed of the project it builds, and its relationship tests require
every scored system to be in it; so this test builds a copy of the project whose seed has
one extra row for the external model, as a user adding their model would.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.dbt_project import copy_project
from tests.support.import_study import STUDY, prediction_grid
from tests.support.warehouses import ingest, read
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.plan import load_series

pytestmark = pytest.mark.slow

#: The seed row of the imported system: every column of seeds/systems.csv, by name.
SEED_VALUES = {
    "system_id": "external_demo",
    "display_name": "External demo (actuals + 1)",
    "modality": "numeric",
    "family": "baseline",
    "purpose": "time-series",
    "architecture": "none",
    "is_foundation_model": "false",
    "accepted_perturbations": "P0 P1 P2 P3",
    "description": "Predictions imported from a file: the clean actuals plus 1.",
}


def seed_row(header: str) -> str:
    """SEED_VALUES in the column order of the seed's header (empty for other columns)."""
    return ",".join(SEED_VALUES.get(column, "") for column in header.strip().split(",")) + "\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the dbt project whose systems seed knows external_demo."""
    copy = copy_project(tmp_path / "project", "tests/dbt")
    seed = copy / "seeds" / "systems.csv"
    text = seed.read_text()
    seed.write_text(text if text.endswith("\n") else text + "\n")
    with open(seed, "a") as handle:
        handle.write(seed_row(text.splitlines()[0]))
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(copy))
    return copy


def test_imported_system_is_scored_beside_the_baselines(project, tmp_path, parsed_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    with connect(warehouse) as con:
        series = load_series(con, STUDY)
    predictions = tmp_path / "external_demo.csv"
    prediction_grid(series).to_csv(predictions, index=False)

    with connect(warehouse) as con:
        summary = import_forecasts(con, predictions, "external_demo", STUDY, workers=1)
    # what this test reads (window_errors, ratings) and their upstream; every other mart of an
    # imported system is built in test_import_metadata's registered_system_is_rated_in_every_mart
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=parsed_target(),  # its own, from the session's parse: the seed re-parsed
        on_line=lambda line: None,
        select="+window_errors +ratings",
    )

    errors = read(warehouse, "select * from marts.window_errors")
    n_windows = sum(len(s.end_positions) for s in series.values())
    imported = errors[errors["system_id"] == "external_demo"]
    assert len(imported) == n_windows * len(STUDY.perturbations)
    np.testing.assert_allclose(imported["max_abs_residual"], 1.0, rtol=0, atol=1e-9)
    assert (imported["run_id"] == summary.run_id).all()
    # the baseline shares the run, so the marts rate the two side by side
    assert len(errors[errors["system_id"] == "naive"]) == len(imported)
    ratings = read(warehouse, "select distinct system_id from marts.ratings")
    assert set(ratings["system_id"]) == {"naive", "external_demo"}


def test_cli_import_rejects_a_malformed_file_and_stores_nothing(tmp_path):
    import os
    import subprocess
    import sys

    from tsrate.config import project_dir
    from tsrate.platform.warehouse import connect, store_prices
    from tsrate.robustness.sources import load_skfolio_sp500

    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL"]), "skfolio")
    bad = tmp_path / "predictions.csv"
    bad.write_text("ticker,window_end_date,horizon_step,forecast\nAAPL,2022-10-14,1,1.0\n")
    result = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "import", str(bad), "--system", "cli_bad",
         "--metadata", "family=foundation", "--tickers", "AAPL", "--start", "2022-09-01", "--end", "2022-12-28",
         "--context-length", "30", "--horizon", "5", "--systems", "naive"],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)), cwd=project_dir(),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "predictions.csv" in result.stderr and "perturbation_id" in result.stderr
    assert "Traceback" not in result.stderr
    with connect(warehouse, read_only=True) as con:
        assert con.execute("select count(*) from raw.runs").fetchone()[0] == 0
