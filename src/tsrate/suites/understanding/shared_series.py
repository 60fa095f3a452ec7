"""Cells of one comparison that ask about the same series (the dbt Python model
python_models/understanding/intermediate/int_und_shared_cells_correlated.py).

The format table (``und_format_table``) averages one system's cells (one per feature) of a
format and task, and combines their intervals. Most cells hold their own series, but a
``statistical_properties`` series is asked two detection questions (fat tails,
stationarity): two cells about one series, whose scores move together when the series are
redrawn. :func:`shared_cell_correlations` gives, for every pair of cells of a (suite run,
prompting, system, format, task) that share a series, the correlation of their two scores
(F1 for detection and classification, accuracy otherwise, as :func:`.marts.task_scores`
computes them) over a cluster bootstrap of the series of both: each resample draws as many
series as the two cells hold, with replacement, each bringing its prompts in both cells, so
a shared series counts once. Cells that share no series give no row (they are independent).
"""

from __future__ import annotations

import hashlib
from itertools import combinations

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites.understanding.scoring import f1_macro

KEYS = ["suite_run_id", "prompting", "system_id", "format", "task"]
COLUMNS = [
    *KEYS,
    "feature",
    "other_feature",
    "n_shared_series",
    "n_series",
    "correlation",
    "n_resamples",
    "n_resamples_undefined",
]
F1_TASKS = ("detection", "classification")


def _seed(*parts) -> int:
    """A resampling seed from the group's key (as the suite's other bootstraps seed)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4], "little")


def _series(block: pd.DataFrame) -> list[str]:
    """Each prompt's sampled unit: its series; a prompt without one is its own unit."""
    return [
        str(p) if pd.isna(k) else str(k)
        for k, p in zip(block["series_key"], block["prompt_key"], strict=True)
    ]


def _cell_score(task: str, cell: dict, weights: np.ndarray) -> float:
    """The cell's score with each prompt counted ``weights`` times (NaN when none drawn)."""
    if weights.sum() == 0:
        return float("nan")
    if task in F1_TASKS:
        drawn = np.repeat(np.arange(len(weights)), weights)
        return f1_macro(list(cell["truth"][drawn]), list(cell["predicted"][drawn]), cell["labels"])
    return float(np.average(cell["correct"], weights=weights))


def _cell(block: pd.DataFrame, class_sets: dict, units: dict[str, int]) -> dict:
    """One cell's prompts as arrays, each prompt's series numbered by ``units``."""
    truth = np.array([str(t) for t in block["truth"]], dtype=object)
    labels = sorted({c for k in block["prompt_key"] for c in class_sets.get(k, ())})
    return {
        "unit": np.array([units[s] for s in _series(block)], dtype=int),
        "correct": block["correct"].astype(float).to_numpy(),
        "truth": truth,
        "predicted": np.array(
            [None if pd.isna(p) else str(p) for p in block["predicted"]], dtype=object
        ),
        "labels": labels or sorted(set(truth)),
    }


def _pair_record(task: str, a: dict, b: dict, count: int, rng) -> dict:
    """Correlation of two cells' scores over ``rng``'s cluster-bootstrap resamples of their
    ``count`` series: NaN when more than ``intervals.MAX_UNDEFINED_SHARE`` of the resamples
    leave a score undefined, or when a score does not vary over the rest."""
    pairs = []
    for _ in range(intervals.BOOTSTRAP_RESAMPLES):
        drawn = np.bincount(rng.integers(0, count, count), minlength=count)
        pairs.append(
            (
                _cell_score(task, a, drawn[a["unit"]]),
                _cell_score(task, b, drawn[b["unit"]]),
            )
        )
    values = np.array(pairs, dtype=float)
    finite = np.isfinite(values).all(axis=1)
    undefined = int((~finite).sum())
    values = values[finite]
    correlation = float("nan")
    if not intervals.too_many_undefined(undefined, len(pairs)) and len(values) > 1:
        if values[:, 0].std() > 0 and values[:, 1].std() > 0:
            correlation = float(np.corrcoef(values[:, 0], values[:, 1])[0, 1])
    return {
        "correlation": correlation,
        "n_resamples": len(pairs),
        "n_resamples_undefined": undefined,
    }


def shared_cell_correlations(scored: pd.DataFrame, options: pd.DataFrame) -> pd.DataFrame:
    """Per (suite run, prompting, system, format, task) and pair of its features (``feature``
    before ``other_feature``) whose cells share a series: ``n_shared_series``, ``n_series``
    (the series of both cells, the units each resample draws) and ``correlation`` of the two
    cells' scores over ``intervals.BOOTSTRAP_RESAMPLES`` cluster-bootstrap resamples, seeded
    by the key without its suite run and the pair (a rerun on identical answers gives the
    same correlation); NaN when undefined (see :func:`_pair_record`). ``options``:
    prompt_key -> the prompt's option list (the classes F1 averages over)."""
    class_sets = {row.prompt_key: tuple(row.options) for row in options.itertuples(index=False)}
    records = []
    for key, block in scored.groupby(KEYS, sort=True):
        series = np.array(_series(block), dtype=object)
        by_feature = {
            f: series[(block["feature"] == f).to_numpy()] for f in block["feature"].unique()
        }
        for first, second in combinations(sorted(by_feature), 2):
            shared = set(by_feature[first]) & set(by_feature[second])
            if not shared:
                continue
            both = sorted(set(by_feature[first]) | set(by_feature[second]))
            units = {s: i for i, s in enumerate(both)}
            cells = [
                _cell(block[block["feature"] == f], class_sets, units) for f in (first, second)
            ]
            rng = np.random.default_rng(_seed(*key[1:], first, second))
            records.append(
                {
                    **dict(zip(KEYS, key, strict=True)),
                    "feature": first,
                    "other_feature": second,
                    "n_shared_series": len(shared),
                    "n_series": len(both),
                    **_pair_record(key[-1], *cells, len(both), rng),
                }
            )
    out = pd.DataFrame.from_records(records, columns=COLUMNS)
    return out.astype(
        {
            **dict.fromkeys([*KEYS, "feature", "other_feature"], "string"),
            "n_shared_series": "int64",
            "n_series": "int64",
            "correlation": "Float64",
            "n_resamples": "int64",
            "n_resamples_undefined": "int64",
        }
    )
