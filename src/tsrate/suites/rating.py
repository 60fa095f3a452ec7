"""One rating helper for every suite: rate a long score table by its key columns.

A suite's rated metrics, and which direction is better, are its *rating spec*: the rows of
the seed ``seeds/suite_rating_specs.csv`` (suite, metric, higher_is_better, ideal), which SQL
users read as ``seeds.suite_rating_specs``. :func:`rate_scores` rates every group of ``keys``
(e.g. suite run x metric x task) with :func:`tsrate.methods.ratings.ratings_frame` on ``levels``
levels and returns the key columns, the system column and every column ``ratings_frame``
returns (raw_score, rating, rating_levels, higher_is_better, rank, ...), whatever their
number. Non-finite scores (undefined metrics) are left out before rating; a metric the
spec does not list is an error.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.methods.ratings import ratings_frame

SPEC_COLUMNS = ["suite", "metric", "higher_is_better", "ideal"]


class RatingSpecError(TsrateError, ValueError):
    """A score table or rating spec the helper cannot rate (names the problem)."""


def load_rating_specs() -> pd.DataFrame:
    """The seed ``seeds/suite_rating_specs.csv`` of this checkout (the dbt models get the
    same rows through ``ref('suite_rating_specs')``)."""
    from tsrate.config import project_dir

    frame = pd.read_csv(project_dir() / "seeds" / "suite_rating_specs.csv")
    frame["higher_is_better"] = frame["higher_is_better"].astype(str).str.lower() == "true"
    return frame


def suite_spec(suite: str, specs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The spec rows of ``suite`` (metric, higher_is_better, ideal), indexed by metric."""
    specs = load_rating_specs() if specs is None else specs
    missing = set(SPEC_COLUMNS) - set(specs.columns)
    if missing:
        raise RatingSpecError(f"rating specs lack columns {sorted(missing)}")
    rows = specs[specs["suite"] == suite]
    if rows.empty:
        raise RatingSpecError(
            f"no rating spec for suite {suite!r}: add its metrics to seeds/suite_rating_specs.csv"
        )
    return rows.set_index("metric")[["higher_is_better", "ideal"]]


def _accepts_ideal() -> bool:
    return "ideal" in inspect.signature(ratings_frame).parameters


def rate_scores(
    scores: pd.DataFrame,
    suite: str,
    keys: Sequence[str],
    system: str,
    levels: int,
    specs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Rate ``scores`` (columns ``keys``, ``metric``, ``system``, ``raw_score``) per group of
    ``keys`` + metric, with the directions of ``suite``'s rating spec (``specs``: the seed's
    rows; default: read the seed file). Output: ``keys`` (with ``metric`` where ``keys``
    names it, else after them), ``system`` and the rating columns of
    :func:`tsrate.methods.ratings.ratings_frame`, sorted by the keys, then rank."""
    order = list(keys) if "metric" in keys else [*keys, "metric"]
    keys = [k for k in keys if k != "metric"]
    needed = {*keys, "metric", system, "raw_score"}
    missing = needed - set(scores.columns)
    if missing:
        raise RatingSpecError(f"scores to rate lack columns {sorted(missing)}")
    spec = suite_spec(suite, specs)
    unknown = sorted(set(scores["metric"]) - set(spec.index))
    if unknown:
        raise RatingSpecError(
            f"suite {suite!r} has no rating direction for metrics {unknown}: add them to "
            "seeds/suite_rating_specs.csv (metric, higher_is_better, ideal)"
        )
    frame = scores[[*keys, "metric", system, "raw_score"]].copy()
    frame["raw_score"] = pd.to_numeric(frame["raw_score"], errors="coerce").astype(float)
    frame = frame[np.isfinite(frame["raw_score"].to_numpy())]
    directions = {m: bool(v) for m, v in spec["higher_is_better"].items()}
    extra = {}
    if _accepts_ideal():
        extra["ideal"] = {m: float(v) for m, v in spec["ideal"].items() if pd.notna(v)}
    parts = []
    # ratings_frame rates per (metric, perturbation_id): each group of keys is one call,
    # with the system column in its system slot and a constant in the perturbation slot.
    for group, block in frame.groupby(keys, sort=True, dropna=False) if keys else [((), frame)]:
        rated = ratings_frame(
            pd.DataFrame(
                {
                    "metric": block["metric"].to_numpy(),
                    "perturbation_id": "",
                    "system_id": block[system].to_numpy(),
                    "raw_score": block["raw_score"].to_numpy(),
                }
            ),
            levels,
            directions,
            **extra,
        )
        rated = rated.drop(columns=["perturbation_id"]).rename(columns={"system_id": system})
        values = group if isinstance(group, tuple) else (group,)
        for position, (key, value) in enumerate(zip(keys, values, strict=True)):
            rated.insert(position, key, value)
        parts.append(rated)
    if parts:
        out = pd.concat(parts, ignore_index=True)
        return out[[*order, system, *[c for c in out.columns if c not in {*order, system}]]]
    empty = ratings_frame(
        pd.DataFrame(columns=["metric", "perturbation_id", "system_id", "raw_score"]),
        levels,
        directions,
        **extra,
    )
    empty = empty.drop(columns=["perturbation_id"]).rename(columns={"system_id": system})
    for position, key in enumerate(keys):
        empty.insert(position, key, pd.Series(dtype="string"))
    return empty[[*order, system, *[c for c in empty.columns if c not in {*order, system}]]]
