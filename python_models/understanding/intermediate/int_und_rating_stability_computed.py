"""How firm the understanding ratings are: a bootstrap over series, each with all its
prompts (thin wrapper over
tsrate.suites.understanding.marts.rating_stability_table; each resample re-rated in the
direction and with the ideal of the seed suite_rating_specs)."""

from tsrate.suites.understanding.marts import rating_stability_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    resamples = dbt.config.get("bootstrap_resamples")
    seed = dbt.config.get("bootstrap_seed")
    if levels is None or resamples is None or seed is None:
        raise ValueError(
            "int_und_rating_stability_computed: set config rating_levels, bootstrap_resamples and "
            "bootstrap_seed (vars of the same names)"
        )
    scored = dbt.ref("int_und_answers_scored").df()
    options = dbt.ref("stg_und_prompts").df()[["prompt_key", "options"]]
    ratings = dbt.ref("int_und_ratings_assigned").df()
    specs = dbt.ref("suite_rating_specs").df()
    return rating_stability_table(
        scored, options, ratings, int(levels), int(resamples), int(seed), specs
    )
