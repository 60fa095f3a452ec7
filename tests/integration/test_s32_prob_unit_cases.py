"""The dbt unit cases of the probabilistic marts (window_quantile_scores: the crossed-step
count and the per-window join; probabilistic_scores: the per-system counts and the scores),
run on an empty warehouse with the cases forced on (``tests.integration.builds.
unit_cases_pass``): a change to either model's SQL that breaks a hand-computed case fails
here in seconds, without forecasting a study."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_probabilistic_marts_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = [
        "--select",
        "+window_quantile_scores",
        "+probabilistic_scores",
        "--exclude",
        "test_type:data",
    ]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
