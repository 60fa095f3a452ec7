"""Ratings of the interpretability suite (thin wrapper over
tsrate.suites.interpretability.marts.rating_table, i.e. tsrate.ratings.ratings_frame)."""

from tsrate.suites.interpretability.marts import rated_scores, rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("interp_ratings_assigned: set config rating_levels (var rating_levels)")
    prediction = dbt.ref("interp_prediction_scores").df()
    correctness = dbt.ref("interp_correctness").df()
    stability = dbt.ref("interp_stability").df()
    return rating_table(rated_scores(prediction, correctness, stability), int(levels))
