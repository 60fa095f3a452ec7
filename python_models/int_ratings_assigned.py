"""Ratings of every metric x perturbation (paper Algorithms 4-5) over robustness and accuracy.

Thin wrapper over tsrate.ratings.ratings_frame: robustness_scores (raw_score) and
accuracy_scores (raw score = the mean over windows) are stacked and each (metric,
perturbation) is rated on L levels (var rating_levels). The public marts ratings and
partial_orders select from this table.
"""

import numpy as np
import pandas as pd

from tsrate.ratings import RATING_COLUMNS, ratings_frame

COLUMNS = ["run_id", "metric_family", *RATING_COLUMNS]
#: Column types of the table (stable even when it is empty).
TEXT = ["run_id", "metric_family", "metric", "perturbation_id", "system_id"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    "raw_score": "float64",
    **dict.fromkeys(["rating", "rating_levels", "rank"], "int64"),
    "higher_is_better": "bool",
}


def score_table(robustness: pd.DataFrame, accuracy: pd.DataFrame) -> pd.DataFrame:
    """The long (run, metric, perturbation, system, raw_score) table to rate."""
    keys = ["run_id", "metric", "perturbation_id", "system_id", "higher_is_better"]
    robust = robustness[[*keys, "raw_score"]].assign(metric_family="robustness")
    accurate = accuracy[keys].assign(raw_score=accuracy["mean"], metric_family="accuracy")
    scores = pd.concat([robust, accurate], ignore_index=True)
    scores["raw_score"] = scores["raw_score"].astype(float)
    # An undefined score (e.g. MASE of a flat context) cannot be rated: leave the system out.
    return scores.loc[np.isfinite(scores["raw_score"].to_numpy())].reset_index(drop=True)


def assigned_ratings(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """ratings_frame per run; higher_is_better and metric_family are carried per metric."""
    frames = []
    for run_id, block in scores.groupby("run_id", sort=True):
        direction = block.groupby("metric")["higher_is_better"].agg(["min", "max"])
        mixed = direction.index[direction["min"] != direction["max"]]
        if len(mixed):
            raise ValueError(f"metrics {list(mixed)} disagree on higher_is_better")
        higher = {metric: bool(value) for metric, value in direction["max"].items()}
        rated = ratings_frame(block, levels, higher)
        family = block.drop_duplicates("metric").set_index("metric")["metric_family"]
        rated.insert(0, "metric_family", rated["metric"].map(family))
        rated.insert(0, "run_id", run_id)
        frames.append(rated)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    levels = dbt.config.get("rating_levels")
    if levels is None:
        raise ValueError("int_ratings_assigned: set config rating_levels (var rating_levels)")
    scores = score_table(dbt.ref("robustness_scores").df(), dbt.ref("accuracy_scores").df())
    return assigned_ratings(scores, int(levels))
