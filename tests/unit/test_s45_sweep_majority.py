"""The understanding suite's answer shares by design and the report's most-frequent-answer
verdict at their edges (mutation sweep: tests/planted/s45_sweep.json).

The classification shares are counted here from the generators' kinds (each drawn
uniformly) and the classes' definitions; the most frequent answer's share is worked out by
hand from the design (4 of 5 trend kinds have a trend, 3 of 5 volatility kinds are
volatile), its test with statsmodels."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportions_ztest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding import report_prompting, tasks


def test_classification_shares_are_the_kinds_counted_by_class():
    """Per dataset, the share of each class among the kinds that are asked: trend up/down
    2 kinds each of 4; 4 seasonality kinds, 6 anomaly kinds, 6 statistical properties and 4
    cross-correlations one each; structural breaks 7 regime shifts of 12. Every dataset's
    shares sum to 1."""
    shares = tasks.design_answer_shares()
    asked = {name: [k for k in g.KINDS[name] if k != "none"] for name in g.KINDS}
    assert shares[("classification", "trend")] == {"up": 2 / 4, "down": 2 / 4}
    for name in ("seasonality", "anomalies", "statistical_properties", "cross_correlation"):
        expected = {kind: 1 / len(asked[name]) for kind in asked[name]}
        assert shares[("classification", name)] == pytest.approx(expected), name
    breaks = shares[("classification", "structural_breaks")]
    assert breaks == pytest.approx({"regime_shift": 7 / 12, "parameter_shift": 5 / 12})
    for key, share in shares.items():
        assert sum(share.values()) == pytest.approx(1.0), key


def cell(system, task, feature, n, correct):
    return {
        "prompting": "zero_shot", "system_id": system, "task": task, "feature": feature,
        "format": "csv", "n_prompts": n, "n_unparsed": 0, "accuracy": correct / n,
    }  # fmt: skip


#: 70 of 100 detection questions right (45 of 60 trend, 25 of 40 volatility) against
#: und_random's 50; 30 of 40 matching questions against 10
SCORES = pd.DataFrame(
    [
        cell("gemma", "detection", "trend", 60, 45),
        cell("gemma", "detection", "volatility", 40, 25),
        cell("und_random", "detection", "trend", 60, 30),
        cell("und_random", "detection", "volatility", 40, 20),
        cell("gemma", "matching_intra", "trend", 40, 30),
        cell("und_random", "matching_intra", "trend", 40, 10),
    ]
)


def confusion(columns=None) -> pd.DataFrame:
    """gemma's and und_random's questions by true answer: trend 48 yes, 12 no; volatility
    24 yes, 16 no (predictions left out: only the truths count)."""
    rows = [
        {"prompting": "zero_shot", "system_id": system, "task": "detection",
         "feature": feature, "truth": truth, "n_prompts": n}
        for system in ("gemma", "und_random")
        for feature, truth, n in (("trend", "yes", 48), ("trend", "no", 12),
                                  ("volatility", "yes", 24), ("volatility", "no", 16))
    ]  # fmt: skip
    frame = pd.DataFrame(rows)
    return frame if columns is None else frame[columns]


#: answering "yes" to both features (their most frequent answer) is right on 72 of 100
MAJORITY = (48 + 24) / 100


def detection_row(table: pd.DataFrame):
    return table.set_index("task").loc["detection"]


def test_the_majority_needs_only_the_columns_it_reads():
    """A confusion frame with exactly the six columns the rule reads is enough: the share
    of 0.72 and the one-sample test of 70 of 100 against it (not beaten: 0.70 < 0.72)."""
    needed = ["prompting", "system_id", "task", "feature", "truth", "n_prompts"]
    row = detection_row(report_prompting.chance_table(SCORES, None, confusion(needed)))
    assert row["majority_accuracy"] == pytest.approx(MAJORITY)
    _, p = proportions_ztest(70, 100, value=MAJORITY, prop_var=MAJORITY)
    assert row["majority_p_value"] == pytest.approx(p)
    assert row["p_value"] < 0.05 and row["verdict"] == report_prompting.NOT_ABOVE_MAJORITY


@pytest.mark.parametrize("dropped", [None, "feature", "n_prompts"])
def test_without_a_usable_confusion_frame_the_verdict_is_against_und_random_alone(dropped):
    """No confusion frame, or one without a column the rule reads (a snapshot published
    before it): no majority share, no test, the verdict against und_random stands."""
    frame = None if dropped is None else confusion().drop(columns=dropped)
    row = detection_row(report_prompting.chance_table(SCORES, None, frame))
    assert pd.isna(row["majority_accuracy"]) and pd.isna(row["majority_p_value"])
    assert row["verdict"] == "above chance"


def test_the_html_shows_a_dash_where_a_task_has_no_most_frequent_answer():
    """Matching has no most frequent answer (balanced by construction): its cell is a dash;
    detection's is the share, 2 decimals."""
    page = report_prompting.chance_table_html(SCORES, None, confusion())
    rows = {
        task: page.split(f"<td>{task}</td>", 1)[1].split("</tr>", 1)[0]
        for task in ("detection", "matching_intra")
    }
    assert f"<td>{MAJORITY:.2f}</td>" in rows["detection"], rows
    assert "<td>–</td>" in rows["matching_intra"] and "nan" not in page, rows
