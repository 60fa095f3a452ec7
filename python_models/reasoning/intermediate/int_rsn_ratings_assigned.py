"""Ratings of the reasoning suite: the marts' scores stacked by
tsrate.suites.reasoning.marts.rating_scores, rated by its rating_table (the kit's
tsrate.suites.rating.rate_scores with the suite's rows of the seed suite_rating_specs)."""

from tsrate.suites.reasoning.marts import rating_scores, rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("int_rsn_ratings_assigned: set config rating_levels (var rating_levels)")
    scores = rating_scores(
        dbt.ref("rsn_task_accuracy").df(),
        dbt.ref("rsn_forecast_errors").df(),
        dbt.ref("rsn_context_effects").df(),
    )
    return rating_table(scores, int(levels), dbt.ref("suite_rating_specs").df())
