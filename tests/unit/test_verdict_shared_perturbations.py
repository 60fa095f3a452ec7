"""The core report's verdict compares systems on the perturbations they share.

An import may leave out whole perturbations: a system with forecasts for P0 only had its
mean SMAPE over clean inputs beside the others' over P0-P3, and won the verdict. Here the
expected means are worked out by plain loops over the rows each test builds, on the
perturbations every system has; the P0-only system is named, with its own rating counts.
"""

from __future__ import annotations

import pandas as pd

from tests.support.report_text import ROBUSTNESS, plain, rating_rows, report_data, uniform
from tests.support.sweep9_report_text import nums
from tsrate.robustness.report import coverage
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.sections import verdict_section


def partial_run(keep: tuple[str, ...]) -> pd.DataFrame:
    """zeta SMAPE 30 everywhere; alpha 20 on P0 and 40 on P1-P3 (35 over all); mid 25
    everywhere but rated on ``keep`` only (its other rows dropped, as a partial import)."""
    zeta = uniform(2, smape=30.0, mase=3.0)
    alpha = uniform(1, smape=20.0, mase=2.0)
    alpha["smape"] = [20.0, 40.0, 40.0, 40.0]
    alpha["mase"] = [2.0, 4.0, 4.0, 4.0]
    mid = uniform(3, smape=25.0, mase=2.5)
    rows = rating_rows({"zeta": zeta, "alpha": alpha, "mid": mid})
    partial = (rows["system_id"] == "mid") & ~rows["perturbation_id"].isin(keep)
    return rows[~partial].reset_index(drop=True)


def by_hand(rows: pd.DataFrame, metric: str, perturbations: list[str]) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for row in rows.itertuples():
        if row.metric == metric and row.perturbation_id in perturbations:
            sums.setdefault(row.system_id, []).append(row.raw_score)
    return {s: sum(v) / len(v) for s, v in sums.items()}


def test_a_p0_only_system_does_not_win_on_clean_inputs_alone():
    rows = partial_run(("P0",))
    means = by_hand(rows, "smape", ["P0"])
    assert means == {"zeta": 30.0, "alpha": 20.0, "mid": 25.0}
    # over each system's own perturbations mid (25) would beat alpha (35) and zeta (30)
    assert by_hand(rows, "smape", ["P0", "P1", "P2", "P3"])["alpha"] == 35.0
    html = verdict_section(report_data(rows))
    text = plain(html)
    assert (
        "Accuracy is compared on the perturbation every system is rated on, P0, since mid "
        "was rated on P0 only." in text
    )
    assert "By accuracy, alpha has the lowest mean SMAPE (20.00)" in text
    assert "zeta has the highest (30.00)" in text or "zeta the highest (30.00)" in text
    assert "By MASE (on P0), alpha has the lowest mean too (2.00)." in text
    printed = [n for n in nums(html) if n["column"] == "raw_score"]
    assert {(n["where"]["system_id"], n["value"]) for n in printed} == {
        ("alpha", means["alpha"]),
        ("zeta", means["zeta"]),
        ("alpha", by_hand(rows, "mase", ["P0"])["alpha"]),
    }
    for n in printed:
        assert n["mart"] == "marts.ratings" and n["agg"] == "avg"
        assert n["where"]["perturbation_id"] == ["P0"]


def test_the_partial_system_is_named_with_the_ratings_it_has():
    rows = partial_run(("P0",))
    mine = rows[(rows["system_id"] == "mid") & rows["metric"].isin(ROBUSTNESS)]
    n, k = len(mine), mine["metric"].nunique()
    assert (n, k) == (2, 2)  # WRS industry and company on P0: APE and PIE need P1-P3
    text = plain(verdict_section(report_data(rows)))
    assert "mid the least" in text  # its mean rating 3 over its two ratings
    assert (
        f"mid was rated on P0 only: its robustness rating rests on {n} ratings over {k} of "
        "the 6 robustness metrics" in text
    )
    assert "over 6 robustness metrics and the perturbations" not in text


def test_the_shared_set_is_every_perturbation_all_systems_have():
    rows = partial_run(("P0", "P1"))
    means = by_hand(rows, "smape", ["P0", "P1"])
    assert means == {"zeta": 30.0, "alpha": 30.0, "mid": 25.0}
    text = plain(verdict_section(report_data(rows)))
    assert "Accuracy is compared on the perturbations every system is rated on, P0 P1" in text
    assert "mid was rated on P0 and P1" in text
    assert "By accuracy, mid has the lowest mean SMAPE (25.00)" in text
    mine = rows[(rows["system_id"] == "mid") & rows["metric"].isin(ROBUSTNESS)]
    n, k = len(mine), mine["metric"].nunique()
    assert (n, k) == (8, 6)  # WRS on P0 and P1, APE and PIE on P1
    assert f"rests on {n} ratings over {k} of the 6 robustness metrics" in text


def test_systems_rated_alike_keep_the_summary_means():
    rows = partial_run(("P0", "P1", "P2", "P3"))
    html = verdict_section(report_data(rows))
    assert "Accuracy is compared" not in plain(html)
    assert "By accuracy, alpha" not in plain(html)  # alpha's 35 is the highest now
    assert {n["mart"] for n in nums(html) if n["column"] == "avg_raw_score"} == {
        "marts.system_summary"
    }


def test_with_no_perturbation_shared_by_all_the_largest_group_is_compared():
    per_system = {"a": ["P0", "P1"], "b": ["P1", "P2"], "c": ["P3"]}
    assert coverage.shared_perturbations(per_system) == (["a", "b"], ["P1"])
    assert coverage.partial_systems(per_system) == per_system
    full = {"a": ["P0", "P1"], "b": ["P0", "P1"]}
    assert coverage.shared_perturbations(full) == (["a", "b"], ["P0", "P1"])
    assert coverage.partial_systems(full) == {}


def test_the_reading_names_the_most_accurate_on_the_shared_perturbations_too():
    rows = partial_run(("P0",))
    means = by_hand(rows, "smape", ["P0"])
    best = min(means, key=means.get)
    html = reading_paragraph(report_data(rows))
    text = plain(html)
    assert (
        f"The most accurate system by SMAPE is {best} ({means[best]:.2f} averaged over P0, "
        "the perturbation every compared system is rated on)." in text
    )
    assert "averaged over the robustness metrics and perturbations each is rated on" in text
    assert "mid was rated on P0 only: its robustness rating rests on 2 ratings" in text
