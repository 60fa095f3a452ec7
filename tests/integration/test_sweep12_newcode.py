"""Sweep 12: robustness_scores' new conditions (the study's shape leaving PIE undefined, a
one-ticker run's WRS keys) planted one at a time; its hand-computed dbt unit cases
(``robustness_scores.yml``, e.g. ``robustness_scores_leaves_pie_of_a_constant_confounder_undefined``)
run here on an empty warehouse, forced on (``tests.integration.builds.unit_cases_pass``)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_robustness_scores_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+robustness_scores", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
