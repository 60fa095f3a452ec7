"""Ratings of the interpretability suite (thin wrapper over
tsrate.suites.interpretability.marts.rating_table, i.e. tsrate.ratings.ratings_frame)."""

import pandas as pd

from tsrate.suites.interpretability.marts import NEAR_UNIFORM_ENTROPY, rating_table


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
    # the rule against uniform attention (marts.NEAR_UNIFORM_ENTROPY): rate correctness and
    # stability only where the mean beta_entropy over seeds is below the threshold
    entropy = correctness.loc[correctness["measure"] == "beta_entropy", keys + ["mean_value"]]
    decided = entropy.loc[entropy["mean_value"] < NEAR_UNIFORM_ENTROPY, keys]
    correctness = correctness.merge(decided, on=keys, how="inner")
    beta_std = stability[stability["attention"] == "beta"].merge(decided, on=keys, how="inner")
    main = prediction[prediction["in_main_study"].fillna(False).astype(bool)]
    scores = pd.concat(
        [
            main[keys].assign(metric="test_mse", raw_score=main["test_mse_mean"]),
            main[keys].assign(metric="test_mse_cv", raw_score=main["test_mse_cv"]),
            # correctness is rated as the margin over chance (permuted ground truth)
            correctness.loc[
                correctness["measure"].isin(["beta_spearman", "beta_auroc"]), keys
            ].assign(
                metric=correctness["measure"] + "_margin",
                raw_score=correctness["mean_margin"],
            ),
            beta_std[keys].assign(metric="beta_std", raw_score=beta_std["mean_std"]),
        ],
        ignore_index=True,
    )
    return rating_table(scores, int(levels))
