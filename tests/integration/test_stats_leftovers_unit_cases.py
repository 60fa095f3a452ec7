"""Statistics leftovers in the marts, each pinned by a hand-computed dbt unit case in the
model's YAML, run here on an empty warehouse with the cases forced on
(``tests.integration.builds.unit_cases_pass``).

- ``accuracy_scores_keep_a_system_without_any_value``: a system whose every MASE is null (a
  flat context) vanished from accuracy_scores, so marts.ratings never listed it unrated with
  its reason: the analyst saw no MASE rating and no word why.
- ``robustness_scores_counts_only_finite_scores_as_systems``: a NaN score counted as a system
  of its group (n_systems), entered Spearman's rho against the oracle ranked last, and,
  being the largest double, made max > min: one NaN beside two tied systems said the score
  separates systems."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_accuracy_scores_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+accuracy_scores", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_robustness_scores_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+robustness_scores", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
