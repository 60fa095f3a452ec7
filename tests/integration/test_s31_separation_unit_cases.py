"""robustness_scores' separation flag is a fact of the group, pinned by a hand-computed dbt
unit case in the model's YAML, run here on an empty warehouse with the cases forced on
(``tests.integration.builds.unit_cases_pass``).

- ``robustness_scores_keeps_an_unscored_system_out_of_the_separation_flag``: in a group
  where one system had no score (not analysed on an outcome) and the others had distinct
  finite scores, that system's row read ``separates_systems = true`` with its own
  ``score_reason`` as ``separation_reason``: a row saying both "separates" and why it does
  not. In a tie its row gave its own reason instead of the tie."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_robustness_scores_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+robustness_scores", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
