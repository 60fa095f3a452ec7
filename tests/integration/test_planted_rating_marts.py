"""The marts that turn robustness scores into what a reader acts on (partial_orders,
confounder_comparison, group_comparisons, modality_pairs, ratings, uncertainty_effects) and
the perturbation sets the causal draws use, against hand-computed cases and independent
recomputations.

``test_rating_marts_unit_cases_pass`` builds those marts on an empty warehouse with the dbt
unit cases forced on (``TSRATE_ALWAYS_UNIT_TESTS=1``: a partial build runs them, and a failing
case fails the build). The cases in the models' YAML give a few hand-made rows and the
outputs worked out by hand from each mart's definition."""

from __future__ import annotations

import pytest

from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect

pytestmark = pytest.mark.slow

#: The marts whose hand-computed unit cases run here (with their parents' cases).
UNIT_CASE_MARTS = "+partial_orders +confounder_comparison +group_comparisons +modality_pairs"


def test_rating_marts_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    monkeypatch.setenv("TSRATE_ALWAYS_UNIT_TESTS", "1")
    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse):
        pass
    select = ["build", "--select", *UNIT_CASE_MARTS.split(), "--exclude", "test_type:data"]
    lines = dbt.run_dbt(
        [*select, "--indirect-selection", "cautious"], None, warehouse, None, dbt_target
    )
    assert lines  # run_dbt raises DbtError when a model or a unit test fails
