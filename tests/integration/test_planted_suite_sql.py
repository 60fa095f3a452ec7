"""The suites' SQL metrics against hand-computed cases: the dbt unit tests in the models' YAML.

Each ``unit_tests:`` case in models/reasoning/**/*.yml and models/interpretability/**/*.yml
gives a few hand-made input rows and the outputs worked out by hand from the metric's
definition (accuracy as the share correct, chance as the mean of 1/options, the series gap
with minus without, the context gain without minus with, MAE skill 1 - MAE/baseline MAE,
coverage n_scored/n_items, sample standard deviations with n - 1, the coefficient of variation
std/mean; interp_sensitivity: the mean test MSE over the sensitivity seeds of the sensitivity
models only, the relative error over the largest mean of the same study, dataset and model,
and for sigma that relative error per sigma and per sigma^2; rsn_context_combinations: a tie
is no improvement, a pair needs both forecasts usable and the MAE gain's t interval is taken
on the MAE gains; rsn_perturbation_effects: lost and gained answers, lured ones, drop =
original - twin, pairs made within a condition and the drop's interval clipped to [-1, 1]
(not [0, 1]); interp_attention_summary: sample standard
deviations across seeds and a beta cell's true weight summed over its lags), with numbers
chosen so every expected float is exact. Here the suites' models are built on an empty warehouse with the unit
tests forced on (``TSRATE_ALWAYS_UNIT_TESTS=1``): a failing case fails the build."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("suite", ["reasoning", "interpretability"])
def test_suite_sql_unit_cases_pass(suite, tmp_path, dbt_target, monkeypatch):
    env = {SUITES[suite].run_env: "latest"}
    unit_cases_pass(["--select", f"tag:{suite}"], tmp_path, dbt_target, monkeypatch, env)
