"""Ratings of the interpretability suite (thin wrapper over
tsrate.suites.interpretability.marts.rating_table, i.e. the kit's tsrate.suites.rating.rate_scores
with the suite's rows of the seed suite_rating_specs)."""

import pandas as pd

from tsrate.suites.interpretability.marts import rating_table


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("interp_ratings_assigned: set config rating_levels (var rating_levels)")
    prediction = dbt.ref("interp_prediction_scores").df()
    correctness = dbt.ref("interp_correctness").df()
    correctness = correctness[correctness["in_main_study"].fillna(False).astype(bool)]
    stability = dbt.ref("interp_stability").df()
    stability = stability[stability["in_main_study"].fillna(False).astype(bool)]
    keys = ["suite_run_id", "variant_id", "model_id"]
    main = prediction[prediction["in_main_study"].fillna(False).astype(bool)]
    scores = pd.concat(
        [
            main[keys].assign(metric="test_mse", raw_score=main["test_mse_mean"]),
            main[keys].assign(metric="test_mse_cv", raw_score=main["test_mse_cv"]),
            correctness.loc[
                correctness["measure"].isin(["beta_spearman", "beta_auroc"]), keys
            ].assign(
                metric=correctness["measure"],
                raw_score=correctness["mean_value"],
            ),
            stability.loc[stability["attention"] == "beta", keys].assign(
                metric="beta_std", raw_score=stability["mean_std"]
            ),
        ],
        ignore_index=True,
    )
    return rating_table(scores, int(levels), dbt.ref("suite_rating_specs").df())
