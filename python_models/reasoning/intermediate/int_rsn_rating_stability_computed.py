"""How firm the reasoning ratings are: a bootstrap over series, each with all its items
(thin wrapper over
tsrate.suites.reasoning.marts.rating_stability_table; each resample re-rated in the
direction and with the ideal of the seed suite_rating_specs)."""

from tsrate.suites.reasoning.marts import item_values, rating_stability_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    resamples = dbt.config.get("bootstrap_resamples")
    seed = dbt.config.get("bootstrap_seed")
    if levels is None or resamples is None or seed is None:
        raise ValueError(
            "int_rsn_rating_stability_computed: set config rating_levels, bootstrap_resamples and "
            "bootstrap_seed (vars of the same names)"
        )
    responses = dbt.ref("int_rsn_responses_scored").df()
    scored = dbt.ref("int_rsn_forecasts_scored").df()
    ratings = dbt.ref("int_rsn_ratings_assigned").df()
    values = item_values(responses, scored)
    specs = dbt.ref("suite_rating_specs").df()
    return rating_stability_table(values, ratings, int(levels), int(resamples), int(seed), specs)
