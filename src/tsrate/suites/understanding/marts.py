"""Pure functions behind the suite's dbt Python models
(python_models/understanding/intermediate/int_und_*.py).

Every answer counts: an unparseable or missing reply is part of every score.

Prompting styles are never mixed: ``prompting`` (``zero_shot`` / ``cot``, from the prompt;
``zero_shot`` where the answers carry no such column) is part of the grain of every table
here -- scores, ratings (each prompting style rated on its own: a system's zero-shot and
chain-of-thought answers are two comparisons, never one), rating stability and position bias.

``score_table``: every answer scored against its prompt's expected answer with
:func:`.scoring.score_answer` (unparseable = wrong, never guessed). Numeric tasks (retrieval,
min, max) with a truth other than 0 carry ``abs_pct_error`` for EVERY answer: a parsed answer
its own error; an unusable one (unparseable or missing) the **penalty**
:func:`penalty_error` = the largest absolute percentage error any system's parsed answer had
on the same prompt in the same suite run, and at least 100 % (the error of answering 0).
So on every prompt an unusable answer is at least as wrong as every usable one, and a system
whose answers are all unusable ranks last (or tied last) on every error metric it attempted;
``error_penalised`` marks those rows.

``task_scores``: one row per (suite run, prompting, system, task, feature, format): ``n_prompts``,
``n_unparsed`` (stored replies the parser could not read), ``n_unanswered`` (prompts without a
stored reply: a run that ended early), ``n_abstained`` (replies that declined every option,
"None of these": the parser read them, and they chose nothing), ``n_parsed_by_llm`` (chain-of-thought replies whose answer the parser
model extracted, :mod:`.cot_parser`), ``coverage`` (usable / all prompts), ``accuracy`` (correct / all prompts,
unparseable counted wrong) with its Wilson 95 % interval, ``f1`` (detection and
classification: macro F1 over the task's classes, an unparseable answer a miss for its true
class, :func:`.scoring.f1_macro`) with a bootstrap 95 % interval over series, ``mape`` (mean
absolute percentage error over every prompt whose truth is not 0, penalties included) with a
bootstrap interval, ``mape_parsed`` (the parsed answers only, for reference: never rated),
``date_accuracy`` (min/max: the date right, over all prompts), ``accuracy_two_step``
(classification: right AND every detection question about the same series in the same
format right -- the paper's two-step protocol, classifying only after a correct
detection, computed from the same answers; not rated). Intervals:
:mod:`tsrate.suites.intervals`.

``rating_table``: ratings per (suite run, prompting, metric, feature) with the kit's
:func:`tsrate.suites.rating.rate_scores` and the suite's rows of
``seeds/suite_rating_specs.csv``; each metric is first averaged over formats.

``rating_stability_table``: share of series resamples at the published rating, each resample
re-rated by the same rule (the spec's direction and ideal), and the percentile 95 % interval
of each rated score over the same resamples.

``position_bias_table``: accuracy per quadrant (pooled over formats) tested against the
other quadrants with the two-proportion z test on the series (a series in both groups
counted with its covariance), Holm-corrected over every test of the run.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites import rating as kit
from tsrate.suites.understanding.scoring import Parsed, f1_macro, score_answer

NUMERIC_TASKS = ("retrieval", "arithmetic_min", "arithmetic_max")
#: Least penalty (%) for an unusable numeric answer: the error of answering 0.
PENALTY_FLOOR_PCT = 100.0

SCORED_COLUMNS = [
    "suite_run_id",
    "prompt_key",
    "series_key",
    "prompting",
    "system_id",
    "dataset",
    "task",
    "feature",
    "format",
    "quadrant",
    "series_length",
    "answered",
    "parse_ok",
    "abstained",
    "parsed_by",
    "truth",
    "predicted",
    "correct",
    "date_correct",
    "abs_pct_error",
    "error_penalised",
]
SCORE_COLUMNS = [
    "suite_run_id",
    "prompting",
    "system_id",
    "task",
    "feature",
    "format",
    "n_prompts",
    "n_unparsed",
    "n_unanswered",
    "n_abstained",
    "n_parsed_by_llm",
    "coverage",
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "f1",
    "f1_ci_low",
    "f1_ci_high",
    "mape",
    "mape_ci_low",
    "mape_ci_high",
    "mape_parsed",
    "date_accuracy",
    "accuracy_two_step",
]

#: Rated metrics: the tasks and score column each averages (directions: the rating spec).
RATED_METRICS: dict[str, tuple[tuple[str, ...], str]] = {
    "detection_f1": (("detection",), "f1"),
    "classification_f1": (("classification",), "f1"),
    "retrieval_accuracy": (("retrieval",), "accuracy"),
    "retrieval_mape": (("retrieval",), "mape"),
    "arithmetic_accuracy": (("arithmetic_min", "arithmetic_max"), "accuracy"),
    "arithmetic_mape": (("arithmetic_min", "arithmetic_max"), "mape"),
    "matching_intra_accuracy": (("matching_intra",), "accuracy"),
    "matching_cross_accuracy": (("matching_cross",), "accuracy"),
}


def _label(value) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value)


def score_table(answers: pd.DataFrame) -> pd.DataFrame:
    """``answers``: int_und_answers_selected (one row per suite run, prompt and system)."""
    records = []
    for row in answers.itertuples(index=False):
        expected = json.loads(row.expected) if isinstance(row.expected, str) else dict(row.expected)
        date = row.answer_date
        parsed = Parsed(
            bool(row.parse_ok),
            answer=_label(row.answer),
            value=None if pd.isna(row.answer_value) else float(row.answer_value),
            date=None if date is None or pd.isna(date) else str(pd.Timestamp(date).date()),
            error=row.parse_error,
        )
        score = score_answer(row.task, expected, parsed, int(row.decimals))
        records.append(
            {
                "suite_run_id": row.suite_run_id,
                "prompt_key": row.prompt_key,
                "series_key": getattr(row, "series_key", None),
                "prompting": str(getattr(row, "prompting", None) or "zero_shot"),
                "system_id": row.system_id,
                "dataset": row.dataset,
                "task": row.task,
                "feature": row.feature,
                "format": row.format,
                "quadrant": None if pd.isna(row.quadrant) else int(row.quadrant),
                "series_length": int(row.series_length),
                # a frame without the column (older callers): every row held a reply
                "answered": bool(getattr(row, "answered", True)),
                "parse_ok": bool(row.parse_ok),
                # older callers' frames lack the column: no reply there was an abstention
                "abstained": bool(getattr(row, "abstained", False)),
                "parsed_by": _label(getattr(row, "parsed_by", None))
                or ("regex" if row.parse_ok else None),
                "truth": _label(expected.get("answer", expected.get("value"))),
                "predicted": parsed.answer if parsed.ok else None,
                "correct": bool(score["correct"]),
                "date_correct": score["date_correct"],
                "abs_pct_error": score["abs_pct_error"],
                "error_penalised": False,
                "_truth_value": expected.get("value"),
            }
        )
    out = pd.DataFrame.from_records(records, columns=[*SCORED_COLUMNS, "_truth_value"])
    out = penalise_unusable(out).drop(columns="_truth_value")
    return out.astype(
        {
            "suite_run_id": "string",
            "prompt_key": "string",
            "series_key": "string",
            "prompting": "string",
            "system_id": "string",
            "dataset": "string",
            "task": "string",
            "feature": "string",
            "format": "string",
            "quadrant": "Int64",
            "series_length": "int64",
            "answered": "bool",
            "parse_ok": "bool",
            "abstained": "bool",
            "parsed_by": "string",
            "truth": "string",
            "predicted": "string",
            "correct": "bool",
            "date_correct": "boolean",
            "abs_pct_error": "Float64",
            "error_penalised": "bool",
        }
    )


def penalty_error(parsed_errors) -> float:
    """Error (%) charged for an unusable numeric answer on one prompt: the largest error of
    the parsed answers on that prompt (any system of the run), at least
    :data:`PENALTY_FLOOR_PCT`."""
    values = [float(v) for v in parsed_errors if v is not None and np.isfinite(float(v))]
    return max([PENALTY_FLOOR_PCT, *values])


def penalise_unusable(scored: pd.DataFrame) -> pd.DataFrame:
    """Fill ``abs_pct_error`` of unusable numeric answers (truth not 0) with
    :func:`penalty_error` of their prompt in their suite run; ``error_penalised`` = True."""
    out = scored.copy()
    if out.empty:
        return out
    truth = pd.to_numeric(out["_truth_value"], errors="coerce")
    needs = (
        out["task"].isin(NUMERIC_TASKS)
        & ~out["parse_ok"].astype(bool)
        & truth.notna()
        & (truth != 0)
    )
    if not needs.any():
        return out
    errors = pd.to_numeric(out["abs_pct_error"], errors="coerce")
    worst = (
        errors.where(out["parse_ok"].astype(bool))
        .groupby([out["suite_run_id"], out["prompt_key"]])
        .max()
    )
    keys = list(zip(out.loc[needs, "suite_run_id"], out.loc[needs, "prompt_key"], strict=True))
    out["abs_pct_error"] = errors.astype(float)
    out.loc[needs, "abs_pct_error"] = [penalty_error([worst.get(k, np.nan)]) for k in keys]
    out.loc[needs, "error_penalised"] = True
    return out


def _bootstrap_seed(*parts) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4], "little")


def _seed_parts(key: tuple, at: int) -> tuple:
    """A group key for seeding its bootstrap: zero-shot groups without their prompting
    (position ``at``), so that they draw the resamples they drew before prompting styles."""
    return key[:at] + key[at + 1 :] if key[at] == "zero_shot" else key


def task_scores(scored: pd.DataFrame, options: pd.DataFrame) -> pd.DataFrame:
    """One row per (suite run, prompting, system, task, feature, format); ``options``: prompt_key ->
    the prompt's option list (the classes F1 averages over)."""
    class_sets = {row.prompt_key: tuple(row.options) for row in options.itertuples(index=False)}
    detected = _detections_right(scored)
    records = []
    keys = ["suite_run_id", "prompting", "system_id", "task", "feature", "format"]
    for key, block in scored.groupby(keys, sort=True):
        record = dict(zip(keys, key, strict=True))
        n = len(block)
        record["n_prompts"] = n
        parsed = block["parse_ok"].astype(bool).to_numpy()
        answered = (
            block["answered"].astype(bool).to_numpy()
            if "answered" in block.columns
            else np.ones(n, dtype=bool)
        )
        flagged = (
            block["abstained"].astype(bool).to_numpy()
            if "abstained" in block.columns
            else np.zeros(n, dtype=bool)
        )
        abstained = flagged & answered & ~parsed
        # unusable = unparseable (a stored reply the parser could not read) + abstained (a
        # reply that declined every option) + unanswered (no stored reply): three apart
        record["n_unparsed"] = int((answered & ~parsed & ~abstained).sum())
        record["n_unanswered"] = int((~answered).sum())
        record["n_abstained"] = int(abstained.sum())
        record["n_parsed_by_llm"] = (
            int((block["parsed_by"] == "llm").sum()) if "parsed_by" in block.columns else 0
        )
        record["coverage"] = float(parsed.mean())
        correct = block["correct"].astype(bool).to_numpy()
        record["accuracy"] = float(correct.mean())
        # the series is the sampled unit: a series asked twice in a cell counts once
        series = _series_of(block)
        low, high = intervals.clustered_wilson_interval(correct, series)
        record["accuracy_ci_low"], record["accuracy_ci_high"] = low, high
        # the key without its suite run: a rerun on identical answers gives the same intervals
        seed = _bootstrap_seed(*_seed_parts(key, 1)[1:])
        record["f1"] = record["f1_ci_low"] = record["f1_ci_high"] = None
        if record["task"] in ("detection", "classification"):
            labels = sorted({c for k in block["prompt_key"] for c in class_sets.get(k, ())})
            truth = np.array([str(t) for t in block["truth"]], dtype=object)
            predicted = np.array(
                [None if pd.isna(p) else str(p) for p in block["predicted"]], dtype=object
            )
            labels = labels or sorted(set(truth))
            record["f1"] = f1_macro(list(truth), list(predicted), labels)
            record["f1_ci_low"], record["f1_ci_high"] = intervals.bootstrap_interval(
                np.arange(n),
                lambda i, t=truth, p=predicted, ls=labels: f1_macro(list(t[i]), list(p[i]), ls),
                seed=seed,
                clusters=series,
            )
        errors = pd.to_numeric(block["abs_pct_error"], errors="coerce")
        every = errors.dropna().to_numpy(dtype=float)
        every_series = series[errors.notna().to_numpy()]
        own = errors[block["parse_ok"].astype(bool)].dropna()
        record["mape"] = float(every.mean()) if len(every) else None
        record["mape_ci_low"], record["mape_ci_high"] = (
            intervals.bootstrap_interval(
                every,
                seed=seed,
                what=(
                    f"mape of system {record['system_id']} ({record['task']}, "
                    f"{record['feature']}, {record['format']}, {record['prompting']})"
                ),
                clusters=every_series,
            )
            if len(every)
            else (None, None)
        )
        record["mape_parsed"] = float(own.mean()) if len(own) else None
        dates = block["date_correct"].dropna()
        record["date_accuracy"] = float(dates.astype(bool).mean()) if len(dates) else None
        record["accuracy_two_step"] = None
        if record["task"] == "classification" and block["series_key"].notna().all():
            gate = [
                detected.get(
                    (r.suite_run_id, r.prompting, r.system_id, r.series_key, r.format), False
                )
                for r in block.itertuples(index=False)
            ]
            record["accuracy_two_step"] = float(np.mean(correct & np.array(gate, dtype=bool)))
        records.append(record)
    out = pd.DataFrame.from_records(records, columns=SCORE_COLUMNS)
    return out.astype(
        {
            "suite_run_id": "string",
            "prompting": "string",
            "system_id": "string",
            "task": "string",
            "feature": "string",
            "format": "string",
            "n_prompts": "int64",
            "n_unparsed": "int64",
            "n_unanswered": "int64",
            "n_abstained": "int64",
            "n_parsed_by_llm": "int64",
            "coverage": "float64",
            "accuracy": "float64",
            "accuracy_ci_low": "float64",
            "accuracy_ci_high": "float64",
            "f1": "Float64",
            "f1_ci_low": "Float64",
            "f1_ci_high": "Float64",
            "mape": "Float64",
            "mape_ci_low": "Float64",
            "mape_ci_high": "Float64",
            "mape_parsed": "Float64",
            "date_accuracy": "Float64",
            "accuracy_two_step": "Float64",
        }
    )


