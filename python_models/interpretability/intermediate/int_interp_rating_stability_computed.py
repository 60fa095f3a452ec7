"""How firm the interpretability ratings are: a bootstrap over training seeds (thin wrapper
over tsrate.suites.interpretability.marts.rating_stability_table; each resample's scores
recomputed from the runs and re-rated in the direction and with the ideal of the seed
suite_rating_specs)."""

from tsrate.suites.interpretability.marts import rating_stability_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    resamples = dbt.config.get("bootstrap_resamples")
    seed = dbt.config.get("bootstrap_seed")
    if levels is None or resamples is None or seed is None:
        raise ValueError(
            "int_interp_rating_stability_computed: set config rating_levels, "
            "bootstrap_resamples and bootstrap_seed (vars of the same names)"
        )
    return rating_stability_table(
        dbt.ref("int_interp_runs_selected").df(),
        dbt.ref("int_interp_correctness_measured").df(),
        dbt.ref("int_interp_attention_selected").df(),
        dbt.ref("int_interp_ratings_assigned").df(),
        int(levels),
        int(resamples),
        int(seed),
        dbt.ref("suite_rating_specs").df(),
    )
