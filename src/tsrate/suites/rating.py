"""The rating kit of every suite: rate a long score table by its key columns, and the
rating and rating-stability tables the suites publish.

A suite's rated metrics, and which direction is better, are its *rating spec*: the rows of
the seed ``seeds/suite_rating_specs.csv`` (suite, metric, higher_is_better, ideal, worst), which
SQL users read as ``seeds.suite_rating_specs``. :func:`rate_scores` rates every group of ``keys``
(e.g. suite run x metric x task) with :func:`tsrate.methods.ratings.ratings_frame` on ``levels``
levels and returns the key columns, the system column and every column ``ratings_frame``
returns (raw_score, rating, rating_levels, higher_is_better, rank, ...), whatever their
number. Non-finite scores (undefined metrics) are left out before rating, and
:func:`rating_table` lists them, not rated, with the reason; a metric the spec does not
list is an error.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.methods.ratings import interval_holding_the_point, ratings_frame, snap_to_zero
from tsrate.suites import intervals

SPEC_COLUMNS = ["suite", "metric", "higher_is_better", "ideal"]
#: Optional spec column: the metric's worst possible score (null / absent: unbounded).
WORST = "worst"


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
    """The spec rows of ``suite`` (metric, higher_is_better, ideal, worst), indexed by metric
    (``worst`` null where the spec has no such column: every metric unbounded)."""
    specs = load_rating_specs() if specs is None else specs
    missing = set(SPEC_COLUMNS) - set(specs.columns)
    if missing:
        raise RatingSpecError(f"rating specs lack columns {sorted(missing)}")
    rows = specs[specs["suite"] == suite]
    if rows.empty:
        raise RatingSpecError(
            f"no rating spec for suite {suite!r}: add its metrics to seeds/suite_rating_specs.csv"
        )
    rows = rows.set_index("metric")
    worst = rows[WORST] if WORST in rows.columns else pd.Series(np.nan, index=rows.index)
    return rows[["higher_is_better", "ideal"]].assign(
        **{WORST: pd.to_numeric(worst, errors="coerce").astype(float)}
    )


def _accepts_ideal() -> bool:
    return "ideal" in inspect.signature(ratings_frame).parameters


def _spec_for(scores: pd.DataFrame, suite: str, specs: pd.DataFrame | None) -> pd.DataFrame:
    """:func:`suite_spec`, checked to hold every metric of ``scores``."""
    spec = suite_spec(suite, specs)
    unknown = sorted(set(scores["metric"]) - set(spec.index))
    if unknown:
        raise RatingSpecError(
            f"suite {suite!r} has no rating direction for metrics {unknown}: add them to "
            "seeds/suite_rating_specs.csv (metric, higher_is_better, ideal)"
        )
    return spec


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
    spec = _spec_for(scores, suite, specs)
    frame = scores[[*keys, "metric", system, "raw_score"]].copy()
    frame["raw_score"] = pd.to_numeric(frame["raw_score"], errors="coerce").astype(float)
    frame = frame[np.isfinite(frame["raw_score"].to_numpy())]
    directions = {m: bool(v) for m, v in spec["higher_is_better"].items()}
    extra = {}
    if _accepts_ideal():
        extra["ideal"] = {m: float(v) for m, v in spec["ideal"].items() if pd.notna(v)}
        # the worst value gives a lone / all-tied group away from the ideal its scale
        frame = frame.assign(**{WORST: frame["metric"].map(spec[WORST]).astype(float)})
        extra["maximum_column"] = WORST
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
                    **({WORST: block[WORST].to_numpy()} if WORST in block.columns else {}),
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
        pd.DataFrame(columns=["metric", "perturbation_id", "system_id", "raw_score", WORST]),
        levels,
        directions,
        **extra,
    )
    empty = empty.drop(columns=["perturbation_id"]).rename(columns={"system_id": system})
    for position, key in enumerate(keys):
        empty.insert(position, key, pd.Series(dtype="string"))
    return empty[[*order, system, *[c for c in empty.columns if c not in {*order, system}]]]


# --------------------------------------------------------------------------------------
# The rating table and the rating-stability table every suite publishes
# --------------------------------------------------------------------------------------

#: Columns of a suite's rating-stability table after its group keys and system column
#: (``ci_low`` / ``ci_high`` only where the suite publishes intervals), before its counts.
STABILITY_VALUES = [
    "raw_score",
    "rating",
    "rating_levels",
    "rating_reason",
    "share_at_rating",
    "share_mc_se",
]
#: Column after the counts: resamples in which the system's re-scored value is undefined
#: (missing or not finite), counted for every system, also one the re-rating leaves out.
UNDEFINED = "n_resamples_undefined"
STABILITY_TYPES = {
    "raw_score": "float64",
    "rating": "Int64",
    "rating_levels": "int64",
    "rating_reason": "string",
    "share_at_rating": "float64",
    "share_mc_se": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
}


def rating_table(
    scores: pd.DataFrame,
    suite: str,
    keys: Sequence[str],
    system: str,
    levels: int,
    specs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """A suite's ratings: :func:`rate_scores`, plus the rows a suite holds back.

    Rows of ``scores`` with a non-null ``unrated_reason`` (optional column; e.g. attention
    too close to uniform to rate) are not compared with the others: they come back with a
    null rating and rank and that text as ``rating_reason``. An undefined score (null, NaN
    or infinite) is never silently dropped: like the core's ``ratings`` it comes back with
    a null raw score, rating and rank and a ``rating_reason`` "not rated: " + why (the
    optional column ``undefined_reason``, else :func:`undefined_reason`), and is not
    among the systems rated together. Both kinds sort after the rated rows of their group.
    Without such rows this is :func:`rate_scores` itself."""
    held = (
        scores["unrated_reason"].notna()
        if "unrated_reason" in scores.columns
        else pd.Series(False, index=scores.index)
    )
    value = pd.to_numeric(scores["raw_score"], errors="coerce").astype(float)
    defined = pd.Series(np.isfinite(value.to_numpy()), index=scores.index)
    rated = rate_scores(scores[~held & defined], suite, keys, system, levels, specs)
    unrated = scores[held & defined]
    unrated = unrated.assign(rating_reason=unrated.get("unrated_reason"))
    undefined = scores[~defined]
    if not undefined.empty:
        given = (
            undefined["undefined_reason"]
            if "undefined_reason" in undefined.columns
            else pd.Series(None, index=undefined.index, dtype=object)
        )
        why = [
            str(text) if text is not None and not pd.isna(text) else undefined_reason(v)
            for text, v in zip(given, value[~defined], strict=True)
        ]
        unrated = pd.concat(
            [
                unrated,
                undefined.assign(raw_score=np.nan, rating_reason=[f"not rated: {w}" for w in why]),
            ],
            ignore_index=True,
        )
    if unrated.empty:
        return rated
    order = list(keys) if "metric" in keys else [*keys, "metric"]
    directions = _spec_for(unrated, suite, specs)["higher_is_better"]
    extra = pd.DataFrame(
        {
            **{k: unrated[k].to_numpy() for k in order},
            system: unrated[system].to_numpy(),
            "raw_score": unrated["raw_score"].astype(float).to_numpy(),
            "rating": pd.array([None] * len(unrated), dtype="Int64"),
            "rating_levels": int(levels),
            "higher_is_better": [bool(directions[m]) for m in unrated["metric"]],
            "rank": pd.array([None] * len(unrated), dtype="Int64"),
            "rating_reason": unrated["rating_reason"].to_numpy(dtype=object),
        }
    )
    extra = extra[[c for c in rated.columns if c in extra.columns]]
    out = pd.concat([rated, extra], ignore_index=True)
    return out.sort_values([*order, "rank", system], na_position="last", kind="stable")[
        rated.columns
    ].reset_index(drop=True)


def undefined_reason(value: float) -> str:
    """Why an undefined score ``value`` is not rated, worded as the core's ``unrated_reason``
    macro. A null score read from a warehouse arrives in pandas as NaN, so null and NaN
    share one reason; an infinite score has its own."""
    if value is None or pd.isna(value):
        return "the score is undefined (null or NaN), so it cannot be compared with the others"
    return f"the score is infinite ({value}), so it cannot be compared with the others"


def metric_rule(spec: pd.DataFrame, metric: str) -> tuple[float | None, bool, float | None]:
    """``(ideal, higher_is_better, worst)`` of ``metric`` in a suite's rating spec
    (:func:`suite_spec`): the rule that rated its published scores (no ideal, lower-is-better
    and no worst value where the spec does not list the metric)."""
    if metric not in spec.index:
        return None, False, None
    ideal = spec.loc[metric, "ideal"]
    worst = spec.loc[metric, WORST] if WORST in spec.columns else np.nan
    return (
        None if pd.isna(ideal) else float(ideal),
        bool(spec.loc[metric, "higher_is_better"]),
        None if pd.isna(worst) else float(worst),
    )


def group_rng(seed: int, *parts: object) -> np.random.Generator:
    """The bootstrap generator of one rated group: seeded by ``seed`` and the first four
    bytes of sha256 of the group's key values joined by ``|`` (stable across processes)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4]
    return np.random.default_rng([seed, int.from_bytes(digest, "little")])


