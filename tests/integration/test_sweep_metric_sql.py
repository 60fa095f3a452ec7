"""The robustness suite's metric SQL (int_forecasts_scored, window_errors,
int_windows_located, accuracy_scores, int_perturbation_sets_derived, robustness_scores,
int_forecast_quantiles_scored, int_window_quantile_metrics) against the small errors a
mutation sweep plants in it: every operator, number, min/max, avg/median, and/or, lag/lead
or null test changed one at a time. ``test_planted_sql_metrics.py`` compares those models
with numpy on a real warehouse of stock prices; what it cannot see is the edges real
prices never reach, so the hand-computed dbt unit cases in the models' YAML cover them:

* a SMAPE term of 0 when actual and forecast are both 0, an ordinary term when
  |actual| + |forecast| is exactly 1, and the scale's maximum 2 for a forecast of the
  opposite sign (``int_forecasts_scored_metric_terms``);
* MASE and the relative R^max null (not DuckDB's inf) for a flat context or an origin
  price of 0, and ordinary for a divisor of exactly 1 (``window_errors_aggregates_steps``);
* no perturbation effects for a system whose only drawable perturbation is the control
  (``int_perturbation_sets_derived_intersects_accepted_with_run``);
* robustness_scores' rows for a system with a gap in one outcome: its WRS keys get the
  reason, its effect estimated where the gap is not keeps its score (no second row); and
  which scores separate systems: a lone system's always (even at the maximum WRS or at 0),
  two tied below the maximum "at the same score", two tied at 0 "at 0"
  (``robustness_scores_keeps_effects_of_a_system_with_a_gap_outside_its_draws``);
* WQL and MSIS null for all-zero actuals and a flat context, ordinary for a sum |actual|
  and a scale of exactly 1 (``int_window_quantile_metrics_null_for_a_zero_divisor``).

``test_metric_sql_unit_cases_pass`` builds those models on an empty warehouse with the
unit cases forced on (a failing case fails the build; see
``tests/integration/builds.unit_cases_pass``); their expected rows were worked out by hand
from the models' stated definitions."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow

#: The swept models; their unit cases run here (with their parents' cases).
SWEPT_MODELS = (
    "+int_forecasts_scored +window_errors +int_windows_located +accuracy_scores "
    "+int_perturbation_sets_derived +robustness_scores +int_forecast_quantiles_scored "
    "+int_window_quantile_metrics"
)


def test_metric_sql_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", *SWEPT_MODELS.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
