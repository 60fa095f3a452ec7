"""The core rating table (``int_ratings_assigned``): robustness and accuracy scores rated.

Conventions (DESIGN.md "Method decisions", Algorithms 4-5):

* each (run, outcome, metric, perturbation) is rated on its own with
  :func:`tsrate.methods.ratings.ratings_frame`; accuracy metrics have no outcome (null) and belong to
  the default view;
* ideals: WRS, APE and PIE have the ideal 0 (no bias, no effect); WRS also has a known
  worst value (``max_score``). A lone system or an all-tied group of these metrics is rated
  by its absolute value; accuracy metrics (SMAPE, MASE, sign accuracy) have no ideal used
  here, so a lone or all-tied group gets a null rating with a ``rating_reason``;
* APE and PIE carry their spread over treatment draws (``score_spread``); systems whose
  scores differ by less than that spread are marked ``separable = false``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.ratings import RATING_COLUMNS, ratings_frame

#: metric -> ideal raw score (absent: no ideal).
CORE_IDEALS: dict[str, float] = {
    "wrs_industry": 0.0,
    "wrs_company": 0.0,
    "ape_industry": 0.0,
    "ape_company": 0.0,
    "pie_industry": 0.0,
    "pie_company": 0.0,
}

COLUMNS = ["run_id", "metric_family", "outcome", "is_default_outcome", *RATING_COLUMNS]
COLUMNS += ["score_spread", "separable", "separation_reason"]
_TEXT = ["run_id", "metric_family", "outcome", "metric", "perturbation_id", "system_id"]
SCHEMA = {
    **dict.fromkeys(_TEXT, "string"),
    "is_default_outcome": "bool",
    "raw_score": "float64",
    "rating": "Int64",
    **dict.fromkeys(["rating_levels", "rank"], "int64"),
    "higher_is_better": "bool",
    "rating_reason": "string",
    "score_spread": "float64",
    "separable": "boolean",
    "separation_reason": "string",
}


def score_table(robustness: pd.DataFrame, accuracy: pd.DataFrame) -> pd.DataFrame:
    """The long (run, outcome, metric, perturbation, system, raw_score) table to rate."""
    keys = ["run_id", "metric", "perturbation_id", "system_id", "higher_is_better"]
    robust = robustness[
        [*keys, "outcome", "is_default_outcome", "raw_score", "max_score", "score_spread"]
    ].assign(metric_family="robustness")
    accurate = accuracy[keys].assign(
        raw_score=accuracy["mean"],
        metric_family="accuracy",
        outcome=None,
        is_default_outcome=True,
        max_score=np.nan,
        score_spread=np.nan,
    )
    scores = pd.concat([robust, accurate], ignore_index=True)
    scores["raw_score"] = scores["raw_score"].astype(float)
    for column in ("max_score", "score_spread"):
        scores[column] = scores[column].astype(float)
    # An undefined score (e.g. MASE of a flat context) cannot be rated: leave the system out.
    return scores.loc[np.isfinite(scores["raw_score"].to_numpy())].reset_index(drop=True)


def assigned_ratings(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """ratings_frame per run and outcome; higher_is_better, metric_family, the default-view
    flag and the spread are carried per metric."""
    frames = []
    outcome_key = scores["outcome"].astype(object).where(scores["outcome"].notna(), "")
    for (run_id, outcome), block in scores.groupby([scores["run_id"], outcome_key], sort=True):
        direction = block.groupby("metric")["higher_is_better"].agg(["min", "max"])
        mixed = direction.index[direction["min"] != direction["max"]]
        if len(mixed):
            raise ValueError(f"metrics {list(mixed)} disagree on higher_is_better")
        higher = {metric: bool(value) for metric, value in direction["max"].items()}
        rated = ratings_frame(
            block,
            levels,
            higher,
            ideal=CORE_IDEALS,
            maximum_column="max_score",
            spread_column="score_spread",
        )
        family = block.drop_duplicates("metric").set_index("metric")["metric_family"]
        spread = block.set_index(["metric", "perturbation_id", "system_id"])["score_spread"]
        rated["score_spread"] = spread.reindex(
            pd.MultiIndex.from_frame(rated[["metric", "perturbation_id", "system_id"]])
        ).to_numpy()
        rated.insert(0, "is_default_outcome", bool(block["is_default_outcome"].iloc[0]))
        rated.insert(0, "outcome", outcome or None)
        rated.insert(0, "metric_family", rated["metric"].map(family))
        rated.insert(0, "run_id", run_id)
        frames.append(rated)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)
