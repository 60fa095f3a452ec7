"""The rating marts' SQL (uncertainty_effects, quantile_calibration, probabilistic_scores,
window_quantile_scores, group_comparisons, ratings, leaderboard_tasks, modality_pairs) against
the small errors round 6 of the mutation sweep plants in it: every operator, number, min/max,
avg/median, and/or, floor/ceil, lag/lead or null test changed one at a time
(``tests/planted/sweep6_mart_sql.json``). The integration tests that check these marts on a
real warehouse (``test_uncertainty_robustness.py``, ``test_planted_rating_marts.py``) take
about a minute a build and see only what a small study of stock prices reaches; the
hand-computed dbt unit cases in the models' YAML cover the edges:

* uncertainty_effects (``uncertainty_effects_hand_computed``): the clusters of windows (a
  ticker's windows in the same stretch of ``horizon`` trading days from its first, so a
  horizon of 1 makes every window its own cluster), the mean against the median at both
  levels, the cluster-robust standard error of the window mean (clusters of unequal size,
  and of equal size where it is the sd of the cluster means / sqrt(G)), the t interval
  centred on the change, beyond_noise at a standard error of 0 (a change of 0 is not beyond)
  and exactly at the interval's edge (not beyond), a cluster whose only window has no
  quantiles (not counted), one cluster (no interval, not a point), a system
  without quantiles, and the APE estimates joined by measure, metric and outcome;
* quantile_calibration (``quantile_calibration_hand_computed``): an actual equal to the
  quantile forecast counts as at or below it, the share is a mean (not a median) of the
  steps, every level keeps its own row, and a perturbation whose windows all fell back or a
  system without quantiles keeps its 9 rows with 0 steps and the reason;
* probabilistic_scores (``probabilistic_scores_hand_computed``): the mean, the sample
  standard deviation and the count over the windows with a value (a null MSIS left out),
  the ideal values, and the rows without quantiles;
* ratings (``ratings_list_rated_and_unrated_systems``): a score that could not be computed
  appears once, unrated, with "not rated: " and its reason, and is neither counted nor listed
  among the systems rated together; the display names and the run's study;
* leaderboard_tasks (``leaderboard_tasks_hand_computed``): a task error is a mean (not a
  median) over windows each joined to its own quantile scores, a system without quantiles
  has null wql and crps over 0 windows, and the compute time sums only the selected run's
  partitions of the task;
* group_comparisons (``group_comparisons_place_encoder_decoder_systems``,
  ``group_comparisons_keep_every_system_without_baseline_families``): a system without a
  family is no baseline, with no baseline families configured every system stays in the
  without_baselines scope, and a group's score and rating are means (not medians) over
  three systems;
* modality_pairs (``modality_pairs_compare_variants_on_shared_perturbations``): averages
  that are means over four perturbations, an unrated score and a score on another outcome
  left out, a relative difference under 1e-9 (2^-30) or two averages of exactly 0 a tie, one
  over it (2^-28) not, the tolerance 1e-9 times the larger average (a pair within it of the
  larger only is a tie; 2^-20 against 2^-19 is not), and a pair with an empty base_model not
  paired;
* window_quantile_scores: its case from round 4 (no survivor).

``test_sweep6_mart_sql_unit_cases_pass`` builds each of those models on an empty warehouse with the
unit cases forced on (a failing case fails the build; see
``tests/integration/builds.unit_cases_pass``); their expected rows were worked out from the
models' stated definitions, the arithmetic in a YAML comment beside each case."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow

#: The swept models; each one's unit cases run in its own build (with its parents' cases).
SWEPT_MODELS = (
    "uncertainty_effects",
    "quantile_calibration",
    "probabilistic_scores",
    "window_quantile_scores",
    "group_comparisons",
    "ratings",
    "leaderboard_tasks",
    "modality_pairs",
)


@pytest.mark.parametrize("model", SWEPT_MODELS)
def test_sweep6_mart_sql_unit_cases_pass(model, tmp_path, dbt_target, monkeypatch):
    selection = ["--select", f"+{model}", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
