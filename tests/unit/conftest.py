"""Fixtures the unit tests share: a small real warehouse and the full prediction grid of the
import tests (tests/unit/test_import_validation.py, test_import_metadata_validation.py,
test_import_quantile_validation.py; the study and the grid: tests/support/import_study.py).
A test module that defines its own ``warehouse`` fixture keeps it; ``project`` (a copy of the
dbt project's settings and seeds) likewise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.import_study import STUDY, prediction_grid
from tsrate.config import project_dir
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.forecast.plan import load_series
from tsrate.robustness.sources import load_skfolio_sp500


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """A warehouse holding the bundled AAPL and JPM prices (one per test module)."""
    path = tmp_path_factory.mktemp("imports") / "tsrate.duckdb"
    with connect(path) as con:
        store_prices(con, load_skfolio_sp500(["AAPL", "JPM"]), "skfolio")
    return path


@pytest.fixture(scope="module")
def good(warehouse):
    """The import study's full grid: clean actuals + 1.0, one row per ticker, window end,
    perturbation and horizon step."""
    with connect(warehouse) as con:
        return prediction_grid(load_series(con, STUDY))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A copy of the project's dbt_project.yml and seeds, used as TSRATE_PROJECT_DIR."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(project_dir() / "dbt_project.yml", root / "dbt_project.yml")
    shutil.copytree(project_dir() / "seeds", root / "seeds")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(root))
    return root
