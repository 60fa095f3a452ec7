"""Ratings of the reasoning suite (thin wrapper over
tsrate.suites.reasoning.marts.rating_table, i.e. the kit's tsrate.suites.rating.rate_scores
with the suite's rows of the seed suite_rating_specs)."""

import pandas as pd

from tsrate.suites.reasoning.marts import rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("rsn_ratings_assigned: set config rating_levels (var rating_levels)")
    accuracy = dbt.ref("rsn_task_accuracy").df()
    errors = dbt.ref("rsn_forecast_errors").df()
    context = dbt.ref("rsn_context_effects").df()
    keys = ["suite_run_id", "system_id"]
    qa = accuracy[accuracy["task"].isin(["qa_single", "qa_two"])]
    scores = pd.concat(
        [
            accuracy[keys].assign(
                metric="accuracy", task=accuracy["task"], raw_score=accuracy["accuracy"]
            ),
            qa[keys].assign(metric="series_gap", task=qa["task"], raw_score=qa["series_gap"]),
            errors[keys].assign(
                metric="mae", task="forecast_" + errors["condition"], raw_score=errors["mae"]
            ),
            errors[keys].assign(
                metric="mse", task="forecast_" + errors["condition"], raw_score=errors["mse"]
            ),
            context[keys].assign(
                metric="context_gain", task="forecast", raw_score=context["mae_gain"]
            ),
        ],
        ignore_index=True,
    )
    return rating_table(scores, int(levels), dbt.ref("suite_rating_specs").df())
