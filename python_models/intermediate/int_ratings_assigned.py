"""Ratings of every metric x perturbation x outcome (paper Algorithms 4-5) over robustness
and accuracy.

Thin wrapper over tsrate.robustness.marts.ratings.assigned_ratings (tsrate.methods.ratings.ratings_frame with
the core metrics' ideals and the APE/PIE spreads). The public marts ratings and
partial_orders select from this table.
"""

from tsrate.robustness.marts.ratings import assigned_ratings, score_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("int_ratings_assigned: set config rating_levels (var rating_levels)")
    scores = score_table(dbt.ref("robustness_scores").df(), dbt.ref("accuracy_scores").df())
    return assigned_ratings(scores, int(levels))
