"""Pure functions behind the suite's dbt Python models (python_models/und_*.py).

``score_table``: every answer scored against its prompt's expected answer with
:func:`.tasks.score_answer` (unparseable = wrong, never guessed).

``task_scores``: one row per (suite run, system, task, feature, format): ``n_prompts``,
``n_unparsed``, ``accuracy`` (correct / all prompts, unparseable counted wrong), ``f1``
(detection and classification: macro F1 over the task's classes, an unparseable answer a
miss for its true class, :func:`.tasks.f1_macro`), ``mape`` (mean absolute percentage error
over the parsed numeric answers whose truth is not 0), ``date_accuracy`` (min/max: the date
right, over all prompts).

``rating_table``: ratings per (suite run, metric, feature) with the kit's
:func:`tsrate.suites.rating.rate_scores` and the suite's rows of
``seeds/suite_rating_specs.csv``; each metric is first averaged over formats.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from tsrate.suites.rating import rate_scores
from tsrate.suites.understanding.tasks import Parsed, f1_macro, score_answer

SCORED_COLUMNS = [
    "suite_run_id",
    "prompt_key",
    "system_id",
    "dataset",
    "task",
    "feature",
    "format",
    "quadrant",
    "series_length",
    "parse_ok",
    "truth",
    "predicted",
    "correct",
    "date_correct",
    "abs_pct_error",
]
SCORE_COLUMNS = [
    "suite_run_id",
    "system_id",
    "task",
    "feature",
    "format",
    "n_prompts",
    "n_unparsed",
    "accuracy",
    "f1",
    "mape",
    "date_accuracy",
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
                "system_id": row.system_id,
                "dataset": row.dataset,
                "task": row.task,
                "feature": row.feature,
                "format": row.format,
                "quadrant": None if pd.isna(row.quadrant) else int(row.quadrant),
                "series_length": int(row.series_length),
                "parse_ok": bool(row.parse_ok),
                "truth": _label(expected.get("answer", expected.get("value"))),
                "predicted": parsed.answer if parsed.ok else None,
                "correct": bool(score["correct"]),
                "date_correct": score["date_correct"],
                "abs_pct_error": score["abs_pct_error"],
            }
        )
    out = pd.DataFrame.from_records(records, columns=SCORED_COLUMNS)
    return out.astype(
        {
            "suite_run_id": "string",
            "prompt_key": "string",
            "system_id": "string",
            "dataset": "string",
            "task": "string",
            "feature": "string",
            "format": "string",
            "quadrant": "Int64",
            "series_length": "int64",
            "parse_ok": "bool",
            "truth": "string",
            "predicted": "string",
            "correct": "bool",
            "date_correct": "boolean",
            "abs_pct_error": "Float64",
        }
    )


def task_scores(scored: pd.DataFrame, options: pd.DataFrame) -> pd.DataFrame:
    """One row per (suite run, system, task, feature, format); ``options``: prompt_key ->
    the prompt's option list (the classes F1 averages over)."""
    class_sets = {row.prompt_key: tuple(row.options) for row in options.itertuples(index=False)}
    records = []
    keys = ["suite_run_id", "system_id", "task", "feature", "format"]
    for key, block in scored.groupby(keys, sort=True):
        record = dict(zip(keys, key, strict=True))
        n = len(block)
        record["n_prompts"] = n
        record["n_unparsed"] = int((~block["parse_ok"].astype(bool)).sum())
        record["accuracy"] = float(block["correct"].astype(bool).mean())
        record["f1"] = None
        if record["task"] in ("detection", "classification"):
            labels = sorted({c for k in block["prompt_key"] for c in class_sets.get(k, ())})
            truth = [str(t) for t in block["truth"]]
            predicted = [None if pd.isna(p) else str(p) for p in block["predicted"]]
            record["f1"] = f1_macro(truth, predicted, labels or sorted(set(truth)))
        errors = pd.to_numeric(block["abs_pct_error"], errors="coerce").dropna()
        record["mape"] = float(errors.mean()) if len(errors) else None
        dates = block["date_correct"].dropna()
        record["date_accuracy"] = float(dates.astype(bool).mean()) if len(dates) else None
        records.append(record)
    out = pd.DataFrame.from_records(records, columns=SCORE_COLUMNS)
    return out.astype(
        {
            "suite_run_id": "string",
            "system_id": "string",
            "task": "string",
            "feature": "string",
            "format": "string",
            "n_prompts": "int64",
            "n_unparsed": "int64",
            "accuracy": "float64",
            "f1": "Float64",
            "mape": "Float64",
            "date_accuracy": "Float64",
        }
    )


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, metric, feature) from und_scores (metrics: RATED_METRICS;
    each the mean over formats, and over min and max for arithmetic); ``specs``: the rating
    specs (default: the seed file)."""
    parts = [pd.DataFrame(columns=["suite_run_id", "feature", "system_id", "raw_score", "metric"])]
    for metric, (tasks, column) in RATED_METRICS.items():
        block = scores[scores["task"].isin(tasks)]
        if block.empty:
            continue
        values = pd.to_numeric(block[column], errors="coerce").astype(float)
        frame = block[["suite_run_id", "feature", "system_id"]].assign(raw_score=values)
        frame = frame[np.isfinite(frame["raw_score"])]
        mean = frame.groupby(["suite_run_id", "feature", "system_id"], as_index=False)[
            "raw_score"
        ].mean()
        parts.append(mean.assign(metric=metric))
    frame = pd.concat([p for p in parts if not p.empty] or parts[:1], ignore_index=True)
    return rate_scores(
        frame, "understanding", ["suite_run_id", "metric", "feature"], "system_id", levels, specs
    )
