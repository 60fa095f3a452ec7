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
  scores differ by less than that spread are marked ``separable = false``. Elsewhere
  ``separable`` is null here; ``marts.ratings`` fills it for the default outcome from the
  paired bootstrap of ``rating_stability`` (tsrate.methods.separation).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.ratings import RATING_COLUMNS, assign_ratings, ratings_frame

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
COLUMNS += ["score_spread", "separable", "separation_reason", "max_score"]
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
    "max_score": "float64",
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
        index = pd.MultiIndex.from_frame(rated[["metric", "perturbation_id", "system_id"]])
        rated["score_spread"] = spread.reindex(index).to_numpy()
        # the known worst value a lone or tied group is rated against (WRS), for re-rating
        maximum = block.set_index(["metric", "perturbation_id", "system_id"])["max_score"]
        rated["max_score"] = maximum.reindex(index).to_numpy()
        rated.insert(0, "is_default_outcome", bool(block["is_default_outcome"].iloc[0]))
        rated.insert(0, "outcome", outcome or None)
        rated.insert(0, "metric_family", rated["metric"].map(family))
        rated.insert(0, "run_id", run_id)
        frames.append(rated)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


# --------------------------------------------------------------------------------------
# How relative each rating is: one system removed or added (rating_leave_one_out)
# --------------------------------------------------------------------------------------

#: metric -> the largest value its raw score can take (absent: unbounded above); every core
#: metric is >= 0. WRS's bound is the row's max_score.
CORE_UPPER_BOUNDS: dict[str, float] = {"smape": 2.0, "sign_accuracy": 100.0}

LOO_COLUMNS = ["run_id", "metric", "outcome", "perturbation_id", "system_id", "rating"]
LOO_COLUMNS += ["n_systems", "rating_min_one_removed", "rating_max_one_removed"]
LOO_COLUMNS += ["n_removals_changing", "changed_by_removing", "rating_min_one_added"]
LOO_COLUMNS += ["rating_max_one_added", "changes_if_one_added", "changes_if_one_removed"]
_LOO_SCHEMA = {
    **dict.fromkeys(["run_id", "metric", "outcome", "perturbation_id", "system_id"], "string"),
    **dict.fromkeys(["rating", "rating_min_one_removed", "rating_max_one_removed"], "Int64"),
    **dict.fromkeys(["rating_min_one_added", "rating_max_one_added"], "Int64"),
    **dict.fromkeys(["n_systems", "n_removals_changing"], "int64"),
    "changed_by_removing": "string",
    **dict.fromkeys(["changes_if_one_added", "changes_if_one_removed"], "boolean"),
}


def _new_scores(values: list[float], metric: str, maximum: float | None) -> list[float]:
    """One score per place a new system's score could take among the distinct ``values``
    (sorted): below the lowest (when above 0), between each neighbouring pair, above the
    highest (when below the metric's upper bound). Equal to an existing score would change
    no rating (ties share one), so those places are all there is."""
    upper = maximum if maximum is not None else CORE_UPPER_BOUNDS.get(metric)
    low, high = values[0], values[-1]
    places = [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)]
    if low > 0:
        places.append(low / 2)
    if upper is None:
        places.append(high + max(1.0, abs(high)))
    elif high < upper:
        places.append((high + upper) / 2)
    return places


def leave_one_out(assigned: pd.DataFrame, levels: int) -> pd.DataFrame:
    """For every rating of ``assigned`` (int_ratings_assigned rows with a raw score): the
    ratings it would get with one other system removed from the comparison, or one new
    system added at any place among the scores, rated by the same rule
    (:func:`tsrate.methods.ratings.assign_ratings` with the core ideals and WRS's
    max_score). Columns :data:`LOO_COLUMNS`: the range of ratings over the removals and who
    changes it (``changed_by_removing``: ``system (a->b)``, sorted), the range over the
    additions; ``changes_if_one_removed`` / ``changes_if_one_added`` say whether any does.
    A null rating (lone or tied group of a metric without an ideal) counts as a value:
    null -> 2 is a change."""
    rows: list[dict[str, object]] = []
    scored = assigned.loc[assigned["raw_score"].notna()].copy()
    scored["outcome_key"] = scored["outcome"].astype(object).where(scored["outcome"].notna(), "")
    keys = ["run_id", "outcome_key", "metric", "perturbation_id"]
    for (run_id, outcome, metric, perturbation), block in scored.groupby(keys, sort=True):
        scores = dict(
            zip(block["system_id"].astype(str), block["raw_score"].astype(float), strict=True)
        )
        maxima = block["max_score"].astype(float) if "max_score" in block else pd.Series([])
        maximum = float(maxima.max()) if maxima.notna().any() else None
        higher = bool(block["higher_is_better"].iloc[0])

        def rate(mapping: dict[str, float], metric: str = metric, maximum=maximum, higher=higher):
            return assign_ratings(
                mapping,
                levels,
                ideal=CORE_IDEALS.get(metric),
                maximum=maximum,
                higher_is_better=higher,
            )

        published = rate(scores)
        without = {gone: rate({s: v for s, v in scores.items() if s != gone}) for gone in scores}
        added = [
            rate({**scores, "\0new": value})
            for value in _new_scores(sorted(set(scores.values())), metric, maximum)
        ]
        for system in sorted(scores):
            mine = published[system]
            removed = {gone: r[system] for gone, r in without.items() if gone != system}
            changed = {gone: r for gone, r in removed.items() if r != mine}
            with_new = [r[system] for r in added]
            known_removed = [r for r in removed.values() if r is not None]
            known_added = [r for r in with_new if r is not None]
            rows.append(
                {
                    "run_id": run_id,
                    "metric": metric,
                    "outcome": outcome or None,
                    "perturbation_id": perturbation,
                    "system_id": system,
                    "rating": mine,
                    "n_systems": len(scores),
                    "rating_min_one_removed": min(known_removed, default=None),
                    "rating_max_one_removed": max(known_removed, default=None),
                    "n_removals_changing": len(changed),
                    "changed_by_removing": ", ".join(
                        f"{gone} ({'null' if mine is None else mine}->{'null' if r is None else r})"
                        for gone, r in sorted(changed.items())
                    )
                    or None,
                    "rating_min_one_added": min(known_added, default=None),
                    "rating_max_one_added": max(known_added, default=None),
                    "changes_if_one_added": any(r != mine for r in with_new),
                    "changes_if_one_removed": bool(changed),
                }
            )
    if not rows:
        return pd.DataFrame(columns=LOO_COLUMNS).astype(_LOO_SCHEMA)
    return pd.DataFrame(rows, columns=LOO_COLUMNS).astype(_LOO_SCHEMA)
