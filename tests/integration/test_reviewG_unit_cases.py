"""Review G: wrong statistics logic a reader found in the core marts, each pinned by a
hand-computed dbt unit case in the model's YAML, run here on an empty warehouse with the
cases forced on (``tests.integration.builds.unit_cases_pass``).

- ``robustness_scores_ranks_only_the_systems_with_an_oracle``: ``oracle_rank_correlation``
  ranked the estimates over every system of the group, those without an oracle effect
  included, and then correlated only the systems with one: not Spearman's rho whenever a
  system's oracle is null."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_robustness_scores_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+robustness_scores", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_ratings_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+ratings", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
