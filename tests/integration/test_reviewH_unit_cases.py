"""Review H: wrong logic a reader found in the marts, each pinned by a hand-computed dbt
unit case in the model's YAML, run here on an empty warehouse with the cases forced on
(``tests.integration.builds.unit_cases_pass``).

- ``paper_comparison_counts_no_score_for_a_null_table5_value``: a Table 5-6 row whose
  tsrate score is null said it averaged 1 score (tsrate_n_averaged), where a Table 2
  average counts only the scores that exist.
- ``rsn_accuracy_counts_unanswered_prompts_without_the_series``: the per-category
  reasoning accuracy carried the unparseable replies without the series but not the
  unanswered prompts (rsn_task_accuracy carries both): an interrupted run's category
  showed fewer unusable answers without the series than it had."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_paper_comparison_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+paper_comparison", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_rsn_accuracy_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+rsn_accuracy", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
