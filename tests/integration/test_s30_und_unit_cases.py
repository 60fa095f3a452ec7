"""The understanding suite's hand-computed dbt unit cases (models/understanding/**/*.yml),
built on an empty warehouse with the cases forced on (a failing case fails the build):
among them int_und_answers_selected's ``answered`` flag of a prompt without a stored reply
and und_length_curves' n_unparsed / n_unanswered (an unanswered prompt is not an
unparseable reply)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow


def test_understanding_sql_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    env = {SUITES["understanding"].run_env: "latest"}
    unit_cases_pass(["--select", "tag:understanding"], tmp_path, dbt_target, monkeypatch, env)
