"""Ratings of the understanding suite (thin wrapper over
tsrate.suites.understanding.marts.rating_table, i.e. the kit's tsrate.suites.rating.rate_scores
with the suite's rows of the seed suite_rating_specs)."""

from tsrate.suites.understanding.marts import rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("int_und_ratings_assigned: set config rating_levels (var rating_levels)")
    return rating_table(dbt.ref("und_scores").df(), int(levels), dbt.ref("suite_rating_specs").df())
