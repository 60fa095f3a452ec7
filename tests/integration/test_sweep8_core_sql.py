"""The core's remaining SQL (round 8 of the mutation sweep): rating_leave_one_out,
system_summary, window_inputs, int_prices_indexed, int_companies_selected and
int_runs_selected, against the small errors a mutation sweep plants in them (every
operator, number, min/max, avg/median, and/or, lag/lead, asc/desc or null test changed one
at a time; the round's other swept files -- the contract faces wrs_pairs,
perturbation_effects, rating_stability, user_study_tests, leaderboard,
treatment_assignments and the staging casts -- have no such token to change). The
integration tests build these models on real warehouses of stock prices, slowly (minutes
a build) and mostly with one complete run, the seed's companies and one key value per
join, where a join on the wrong key or a dropped filter may change nothing. Hand-computed dbt unit cases in the models' YAML cover those edges:

* the default run: the newest run of the requested study whose forecasts are complete,
  a tie on started_at broken by the larger run_id, a newer failed run and a newer run of
  another study passed over; a requested run alone, with its scope
  (``int_runs_selected_newest_complete_run_of_the_study``,
  ``int_runs_selected_the_requested_run_only``);
* the study's company values over the seed's, the seed's where the study has none, a
  ticker of the study only, and nothing from another study
  (``int_companies_selected_study_values_over_the_seed``);
* the trading-day index and |close - previous close| per ticker, null on each ticker's
  first day (``int_prices_indexed_days_and_one_step_changes``);
* a window's inputs: its run's and ticker's days from the context start to the origin
  only, numbered per perturbation (``window_inputs_the_context_of_each_window``);
* the study_id joined from the selected run
  (``rating_leave_one_out_labels_the_selected_runs_study``);
* system_summary's means over four perturbations (mean != median for the raw scores and
  the ratings), a default row without a raw score left out
  (``system_summary_averages_over_perturbations``).

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
