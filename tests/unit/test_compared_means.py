"""The verdict and the reading take the systems' compared accuracy means from one place
(:func:`coverage.compared_means`), so they cannot name different most accurate systems.

Expected means come from plain loops over the rows each test builds: over the perturbations
every system has when one system is rated on fewer, else over each system's rows (the
summary's means).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support.report_text import PERTURBATIONS, plain, rating_rows, report_data, uniform
from tsrate.robustness.report import coverage
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.sections import verdict_section

KEEPS = [("P0",), ("P0", "P1", "P3"), ("P1", "P2"), tuple(PERTURBATIONS)]


def run_keeping(keep: tuple[str, ...]) -> pd.DataFrame:
    """zeta SMAPE 30 everywhere; alpha 20 on P0, 40 on P1-P3; mid 28 on P0, 22 on P1-P3,
    rated on ``keep`` only (its other rows dropped, as a partial import)."""
    zeta, alpha, mid = uniform(2, smape=30.0), uniform(1, smape=20.0), uniform(3, smape=22.0)
    alpha["smape"] = [20.0, 40.0, 40.0, 40.0]
    mid["smape"] = [28.0, 22.0, 22.0, 22.0]
    rows = rating_rows({"zeta": zeta, "alpha": alpha, "mid": mid})
    partial = (rows["system_id"] == "mid") & ~rows["perturbation_id"].isin(keep)
    return rows[~partial].reset_index(drop=True)


def by_hand(rows: pd.DataFrame, keep: tuple[str, ...]) -> dict[str, float]:
    """Each system's mean SMAPE over the perturbations all share (every row if all share all)."""
    shared = [p for p in PERTURBATIONS if p in keep]
    sums: dict[str, list[float]] = {}
    for row in rows.itertuples():
        if row.metric == "smape" and row.perturbation_id in shared:
            sums.setdefault(row.system_id, []).append(row.raw_score)
    return {s: sum(v) / len(v) for s, v in sums.items()}


@pytest.mark.parametrize("keep", KEEPS)
def test_the_compared_means_are_over_the_shared_perturbations(keep):
    rows = run_keeping(keep)
    means, shared, left_out = coverage.compared_means(report_data(rows), "smape")
    expected = by_hand(rows, keep)
    got = dict(zip(means["system_id"], means["avg_raw_score"], strict=True))
    assert got == pytest.approx(expected)
    assert list(means["system_id"]) == sorted(expected, key=lambda s: (expected[s], s))
    assert shared == ([] if len(keep) == len(PERTURBATIONS) else list(keep))
    assert left_out == []


@pytest.mark.parametrize("keep", KEEPS)
def test_the_verdict_and_the_reading_name_the_same_most_accurate_system(keep):
    rows = run_keeping(keep)
    expected = by_hand(rows, keep)
    best = min(expected, key=expected.get)
    data = report_data(rows)
    verdict = plain(verdict_section(data))
    reading = plain(reading_paragraph(data))
    said = re.search(r"By accuracy, (\w+) has the lowest mean SMAPE \(([\d.]+)\)", verdict)
    read = re.search(r"The most accurate system by SMAPE is (\w+) \(([\d.]+) averaged", reading)
    assert said is not None and read is not None
    assert said.groups() == read.groups() == (best, f"{expected[best]:.2f}")
