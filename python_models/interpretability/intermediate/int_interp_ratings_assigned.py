"""Ratings of the interpretability suite: the marts' main-study scores stacked by
tsrate.suites.interpretability.marts.rating_scores (margins over chance; near-uniform
attention marked unrated), rated by its rating_table (the kit's
tsrate.suites.rating.rate_scores with the suite's rows of the seed suite_rating_specs)."""

from tsrate.suites.interpretability.marts import rating_scores, rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError(
            "int_interp_ratings_assigned: set config rating_levels (var rating_levels)"
        )
    scores = rating_scores(
        dbt.ref("interp_prediction_scores").df(),
        dbt.ref("interp_correctness").df(),
        dbt.ref("interp_stability").df(),
    )
    return rating_table(scores, int(levels), dbt.ref("suite_rating_specs").df())
