"""The core's remaining SQL (round 8 of the mutation sweep): rating_leave_one_out,
system_summary, window_inputs, int_prices_indexed, int_companies_selected and
int_runs_selected, against the small errors a mutation sweep plants in them.

``test_core_sql_unit_cases_pass`` builds those models on an empty warehouse with the
unit cases forced on (a failing case fails the build; see
``tests/integration/builds.unit_cases_pass``)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow

#: The swept models; their unit cases run here (with their parents' cases).
SWEPT_MODELS = (
    "+rating_leave_one_out +system_summary +window_inputs +int_prices_indexed "
    "+int_companies_selected +int_runs_selected"
)


def test_core_sql_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", *SWEPT_MODELS.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
