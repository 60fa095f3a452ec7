"""The understanding suite's confusion matrices give a reply that declined every option
(int_und_answers_scored.abstained) its own predicted column, '(abstained)', apart from the
'(unusable)' one of unparseable replies and prompts without a stored reply: a reader tells
a refusal from garbage. The hand-counted dbt unit case
``und_confusion_matrix_abstentions_have_their_own_column`` pins the counts; it runs here
on an empty warehouse with the unit cases forced on (a failing case fails the build)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow


def test_s32_visible_confusion_matrix_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    env = {SUITES[suite].run_env: "latest" for suite in SUITES}
    selection = ["--select", "+und_confusion_matrix", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch, env)