def _series_of(block: pd.DataFrame) -> np.ndarray:
    """Each prompt's sampled unit: its series (``series_key``); a prompt without one (an
    older caller's frame) is its own unit."""
    keys = block["series_key"] if "series_key" in block.columns else [None] * len(block)
    prompts = (
        block["prompt_key"].astype(str).to_numpy()
        if "prompt_key" in block.columns
        else np.array([f"#{i}" for i in range(len(block))])
    )
    return np.array(
        [p if pd.isna(k) else str(k) for k, p in zip(keys, prompts, strict=True)], dtype=object
    )


def _detections_right(scored: pd.DataFrame) -> dict[tuple, bool]:
    """(suite run, prompting, system, series, format) -> every detection question about the
    series in that format and prompting answered right (the paper's two-step gate: classify only after a correct
    detection)."""
    part = scored[(scored["task"] == "detection") & scored["series_key"].notna()]
    if part.empty:
        return {}
    grouped = part.groupby(["suite_run_id", "prompting", "system_id", "series_key", "format"])[
        "correct"
    ]
    return {key: bool(value) for key, value in grouped.all().items()}


#: why a score undefined in every format (e.g. no answer it could be computed from) is
#: not rated
UNDEFINED_EVERYWHERE = (
    "the score is undefined in every format, so it cannot be compared with the others"
)


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, prompting, metric, feature) from und_scores (metrics:
    RATED_METRICS; each the mean over the formats where it is defined, and over min and
    max for arithmetic; each prompting style rated on its own); ``specs``: the rating
    specs (default: the seed file). A score defined in no format is listed, not rated
    ("not rated: " + :data:`UNDEFINED_EVERYWHERE`)."""
    group = ["suite_run_id", "prompting", "feature", "system_id"]
    parts = [pd.DataFrame(columns=[*group, "raw_score", "metric"])]
    if "prompting" not in scores.columns:
        scores = scores.assign(prompting="zero_shot")
    for metric, (tasks, column) in RATED_METRICS.items():
        block = scores[scores["task"].isin(tasks)]
        if block.empty:
            continue
        values = pd.to_numeric(block[column], errors="coerce").astype(float)
        # the mean over the formats where the score is defined; a group defined in none
        # keeps its row (NaN), which the kit lists as not rated with the reason
        frame = block[group].assign(raw_score=values.where(np.isfinite(values)))
        mean = frame.groupby(group, as_index=False)["raw_score"].mean()
        mean = mean.assign(
            undefined_reason=np.where(mean["raw_score"].isna(), UNDEFINED_EVERYWHERE, None)
        )
        parts.append(mean.assign(metric=metric))
    frame = pd.concat([p for p in parts if not p.empty] or parts[:1], ignore_index=True)
    return kit.rating_table(
        frame,
        "understanding",
        ["suite_run_id", "metric", "prompting", "feature"],
        "system_id",
        levels,
        specs,
    )


def _groups(column: str, block: pd.DataFrame) -> list[tuple]:
    """One system's prompts of one (metric, feature), split by (task, format), as arrays:
    (prompt indices, values) for accuracy / MAPE, (prompt indices, truth, predicted) for F1."""
    out = []
    for _, part in block.groupby(["task", "format"], sort=False):
        index = part["_prompt_index"].to_numpy()
        if column == "accuracy":
            out.append((index, part["correct"].astype(float).to_numpy()))
        elif column == "mape":
            err = pd.to_numeric(part["abs_pct_error"], errors="coerce").to_numpy(dtype=float)
            keep = np.isfinite(err)
            if keep.any():
                out.append((index[keep], err[keep]))
        else:
            truth = part["truth"].astype(str).to_numpy(dtype=object)
            predicted = np.array(
                [None if pd.isna(p) else str(p) for p in part["predicted"]], dtype=object
            )
            out.append((index, truth, predicted))
    return out


def _weighted_f1(truth, predicted, weights, labels) -> float:
    """:func:`.scoring.f1_macro` with each prompt counted ``weights`` times."""
    scores = []
    for label in labels:
        t, p = truth == label, predicted == label
        tp, fp, fn = weights[t & p].sum(), weights[~t & p].sum(), weights[t & ~p].sum()
        if tp + fp + fn == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")


def _metric_value(column: str, groups: list[tuple], weights: np.ndarray, labels) -> float:
    """A metric of RATED_METRICS on one system's prompts with prompt multiplicities
    ``weights``: the mean over (task, format) groups of accuracy / MAPE / macro F1, as
    :func:`task_scores` and :func:`rating_table` compute it."""
    values = []
    for group in groups:
        w = weights[group[0]]
        if w.sum() == 0:
            continue
        if column in ("accuracy", "mape"):
            values.append(float(np.average(group[1], weights=w)))
        else:
            truth, predicted = group[1], group[2]
            values.append(
                _weighted_f1(truth, predicted, w.astype(float), labels or sorted(set(truth)))
            )
    values = [v for v in values if np.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")


def rating_stability_table(
    scored: pd.DataFrame,
    options: pd.DataFrame,
    ratings: pd.DataFrame,
    levels: int,
    resamples: int = intervals.BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    specs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """How firm each rating of ``ratings`` (int_und_ratings_assigned) is: the prompts of each
    (suite run, metric, feature) are resampled with replacement (one draw per resample for
    every system: they answer the same prompts; a prompt = one question about one series in
    one format), the metric re-scored like :func:`task_scores` + :func:`rating_table` and
    re-rated by the same rule (direction and ideal of the suite's rating spec ``specs``,
    default the seed file); ``share_at_rating`` = share of resamples giving the published
    rating (NaN for an unrated system); ``ci_low`` / ``ci_high`` = the percentile 95 %
    interval of the system's re-scored metric over the same resamples
    (:func:`tsrate.suites.intervals.resampled_interval`; like the core's
    ``rating_stability``): the interval of the rated score itself (a mean over formats);
    ``share_mc_se`` = the share's Monte Carlo standard error. The resamples are seeded by
    ``seed`` (var bootstrap_seed), the suite, prompting, metric and feature
    (:func:`tsrate.suites.rating.stability_rng`), not the suite run: identical data,
    identical shares. ``rating_levels`` and ``rating_reason`` are copied from ``ratings``."""
    spec = kit.suite_spec("understanding", specs)
    class_sets = {row.prompt_key: tuple(row.options) for row in options.itertuples(index=False)}
    records = []
    for metric, (tasks, column) in RATED_METRICS.items():
        part = scored[scored["task"].isin(tasks)]
        for (suite_run_id, prompting, feature), block in part.groupby(
            ["suite_run_id", "prompting", "feature"]
        ):
            published_rows = ratings[
                (ratings["suite_run_id"] == suite_run_id)
                & (ratings["prompting"] == prompting)
                & (ratings["metric"] == metric)
                & (ratings["feature"] == feature)
            ]
            if published_rows.empty:
                continue
            keys = sorted(block["prompt_key"].unique())
            index = {k: i for i, k in enumerate(keys)}
            block = block.assign(_prompt_index=block["prompt_key"].map(index))
            # the series is the sampled unit: a resample draws series, each with every
            # prompt about it (all its formats, min and max alike)
            unit = dict(zip(block["prompt_key"], _series_of(block), strict=True))
            unit_index = intervals.cluster_order([unit[k] for k in keys])
            labels = sorted({c for k in keys for c in class_sets.get(k, ())})
            systems = {s: _groups(column, b) for s, b in block.groupby("system_id")}
            # seeded by the data's keys, not the suite run: a rerun draws the same resamples
            rng = kit.stability_rng(seed, "understanding", prompting, metric, feature)
            draws = []
            for _ in range(resamples):
                weights = intervals.cluster_weights(unit_index, rng)
                draws.append(
                    {
                        s: _metric_value(column, systems[s], weights, labels)
                        for s in published_rows["system_id"]
                        if s in systems
                    }
                )
            group = {"suite_run_id": suite_run_id, "prompting": prompting}
            records += kit.stability_records(
                {**group, "metric": metric, "feature": feature},
                published_rows,
                "system_id",
                draws,
                levels,
                kit.metric_rule(spec, metric),
                {
                    "n_resamples": resamples,
                    "n_prompts": len(keys),
                    "n_series": int(unit_index.max()) + 1,
                },
            )
    keys = ["suite_run_id", "prompting", "metric", "feature"]
    counts = ["n_resamples", "n_prompts", "n_series"]
    return kit.stability_table(records, keys, "system_id", counts)


POSITION_COLUMNS = [
    "suite_run_id",
    "prompting",
    "system_id",
    "dataset",
    "task",
    "quadrant",
    "n_prompts",
    "n_correct",
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "accuracy_elsewhere",
    "p_value",
    "p_holm",
    "min_prompts_to_judge",
    "judgeable",
    "position_bias",
]


def position_bias_table(scored: pd.DataFrame) -> pd.DataFrame:
    """Position bias (paper Section 4.3), as a significance test.

    Per (suite run, prompting, system, dataset, task, quadrant), pooled over formats: the accuracy on
    prompts whose queried date / extreme lies in that quarter of the series, with its
    Wilson interval, tested against the accuracy on the other three quarters of the same
    (system, dataset, task) with the two-sided pooled two-proportion z test; interval, test
    and power count series, not prompts (effective counts,
    :func:`tsrate.suites.intervals.clustered_counts`: a series asked in several formats is
    one sampled unit). A series asked about dates both inside and outside the quadrant is
    in both groups, which are then not independent: the test's variance takes the
    covariance of those series' answers
    (:func:`tsrate.suites.intervals.clustered_two_proportion_p`; with no series in both,
    the test above). The p-values
    of every test of a suite run are Holm-corrected together (family = the suite run).
    ``position_bias`` = Holm p < 0.05; null (too small to judge) when the quadrant holds
    fewer than ``min_prompts_to_judge`` prompts
    (:func:`tsrate.suites.intervals.items_for_power` for the cell's ratio of rest to
    quadrant: 80 % power for a 25-point gap around 50 % at 0.05, before Holm)."""
    part = scored[scored["quadrant"].notna()]
    records = []
    keys = ["suite_run_id", "prompting", "system_id", "dataset", "task"]
    for key, block in part.groupby(keys, sort=True):
        correct = block["correct"].astype(bool)
        quadrant = block["quadrant"].astype(int)
        series = _series_of(block)
        for q in (1, 2, 3, 4):
            inside = (quadrant == q).to_numpy()
            n1, k1 = int(inside.sum()), int(correct[inside].sum())
            n2, k2 = int((~inside).sum()), int(correct[~inside].sum())
            if n1 == 0:
                continue
            # pooled over formats: a series asked in several formats is one unit, so the
            # interval, the test and the power use the effective counts of the series
            e1 = intervals.clustered_counts(correct[inside].to_numpy(), series[inside])
            e2 = intervals.clustered_counts(correct[~inside].to_numpy(), series[~inside])
            low, high = intervals.wilson_interval(*e1)
            need = intervals.items_for_power(ratio=e2[1] / e1[1]) if n2 else None
            # a series asked inside and outside the quadrant is in both groups
            p_value = float("nan")
            if n2:
                p_value = intervals.clustered_two_proportion_p(
                    correct[inside].to_numpy(), series[inside], correct[~inside], series[~inside]
                )
            records.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "quadrant": q,
                    "n_prompts": n1,
                    "n_correct": k1,
                    "accuracy": k1 / n1,
                    "accuracy_ci_low": float(low),
                    "accuracy_ci_high": float(high),
                    "accuracy_elsewhere": k2 / n2 if n2 else None,
                    "p_value": p_value,
                    "min_prompts_to_judge": need,
                    "judgeable": need is not None and e1[1] >= need,
                }
            )
    out = pd.DataFrame.from_records(records, columns=POSITION_COLUMNS)
    if not out.empty:
        out["p_holm"] = np.nan
        for _, rows in out.groupby("suite_run_id"):
            out.loc[rows.index, "p_holm"] = intervals.holm(rows["p_value"].to_numpy())
        out["position_bias"] = [
            (bool(p < intervals.ALPHA) if np.isfinite(p) else False) if ok else None
            for p, ok in zip(out["p_holm"], out["judgeable"], strict=True)
        ]
    return out.astype(
        {
            "suite_run_id": "string",
            "prompting": "string",
            "system_id": "string",
            "dataset": "string",
            "task": "string",
            "quadrant": "int64",
            "n_prompts": "int64",
            "n_correct": "int64",
            "accuracy": "float64",
            "accuracy_ci_low": "float64",
            "accuracy_ci_high": "float64",
            "accuracy_elsewhere": "Float64",
            "p_value": "Float64",
            "p_holm": "Float64",
            "min_prompts_to_judge": "Int64",
            "judgeable": "bool",
            "position_bias": "boolean",
        }
    )
