"""Review C: wrong logic a reader found in the core marts, each pinned by a hand-computed dbt
unit case in the model's YAML, run here on an empty warehouse with the cases forced on
(``tests.integration.builds.unit_cases_pass``).

- ``leaderboard_tasks_partial_quantiles_fail_the_task``: a system with quantile forecasts on
  only some windows of a task had its wql/crps task error averaged over those windows, while
  the other systems were averaged over all of them.
- ``paper_comparison_counts_only_the_scores_it_averages``: a Table 2 average counted the
  null scores of a metric the study cannot produce among the scores it averaged."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_leaderboard_tasks_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+leaderboard_tasks", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_paper_comparison_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+paper_comparison", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
