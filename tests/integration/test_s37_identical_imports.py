"""The same predictions imported under two ids through the real ``tsrate import-predictions``
(a child process, on a temporary warehouse of the import study's prices and its `tsrate
export-inputs` folder): the second import says, in one line, that its forecasts equal the
first's, that the two will be rated alike, and how to withdraw one; the first says nothing
of the kind. Stored only (--no-build): the line comes from the forecast store, before any
build. The pair detection and the report's sentence: tests/unit/test_s37_identical_systems.py.
"""

from __future__ import annotations

import pytest

from tests.integration.cli_child import run_tsrate
from tests.support.import_study import STUDY, STUDY_FLAGS, prediction_grid
from tests.support.warehouses import ingest
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.plan import load_series

pytestmark = pytest.mark.slow


def test_importing_a_file_twice_under_two_ids_says_they_cannot_be_told_apart(tmp_path):
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    ingest(warehouse, list(STUDY.tickers))
    with connect(warehouse) as con:
        grid = prediction_grid(load_series(con, STUDY))
    predictions = tmp_path / "mine.csv"
    grid.to_csv(predictions, index=False)
    exported = run_tsrate(
        "export-inputs", str(tmp_path / "export"), *STUDY_FLAGS, warehouse=warehouse, cwd=tmp_path
    )
    assert exported.returncode == 0, exported.stderr

    def imported(system_id: str) -> list[str]:
        done = run_tsrate(
            "import-predictions", str(predictions), "--system", system_id,
            "--manifest", str(tmp_path / "export"), "--metadata", f"display_name={system_id}",
            "--no-baselines", "--no-build", warehouse=warehouse, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if "cannot be told apart" in line]

    assert imported("mine_v1") == []
    lines = imported("mine_v2")
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("mine_v2's forecasts equal those of mine_v1, already stored for study")
    assert f"({len(grid)} forecasts, equal to 1e-9 relative)" in line
    assert "will be rated alike" in line
    assert "tsrate withdraw mine_v2 --study " in line and "tsrate withdraw mine_v1 --study " in line