def stability_rng(seed: int, suite: str, *group: object) -> np.random.Generator:
    """The generator of one rated group's rating-stability bootstrap:
    :func:`group_rng` of ``seed`` (var ``bootstrap_seed``), the suite's name and the values
    that identify the group in the data (metric, task / feature / variant, ...), never the
    suite run id. So a suite rerun on identical data draws the same resamples and publishes
    the same shares, as the core's bootstrap does (seeded by ``bootstrap_seed`` only), while
    the groups of a run, and the suites, draw independently of each other."""
    return group_rng(seed, suite, *group)


def share_mc_se(share: float, counted: int) -> float:
    """Monte Carlo standard error of a share of resamples, ``sqrt(p (1 - p) / R)`` with
    ``R`` the resamples it counts (NaN for a NaN share or none counted): how far the
    share of ``R`` resamples may lie from the share of infinitely many, not a sampling error
    of the data. 0 at a share of 0 or 1 (every counted resample agreed)."""
    if counted <= 0 or not np.isfinite(share):
        return float("nan")
    return float(np.sqrt(share * (1.0 - share) / counted))


def stability_records(
    key: dict[str, object],
    published_rows: pd.DataFrame,
    system: str,
    draws: list[dict[str, float]],
    levels: int,
    rule: tuple[float | None, bool] | tuple[float | None, bool, float | None],
    counts: dict[str, int],
    *,
    interval: bool = True,
    weights: Sequence[float] | None = None,
) -> list[dict[str, object]]:
    """The rating-stability rows of one rated group.

    ``published_rows``: the group's rows of the suite's ratings (``system``, raw_score,
    rating, rating_reason); ``draws``: per resample, system -> re-scored value;
    ``rule``: :func:`metric_rule`. Resampled values within floating noise of 0 are 0
    (:func:`tsrate.methods.ratings.snap_to_zero` per resample), and so are interval ends.
    ``share_at_rating`` is
    :func:`tsrate.suites.intervals.stability_shares` (NaN for an unrated system or without
    resamples); ``share_mc_se`` its Monte Carlo standard error (:func:`share_mc_se` over the
    resamples the share counts; NaN where the share is); with ``interval``, ``ci_low`` /
    ``ci_high`` are the percentile interval of the system's resampled score
    (:func:`tsrate.suites.intervals.resampled_interval`), widened to the published score
    where it lies outside
    (:func:`tsrate.methods.ratings.interval_holding_the_point`).
    ``key`` (the group's columns) leads every row and ``counts`` (n_resamples, n_items, ...)
    then ``n_resamples_undefined`` end it: the resamples in which the system's value is
    undefined (missing or not finite), which the share and interval leave out; when they
    are more than ``MAX_UNDEFINED_SHARE`` of the resamples
    (:func:`tsrate.suites.intervals.too_many_undefined`) the share and interval are
    withheld (NaN): they would describe only the resamples where the score exists.
    ``weights`` (one per resample, summing to 1): ``draws`` are every distinct resample of
    an exact bootstrap with its probability; the share and the withholding weigh each by
    it, ``n_resamples_undefined`` counts the distinct resamples, and ``share_mc_se`` is 0
    (no Monte Carlo); without an interval only (its percentiles are unweighted)."""
    if weights is not None and interval:
        raise ValueError(
            "stability_records: weighted resamples have no interval; pass interval=False"
        )
    ideal, higher, worst = (*rule, None)[:3]
    # floating noise of 0 is 0 in every resample, as in the published scores
    # (tsrate.methods.ratings.snap_to_zero over the group's systems)
    draws = [
        dict(zip(d, snap_to_zero(np.fromiter(d.values(), dtype=float, count=len(d))), strict=True))
        if d
        else d
        for d in draws
    ]
    published = {
        getattr(row, system): None if pd.isna(row.rating) else int(row.rating)
        for row in published_rows.itertuples(index=False)
    }
    hits, counted = intervals.stability_counts(
        published,
        draws,
        levels,
        ideal=ideal,
        higher_is_better=higher,
        maximum=worst,
        weights=weights,
    )
    mass = np.ones(len(draws)) if weights is None else np.asarray(weights, dtype=float)
    shares = {s: (hits[s] / counted[s] if counted[s] else float("nan")) for s in published}
    records = []
    for row in published_rows.itertuples(index=False):
        name = getattr(row, system)
        values = np.array([d.get(name, np.nan) for d in draws], dtype=float)
        missing = ~np.isfinite(values)
        undefined = int(missing.sum())
        # by weight: the distinct draws of an exact bootstrap count their probability
        withheld = intervals.too_many_undefined(float(mass[missing].sum()), float(mass.sum()))
        if withheld:
            error = float("nan")
        elif weights is None:
            error = share_mc_se(shares[name], counted[name])
        else:  # exact: no Monte Carlo error (NaN with the share)
            error = 0.0 if np.isfinite(shares[name]) else float("nan")
        reason = getattr(row, "rating_reason", None)
        record = {
            **key,
            system: name,
            "raw_score": float(row.raw_score),
            "rating": published[name],
            "rating_levels": int(levels),
            "rating_reason": None if reason is None or pd.isna(reason) else str(reason),
            "share_at_rating": float("nan") if withheld else shares[name],
            "share_mc_se": error,
        }
        if interval:
            low, high = intervals.resampled_interval(values)
            if withheld:
                low = high = float("nan")
            # widened to the published score where it lies outside (the core's rule)
            ends = interval_holding_the_point(np.array([record["raw_score"]]), [low], [high])
            record["ci_low"], record["ci_high"] = float(ends[0, 0]), float(ends[1, 0])
        records.append({**record, **counts, UNDEFINED: undefined})
    if interval and records:
        # interval ends within floating noise of 0 are 0 (scale: the group's scores and ends)
        ends = np.array([[r["raw_score"], r["ci_low"], r["ci_high"]] for r in records])
        scale = float(np.max(np.abs(ends[np.isfinite(ends)]), initial=0.0))
        for r in records:
            r["ci_low"], r["ci_high"] = snap_to_zero([r["ci_low"], r["ci_high"]], scale=scale)
    return records


def stability_table(
    records: list[dict[str, object]],
    keys: Sequence[str],
    system: str,
    counts: Sequence[str],
    *,
    interval: bool = True,
) -> pd.DataFrame:
    """The rating-stability table of :func:`stability_records` rows: ``keys``, ``system``,
    :data:`STABILITY_VALUES` (+ ``ci_low``, ``ci_high`` with ``interval``), ``counts``,
    :data:`UNDEFINED`, typed (keys and system as strings, counts as integers)."""
    values = [*STABILITY_VALUES, *(["ci_low", "ci_high"] if interval else [])]
    counts = [*counts, UNDEFINED]
    columns = [*keys, system, *values, *counts]
    out = pd.DataFrame.from_records(records, columns=columns)
    return out.astype(
        {
            **dict.fromkeys([*keys, system], "string"),
            **{c: STABILITY_TYPES[c] for c in values},
            **dict.fromkeys(counts, "int64"),
        }
    )
