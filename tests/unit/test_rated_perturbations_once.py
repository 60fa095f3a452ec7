"""Which perturbations each system is rated on is read from the ratings once per report (the
overview, Table 2, the radars, the verdict and the reading all ask), and read again when the
report's ratings frame is replaced. Calls are counted with a profiler hook on the real code;
expected perturbation sets come from plain loops over the rows the test builds."""

from __future__ import annotations

import sys
import threading

import pandas as pd

from tests.support.report_text import ACCURACY, rating_rows, report_data, uniform
from tsrate.robustness.report import coverage
from tsrate.robustness.report.render import build_report


def partial_rows() -> pd.DataFrame:
    """zeta and alpha on P0-P3; mid on P0 only."""
    rows = rating_rows({"zeta": uniform(2), "alpha": uniform(1), "mid": uniform(3)})
    rows = rows[(rows["system_id"] != "mid") | (rows["perturbation_id"] == "P0")]
    return rows.assign(rank=rows.groupby(["metric", "perturbation_id"])["rating"].rank())


def by_hand(rows: pd.DataFrame, metrics) -> dict[str, list[str]]:
    seen: dict[str, set[str]] = {}
    for row in rows.itertuples():
        if row.metric in metrics and pd.notna(row.raw_score):
            seen.setdefault(row.system_id, set()).add(row.perturbation_id)
    return {s: sorted(p) for s, p in sorted(seen.items())}


def reads_during(build) -> int:
    """How many times the ratings are read for coverage while ``build()`` runs."""
    code, calls = coverage._read_rated.__code__, []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            calls.append(1)

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        build()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return len(calls)


def test_a_report_reads_the_coverage_once():
    data = report_data(partial_rows())
    html = []
    assert reads_during(lambda: html.append(build_report(data).html)) == 1
    # the coverage was asked for by several sections: the marks and the shared means show
    assert html[0].count("P0 only") >= 3
    assert "compared on the perturbation every system is rated on, P0" in html[0]


def test_the_held_coverage_answers_every_metric_set_as_the_rows_say():
    rows = partial_rows()
    data = report_data(rows)
    for metrics in (["smape"], ["ape_company", "wrs_industry"], list(ACCURACY), ["none"]):
        assert coverage.rated_perturbations(data, metrics) == by_hand(rows, metrics)


def test_new_ratings_on_the_same_report_are_read_again():
    rows = partial_rows()
    data = report_data(rows)
    assert coverage.rated_perturbations(data, ["smape"])["mid"] == ["P0"]
    full = rating_rows({"zeta": uniform(2), "alpha": uniform(1), "mid": uniform(3)})
    data.ratings = full
    assert coverage.rated_perturbations(data, ["smape"]) == by_hand(full, ["smape"])
    assert coverage.partial_systems(coverage.rated_perturbations(data, ["smape"])) == {}
    rows.loc[rows["system_id"] == "zeta", "raw_score"] = float("nan")
    assert "zeta" not in coverage.rated_perturbations(report_data(rows), ["smape"])
