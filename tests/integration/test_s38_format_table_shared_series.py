"""The format table's interval counts a series asked in two of its cells once: the dbt unit
case ``und_format_table_counts_a_shared_series_once`` (worked by hand in its description:
two fully correlated cells give the interval of their summed standard errors, cells with
their own series the independent one) passes on an empty warehouse."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow


def test_format_table_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    env = {SUITES[suite].run_env: "latest" for suite in SUITES}
    selection = ["--select", "+und_format_table", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch, env)
