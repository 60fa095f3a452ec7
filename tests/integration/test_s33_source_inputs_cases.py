"""The hand-computed dbt unit cases of ``int_source_run_inputs`` alone, forced on: its
upstream is a few staging models, so this is the quick check of the comparison of a source
run's stored clean series with the selected run's (``test_s31_source_prices.py`` builds the
whole of ``+run_provenance``)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_source_inputs_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+int_source_run_inputs", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
