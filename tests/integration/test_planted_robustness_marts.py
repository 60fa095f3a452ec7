"""The robustness marts no other test checks number by number (window_leakage's training
period boundaries, perturbation_summary, window_quantile_scores' joins and reasons,
forecast_failures_summary's counts) and the run partitions they rate
(int_run_partitions_selected), against hand-computed dbt unit cases.

``test_robustness_marts_unit_cases_pass`` builds those marts on an empty warehouse with the
dbt unit cases forced on (``TSRATE_ALWAYS_UNIT_TESTS=1``: a build that passes its selection
to dbt itself, as this one does, may skip unit cases that already passed in the session's
dbt target with the same key; a failing case fails the build). The partial builds of
other tests (``forecast_and_build``'s ``select``) run the cases of the models they select. The cases in the models' YAML give a few hand-made rows and
the outputs worked out by hand from each model's stated conventions: a checkpoint's training
period is closed at both ends and a window leaks when a target day (after the origin, up to
horizon_end_date) lies in it; Table 2's per-perturbation averages are over the systems rated
on the default outcome; a window excluded for any failure counts once per ticker and origin;
a system not in the selected run is taken from the newest earlier run of its study."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow

#: The models whose hand-computed unit cases run here (with their parents' cases).
UNIT_CASE_MODELS = (
    "+window_leakage +perturbation_summary +window_quantile_scores +forecast_failures_summary"
)


def test_robustness_marts_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", *UNIT_CASE_MODELS.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
