"""How relative each rating is: its rating with one other system removed from the
comparison, or one new system added at any place among the scores.

Thin wrapper over tsrate.robustness.marts.ratings.leave_one_out applied to
int_ratings_assigned; the public mart rating_leave_one_out selects from it.
"""

from tsrate.robustness.marts.ratings import leave_one_out


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("int_rating_leave_one_out: set config rating_levels (var rating_levels)")
    return leave_one_out(dbt.ref("int_ratings_assigned").df(), int(levels))
