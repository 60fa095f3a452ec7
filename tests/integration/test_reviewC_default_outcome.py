"""Review C: the marts' default view (var ``robustness_outcome``) must be one of the outcomes
the robustness analysis computes (var ``robustness_outcomes``). Before, a default outside
that list built without a word: robustness_scores had no default-view row, so ratings,
system_summary, partial_orders and the report's default view silently held accuracy
metrics only, while rating_stability (which reads window_errors directly) still
resampled WRS for it. Now the build stops with one line naming both vars."""

from __future__ import annotations

import pytest

from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect

pytestmark = pytest.mark.slow


def test_a_default_outcome_outside_the_analysed_outcomes_is_refused(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse):
        pass
    settings = {
        "robustness_outcome": "relative_max_abs_residual",
        "robustness_outcomes": ["max_abs_residual", "wql"],
    }
    with pytest.raises(dbt.DbtError) as refused:
        dbt.run_dbt(
            ["compile", "--select", "robustness_scores"],
            settings,
            warehouse,
            None,
            tmp_path / "target",
        )
    message = str(refused.value)
    assert "robustness_outcome 'relative_max_abs_residual' is not among" in message
    assert "max_abs_residual wql" in message


def test_a_default_outcome_among_the_analysed_outcomes_compiles(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse):
        pass
    settings = {
        "robustness_outcome": "wql",
        "robustness_outcomes": ["max_abs_residual", "wql"],
    }
    lines = dbt.run_dbt(
        ["compile", "--select", "robustness_scores"], settings, warehouse, None, tmp_path / "target"
    )
    compiled = next((tmp_path / "target" / "compiled").rglob("robustness_scores.sql")).read_text()
    assert "outcome = 'wql'" in compiled, lines[-3:]
