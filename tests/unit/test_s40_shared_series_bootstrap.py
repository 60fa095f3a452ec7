"""The correlation of two cells that share series, rebuilt resample by resample from the
module's documented definition: a cluster bootstrap of the series of both cells (as many
draws as there are series, with replacement, each bringing all its prompts in both cells),
seeded by the key without its suite run and the pair (sha256, first 4 bytes, little endian),
the series numbered in sorted order; F1 (macro over the prompts' options, a class with no
true and no predicted prompt left out) for classification and detection, accuracy otherwise.
The scores are computed here loop by loop, not with the suite's scorers. Tied to the draw
order: a harmless reordering of the draws fails these tests."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.intervals import BOOTSTRAP_RESAMPLES
from tsrate.suites.understanding.marts import score_table
from tsrate.suites.understanding.shared_series import shared_cell_correlations

CLASSES = ("a", "b", "c")


def answer_rows(task: str, run: str = "run") -> list[dict]:
    """Two features of one (system, format, task): fat_tails asks about s00..s09 (s03 twice),
    stationarity about s05..s14: 5 series shared, 15 in all. Classification truths use
    only a and b, and some replies say c (an option no truth holds)."""
    rng = np.random.default_rng(7)
    rows = []
    for feature, series in (("fat_tails", [*range(10), 3]), ("stationarity", range(5, 15))):
        for i, s in enumerate(series):
            truth = CLASSES[rng.integers(2)]
            said = truth if rng.random() < 0.5 else CLASSES[rng.integers(3)]
            if task == "classification":
                expected, answer, value = f'{{"answer": "{truth}"}}', said, None
            else:
                expected, answer, value = (
                    '{"value": 100.0}',
                    None,
                    (100.0 if rng.random() < 0.6 else 150.0),
                )
            rows.append(
                {"suite_run_id": run, "prompt_key": f"s{s:02d}-{feature}-{i}",
                 "series_key": f"s{s:02d}", "system_id": "sys", "dataset": "statistical_properties",
                 "task": task, "feature": feature, "format": "csv", "decimals": 2,
                 "expected": expected, "quadrant": None, "series_length": 40,
                 "parse_ok": True, "parse_error": None, "answer": answer,
                 "answer_value": value, "answer_date": None}
            )  # fmt: skip
    return rows


def options_of(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {"prompt_key": [r["prompt_key"] for r in rows], "options": [CLASSES] * len(rows)}
    )


def macro_f1(pairs: list[tuple[str, str | None]], labels: tuple[str, ...]) -> float:
    scores = []
    for label in labels:
        tp = fp = fn = 0
        for truth, said in pairs:
            tp += truth == label and said == label
            fp += truth != label and said == label
            fn += truth == label and said != label
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else float("nan")


def expected_correlation(rows: list[dict], task: str) -> tuple[float, int]:
    """(correlation, n_series) of the two features' scores, rebuilt draw by draw."""
    key = "|".join(["zero_shot", "sys", "csv", task, "fat_tails", "stationarity"])
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")
    rng = np.random.default_rng(seed)
    series = sorted({r["series_key"] for r in rows})
    cells = {f: [r for r in rows if r["feature"] == f] for f in ("fat_tails", "stationarity")}
    scores = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        drawn = [series[i] for i in rng.integers(0, len(series), len(series))]
        pair = []
        for cell in cells.values():
            prompts = [r for s in drawn for r in cell if r["series_key"] == s]
            if not prompts:
                pair.append(float("nan"))
            elif task == "classification":
                truths = [r["expected"].split('"')[3] for r in prompts]
                said = [r["answer"] for r in prompts]
                pair.append(macro_f1(list(zip(truths, said, strict=True)), CLASSES))
            else:
                pair.append(sum(r["answer_value"] == 100.0 for r in prompts) / len(prompts))
        scores.append(pair)
    values = np.array(scores)
    values = values[np.isfinite(values).all(axis=1)]
    return float(np.corrcoef(values[:, 0], values[:, 1])[0, 1]), len(series)


@pytest.mark.parametrize("task", ["classification", "retrieval"])
def test_the_shared_cells_correlation_is_the_documented_cluster_bootstrap(task):
    rows = answer_rows(task)
    table = shared_cell_correlations(score_table(pd.DataFrame(rows)), options_of(rows))
    assert len(table) == 1
    row = table.iloc[0]
    correlation, n_series = expected_correlation(rows, task)
    assert (row["n_shared_series"], row["n_series"]) == (5, n_series) == (5, 15)
    assert row["n_resamples"] == BOOTSTRAP_RESAMPLES
    assert row["correlation"] == pytest.approx(correlation, rel=1e-12)


def test_a_rerun_of_the_same_answers_gives_the_same_correlation():
    """The seed leaves out the suite run: identical answers in another run, same draws."""
    first, second = answer_rows("retrieval", "run-1"), answer_rows("retrieval", "run-2")
    table = shared_cell_correlations(
        score_table(pd.DataFrame(first + second)), options_of(first + second)
    )
    assert len(table) == 2
    assert table["correlation"].iloc[0] == table["correlation"].iloc[1]
