"""Round 8 of the mutation sweep (tests/planted/sweep8_understanding.json): the numbers and
rules the understanding report (``understanding/report.py``) shows a reader, against
hand-worked tables -- Figure 2's csv choice (the mean over formats without csv), its
minimum of three features or axes, the position sets kept out of it, each point's label;
Table 4's intervals and bold best; the pooled Wilson interval; the interval, chance and
prompting tables' grouping and arithmetic.

Each expected number is written out by hand (or from statsmodels' Wilson interval and
two-proportion z test), never read from the product.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tsrate.html.charts import page_specs, spec_rows
from tsrate.suites.understanding import report as rep


def rows_of(html: str) -> list[dict]:
    return [row for spec in page_specs(html).values() for row in spec_rows(spec)]


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def cells(system, task, fmt, values, *, f1=None, n=30):
    """One score row per feature of ``values`` (feature -> accuracy; f1 the same unless
    given)."""
    return [
        {
            "system_id": system,
            "task": task,
            "format": fmt,
            "feature": feature,
            "accuracy": value,
            "f1": value if f1 is None else f1[feature],
            "n_prompts": n,
        }
        for feature, value in values.items()
    ]


# --------------------------------------------------------------------------- profile labels


def test_each_drawn_point_is_labelled_with_its_score_and_prompts():
    """A drawn point's tooltip: ``<system> · <axis>: <score to 3 places> (n = <prompts>)``;
    without counts no ``(n = ...)``; a missing score is not drawn."""
    table = pd.DataFrame({"a": [0.5, np.nan], "b": [0.25, 0.125]}, index=["s", "t"])
    counts = pd.DataFrame({"a": [20, 40], "b": [31, 22]}, index=["s", "t"])
    labels = {
        (r["series"], r["axis"]): r["label"]
        for r in rows_of(rep.profile_figure("p", table, counts))
    }
    assert labels == {
        ("s", "a"): "s · a: 0.500 (n = 20)",
        ("s", "b"): "s · b: 0.250 (n = 31)",
        ("t", "b"): "t · b: 0.125 (n = 22)",
    }
    labels = {(r["series"], r["axis"]): r["label"] for r in rows_of(rep.profile_figure("p", table))}
    assert labels == {
        ("s", "a"): "s · a: 0.500",
        ("s", "b"): "s · b: 0.250",
        ("t", "b"): "t · b: 0.125",
    }


# --------------------------------------------------------------------------- Figure 2


def test_figure2_uses_csv_where_present_and_else_the_mean_over_formats():
    """With csv among the formats only csv rows are plotted (json's are ignored); without
    csv, each cell is the mean over the formats present: trend (0.2 + 0.6) / 2 = 0.4,
    seasonality (0.5 + 0.75) / 2 = 0.625, noise (1.0 + 0.0) / 2 = 0.5."""
    csv = cells("s", "detection", "csv", {"trend": 0.25, "seasonality": 0.5, "noise": 0.75})
    json_ = cells("s", "detection", "json", {"trend": 0.2, "seasonality": 0.5, "noise": 1.0})
    tsv = cells("s", "detection", "tsv", {"trend": 0.6, "seasonality": 0.75, "noise": 0.0})
    html = "".join(rep.figure2(pd.DataFrame(csv + json_)))
    assert {r["axis"]: r["y"] for r in rows_of(html)} == {
        "trend": 0.25,
        "seasonality": 0.5,
        "noise": 0.75,
    }
    html = "".join(rep.figure2(pd.DataFrame(json_ + tsv)))
    got = {r["axis"]: r["y"] for r in rows_of(html)}
    assert got == pytest.approx({"trend": 0.4, "seasonality": 0.625, "noise": 0.5})
    # the prompts of a cell are summed over the formats: 30 + 30
    assert {r["label"] for r in rows_of(html)} >= {"s · trend: 0.400 (n = 60)"}


def test_figure2_needs_three_detection_features_and_three_numeric_axes():
    """Figure 2(a) is drawn from 3 features, not from 2; 2(b) from 3 task x feature axes,
    not from 2 -- whatever the number of systems (one here)."""
    two = cells("s", "detection", "csv", {"trend": 0.25, "noise": 0.75})
    assert rep.figure2(pd.DataFrame(two)) == []
    three = two + cells("s", "detection", "csv", {"seasonality": 0.5})
    assert len(rep.figure2(pd.DataFrame(three))) == 1
    numeric = cells("s", "retrieval", "csv", {"trend": 0.5}) + cells(
        "s", "arithmetic_min", "csv", {"trend": 0.25}
    )
    assert rep.figure2(pd.DataFrame(numeric)) == []
    numeric += cells("s", "arithmetic_max", "csv", {"trend": 0.75})
    (html,) = rep.figure2(pd.DataFrame(numeric))
    assert {r["axis"]: r["y"] for r in rows_of(html)} == {
        "trend value": 0.5,
        "trend min": 0.25,
        "trend max": 0.75,
    }


def test_figure2b_leaves_the_position_sets_out():
    """Retrieval and min / max of the position sets (outlier, brownian, ...) are the
    position-bias study, not Figure 2(b): only the feature datasets' axes are drawn."""
    numeric = []
    for task, value in (("retrieval", 0.5), ("arithmetic_min", 0.25), ("arithmetic_max", 0.75)):
        numeric += cells("s", task, "csv", {"trend": value, "outlier": 1.0, "brownian": 0.0})
    (html,) = rep.figure2(pd.DataFrame(numeric))
    assert {r["axis"]: r["y"] for r in rows_of(html)} == {
        "trend value": 0.5,
        "trend min": 0.25,
        "trend max": 0.75,
    }


# --------------------------------------------------------------------------- Table 4


def table4_rows(html: str, system: str) -> dict[str, list[str]]:
    block = html.split(f"<h3>{system}</h3>")[1].split("</table>")[0]
    return {
        fmt: re.findall(r"<td>(.*?)</td>", cells)
        for fmt, cells in re.findall(r"<tr><th>(\w+)</th>(.*?)</tr>", block)
        if fmt != "format"
    }


def test_table4_shows_an_interval_only_where_both_ends_exist_and_bolds_the_best():
    """One block per system, alphabetical; rows csv, json, tsv; columns in task order.
    A cell shows ``score [low, high]`` only with both ends present: csv's retrieval lacks
    its low end, csv's classification its high end, matching_intra has no interval at all
    and tsv none anywhere (the pivots drop that column and that row). The best format of
    each column is bold; tsv has no matching_intra score (an empty cell)."""
    nan = np.nan
    rows = [
        # format, task, score, low, high
        ("csv", "detection", 0.8, 0.7, 0.9),
        ("json", "detection", 0.6, 0.5, 0.7),
        ("tsv", "detection", 0.3, nan, nan),
        ("csv", "classification", 0.7, 0.6, nan),
        ("json", "classification", 0.1, 0.0, 0.2),
        ("tsv", "classification", 0.15, nan, nan),
        ("csv", "retrieval", 0.5, nan, 0.6),
        ("json", "retrieval", 0.4, 0.3, 0.5),
        ("tsv", "retrieval", 0.45, nan, nan),
        ("csv", "matching_intra", 0.9, nan, nan),
        ("json", "matching_intra", 0.2, nan, nan),
    ]
    frame = pd.DataFrame(
        [("zeta", "csv", "detection", 0.1, 0.0, 0.2)] + [("alpha", *r) for r in rows],
        columns=["system_id", "format", "task", "score", "score_ci_low", "score_ci_high"],
    )
    html = rep.format_table_html(frame)
    assert html.index("<h3>alpha</h3>") < html.index("<h3>zeta</h3>")
    assert table4_rows(html, "alpha") == {
        "csv": [
            "<b>0.80</b> <small>[0.70, 0.90]</small>",
            "<b>0.70</b>",
            "<b>0.50</b>",
            "<b>0.90</b>",
        ],
        "json": [
            "0.60 <small>[0.50, 0.70]</small>",
            "0.10 <small>[0.00, 0.20]</small>",
            "0.40 <small>[0.30, 0.50]</small>",
            "0.20",
        ],
        "tsv": ["0.30", "0.15", "0.45", ""],
    }
    assert table4_rows(html, "zeta") == {"csv": ["<b>0.10</b> <small>[0.00, 0.20]</small>"]}


# --------------------------------------------------------------------------- length curves


def curve(task, system, start, n, n_correct):
    return {
        "task": task,
        "system_id": system,
        "length_bin_start": start,
        "length_bin_end": start + 29,
        "n": n,
        "n_correct": n_correct,
        "accuracy": n_correct / n,
    }


def test_length_curves_one_chart_per_task_in_order_with_labelled_bars():
    """Charts in task order (arithmetic_max before retrieval), series in system order; a
    bin's bar is drawn only from 20 prompts; its label holds accuracy, the Wilson interval
    of its pooled prompts (statsmodels) and the prompts."""
    from statsmodels.stats.proportion import proportion_confint

    curves = pd.DataFrame(
        [
            curve("retrieval", "zeta", 30, 40, 10),
            curve("retrieval", "alpha", 30, 20, 15),
            curve("retrieval", "alpha", 60, 19, 19),
            curve("arithmetic_max", "alpha", 30, 50, 25),
        ]
    )
    charts = rep.length_curve_charts(curves)
    assert len(charts) == 2
    assert "arithmetic_max: accuracy by series length" in charts[0]
    assert "retrieval: accuracy by series length" in charts[1]
    rows = rows_of(charts[1])
    assert [(r["series"], r["category"], r["y"]) for r in rows] == [
        ("alpha", "30-59", 0.75),
        ("zeta", "30-59", 0.25),
    ]
    low, high = proportion_confint(15, 20, alpha=0.05, method="wilson")
    assert rows[0]["label"] == f"alpha · 30-59 days: 0.75 [{low:.2f}, {high:.2f}] (20 prompts)"


def test_the_length_table_needs_the_correct_counts():
    """An older mart without n_correct has no pooled interval: no table (not an error)."""
    curves = pd.DataFrame([curve("retrieval", "alpha", 30, 20, 15)]).drop(columns="n_correct")
    assert rep.length_curve_table_html(curves) == ""
    assert rep.length_curve_table_html(pd.DataFrame()) == ""


# --------------------------------------------------------------------------- confusion


def test_a_confusion_matrix_shows_zero_for_a_pair_never_seen():
    """Truth up answered up 3 times and down 1 time; truth down answered down 2 times and
    never up: that cell is 0. Matrices in system, task, feature order."""
    confusion = pd.DataFrame(
        [
            ("zeta", "detection", "trend", "yes", "yes", 1),
            ("alpha", "classification", "trend", "up", "up", 3),
            ("alpha", "classification", "trend", "up", "down", 1),
            ("alpha", "classification", "trend", "down", "down", 2),
        ],
        columns=["system_id", "task", "feature", "truth", "predicted", "n_prompts"],
    )
    html = rep.confusion_html(confusion)
    assert html.index("alpha · classification · trend") < html.index("zeta · detection · trend")
    block = html.split("alpha · classification · trend")[1].split("</table>")[0]
    # columns (answers) and rows (truths) sorted: down, up
    assert "<tr><th>down</th><td>2</td><td>0</td></tr>" in block
    assert "<tr><th>up</th><td>1</td><td>3</td></tr>" in block


# --------------------------------------------------------------------------- tables


def test_unusable_replies_are_summed_per_system():
    """alpha: 2 + 1 = 3 of 10 + 30 = 40 unusable; zeta: 0 of 5."""
    usable = pd.DataFrame(
        [("zeta", "detection", 5, 0), ("alpha", "detection", 10, 2), ("alpha", "retrieval", 30, 1)],
        columns=["system_id", "task", "n_prompts", "n_unusable"],
    )
    text = rep.usable_table_html(usable)
    assert "<li>alpha: 3 of 40 answers unusable</li><li>zeta: 0 of 5 answers unusable</li>" in text


def test_the_interval_table_averages_each_metric_and_sums_the_prompts():
    """Detection reads F1 (not accuracy): (0.5 + 0.7) / 2 = 0.60, interval ends
    (0.4 + 0.6) / 2 = 0.50 and (0.6 + 0.8) / 2 = 0.70, 10 + 30 = 40 prompts; retrieval
    reads accuracy (0.40 [0.30, 0.50]) and, having MAPE, a second row (10 + 20) / 2 = 15
    with ends (5 + 11) / 2 = 8 and (15 + 25) / 2 = 20; arithmetic_min has a MAPE in one
    cell of two: its row shows that cell's (30 [20, 40]). Rows in system, task order."""
    nan = np.nan
    columns = [
        "system_id", "task", "f1", "f1_ci_low", "f1_ci_high", "accuracy", "accuracy_ci_low",
        "accuracy_ci_high", "mape", "mape_ci_low", "mape_ci_high", "n_prompts",
    ]  # fmt: skip
    scores = pd.DataFrame(
        [
            ("zeta", "detection", 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, nan, nan, nan, 1),
            ("alpha", "retrieval", nan, nan, nan, 0.3, 0.2, 0.4, 10.0, 5.0, 15.0, 20),
            ("alpha", "retrieval", nan, nan, nan, 0.5, 0.4, 0.6, 20.0, 11.0, 25.0, 20),
            ("alpha", "detection", 0.5, 0.4, 0.6, 0.1, 0.0, 0.2, nan, nan, nan, 10),
            ("alpha", "detection", 0.7, 0.6, 0.8, 0.2, 0.1, 0.3, nan, nan, nan, 30),
            ("alpha", "arithmetic_min", nan, nan, nan, 0.2, 0.1, 0.3, 30.0, 20.0, 40.0, 5),
            ("alpha", "arithmetic_min", nan, nan, nan, 0.4, 0.3, 0.5, nan, nan, nan, 5),
        ],
        columns=columns,
    )
    rows = re.findall(r"<tr>(<td>.*?)</tr>", rep.interval_table_html(scores))
    assert rows == [
        "<td>alpha</td><td>arithmetic_min</td><td>accuracy</td><td>0.30</td><td>[0.20, 0.40]</td>"
        "<td>10</td>",
        "<td>alpha</td><td>arithmetic_min</td><td>mape (%)</td><td>30.00</td><td>[20.00, 40.00]</td>"
        "<td>10</td>",
        "<td>alpha</td><td>detection</td><td>f1</td><td>0.60</td><td>[0.50, 0.70]</td><td>40</td>",
        "<td>alpha</td><td>retrieval</td><td>accuracy</td><td>0.40</td><td>[0.30, 0.50]</td><td>40</td>",
        "<td>alpha</td><td>retrieval</td><td>mape (%)</td><td>15.00</td><td>[8.00, 20.00]</td><td>40</td>",
        "<td>zeta</td><td>detection</td><td>f1</td><td>1.00</td><td>[1.00, 1.00]</td><td>1</td>",
    ]


def test_rated_scores_print_an_undefined_interval_and_missing_rating_as_such():
    rated = pd.DataFrame(
        [
            ("mae", "trend", "alpha", 0.123456, 0.1, 0.45678, 2.0, 0.875),
            ("mae", "trend", "zeta", 0.5, np.nan, np.nan, np.nan, np.nan),
        ],
        columns=[
            "metric", "feature", "system_id", "raw_score", "ci_low", "ci_high", "rating",
            "share_at_rating",
        ],
    )  # fmt: skip
    rows = re.findall(r"<tr>(<td>.*?)</tr>", rep.rated_scores_html(rated))
    assert rows == [
        "<td>mae</td><td>trend</td><td>alpha</td><td>0.123</td><td>[0.1, 0.457]</td>"
        "<td>2</td><td>0.87</td>",  # 0.875 rounded down, as the core prints shares
        "<td>mae</td><td>trend</td><td>zeta</td><td>0.5</td><td>(undefined)</td><td></td><td></td>",
    ]


def test_position_bias_verdicts():
    """Too small to judge comes first (even when flagged), then biased, else no evidence."""
    columns = [
        "system_id", "dataset", "task", "quadrant", "n_prompts", "accuracy_pct",
        "accuracy_ci_low_pct", "accuracy_ci_high_pct", "p_holm", "min_prompts_to_judge",
        "judgeable", "position_bias",
    ]  # fmt: skip
    bias = pd.DataFrame(
        [
            ("s", "outlier", "retrieval", 1, 5, 40.0, 10.0, 70.0, 0.01, 12, False, True),
            ("s", "outlier", "retrieval", 2, 30, 20.0, 10.0, 35.0, 0.001, 12, True, True),
            ("s", "outlier", "retrieval", 3, 30, 50.0, 30.0, 70.0, 0.5, 12, True, False),
        ],
        columns=columns,
    )
    verdicts = re.findall(r"<td>([^<]*(?:<b>biased</b>)?)</td></tr>", rep.position_bias_html(bias))
    assert verdicts == ["too small to judge (5 &lt; 12)", "<b>biased</b>", "no evidence"]


def test_label_prompting_names_chain_of_thought_rows():
    frame = pd.DataFrame({"prompting": ["zero_shot", "cot"], "system_id": ["s", "s"], "x": [1, 2]})
    out = rep.label_prompting(frame)
    assert list(out.columns) == ["system_id", "x"]
    assert list(out["system_id"]) == ["s", "s · cot"]


def prompting_cell(prompting, system, task, f1, accuracy, unparsed, n):
    return {
        "prompting": prompting,
        "system_id": system,
        "task": task,
        "f1": f1,
        "accuracy": accuracy,
        "n_unparsed": unparsed,
        "n_prompts": n,
    }


def test_the_prompting_table_compares_the_two_styles_per_system_and_task():
    """alpha detection (F1): zero-shot mean (0.2 + 0.3 + 1.0) / 3 = 0.50 (the mean, not the
    median 0.3), cot 0.90, difference +0.40, unusable 1 + 2 + 0 = 3 of 10 + 20 + 10 = 40
    against 4 of 15; alpha retrieval (accuracy): 0.80 against 0.50, -0.30; zeta was asked
    zero-shot only: no row. Rows in system, task order (retrieval comes first here)."""
    scores = pd.DataFrame(
        [
            prompting_cell("zero_shot", "zeta", "detection", 0.1, 0.1, 0, 5),
            prompting_cell("zero_shot", "alpha", "retrieval", 0.0, 0.8, 0, 10),
            prompting_cell("cot", "alpha", "retrieval", 0.0, 0.5, 5, 10),
            prompting_cell("zero_shot", "alpha", "detection", 0.2, 0.0, 1, 10),
            prompting_cell("zero_shot", "alpha", "detection", 0.3, 0.0, 2, 20),
            prompting_cell("zero_shot", "alpha", "detection", 1.0, 0.0, 0, 10),
            prompting_cell("cot", "alpha", "detection", 0.9, 0.0, 4, 15),
        ]
    )
    rows = re.findall(r"<tr>(<td>.*?)</tr>", rep.prompting_table_html(scores))
    assert rows == [
        "<td>alpha</td><td>detection</td><td>f1</td><td>0.50</td><td>0.90</td><td>+0.40</td>"
        "<td>3 / 40</td><td>4 / 15</td>",
        "<td>alpha</td><td>retrieval</td><td>accuracy</td><td>0.80</td><td>0.50</td><td>-0.30</td>"
        "<td>0 / 10</td><td>5 / 10</td>",
    ]
    assert rep.prompting_table_html(scores[scores["prompting"] == "zero_shot"]) == ""
    assert rep.prompting_table_html(scores.drop(columns="prompting")) == ""


def test_a_chain_of_thought_system_is_held_against_the_zero_shot_chance_level():
    """und_random answered zero-shot only (12 of 40 on matching); the system's
    chain-of-thought answers (30 of 40; an unscored cell dropped) are compared with it:
    statsmodels' two-proportion z test and Wilson interval."""
    from statsmodels.stats.proportion import proportion_confint, proportions_ztest

    def row(prompting, system, n, correct):
        return {
            "prompting": prompting,
            "system_id": system,
            "task": "matching_intra",
            "n_prompts": n,
            "accuracy": np.nan if correct is None else correct / n,
        }

    scores = pd.DataFrame(
        [
            row("zero_shot", "und_random", 40, 12),
            row("cot", "gemma", 30, 21),
            row("cot", "gemma", 10, 9),
            row("cot", "gemma", 7, None),
        ]
    )
    (got,) = rep.chance_table(scores).itertuples(index=False)
    _, p = proportions_ztest([30, 12], [40, 40])
    low, high = proportion_confint(30, 40, alpha=0.05, method="wilson")
    assert (got.prompting, got.n_prompts, got.chance_n) == ("cot", 40, 40)
    assert got.accuracy == pytest.approx(0.75) and got.chance_accuracy == pytest.approx(0.3)
    assert got.p_value == pytest.approx(p) and (got.ci_low, got.ci_high) == pytest.approx(
        (low, high)
    )
    assert got.verdict == "above chance"


def test_no_scores_at_all_give_no_chance_section():
    """Before the marts exist the report reads an empty frame (no columns at all)."""
    assert rep.chance_table(pd.DataFrame()).empty
    assert rep.chance_table_html(pd.DataFrame()) == ""


def test_a_p_value_of_exactly_alpha_is_not_a_verdict(monkeypatch):
    """p < 0.05 strictly: the test's p stubbed to exactly 0.05 gives no verdict, one float
    below gives 'above chance' (20 of 40 against 10 of 40)."""
    scores = pd.DataFrame(
        [
            {"prompting": "zero_shot", "system_id": s, "task": "retrieval", "n_prompts": 40,
             "accuracy": k / 40}
            for s, k in (("und_random", 10), ("gemma", 20))
        ]
    )  # fmt: skip
    for p, verdict in (
        (0.05, "not distinguishable from chance"),
        (np.nextafter(0.05, 0), "above chance"),
    ):
        monkeypatch.setattr(rep.intervals, "two_proportion_p", lambda *args, v=p: v)
        assert rep.chance_table(scores)["verdict"].tolist() == [verdict]


def test_the_chance_section_marks_only_chain_of_thought_rows():
    """The system cell is ``gemma`` for zero-shot answers and ``gemma · cot`` for
    chain-of-thought ones (both held against und_random's zero-shot 10 of 40)."""
    scores = pd.DataFrame(
        [
            {"prompting": pr, "system_id": s, "task": "retrieval", "n_prompts": 40,
             "accuracy": k / 40}
            for pr, s, k in (("zero_shot", "und_random", 10), ("zero_shot", "gemma", 30),
                             ("cot", "gemma", 11))
        ]
    )  # fmt: skip
    systems = re.findall(r"<tr><td>([^<]*)</td><td>retrieval</td>", rep.chance_table_html(scores))
    assert systems == ["gemma · cot", "gemma"]


def test_label_prompting_leaves_a_frame_without_prompting_alone():
    frame = pd.DataFrame({"system_id": ["s"], "x": [1]})
    pd.testing.assert_frame_equal(rep.label_prompting(frame), frame)


def test_the_report_opens_the_warehouse_read_only(tmp_path):
    """The report only reads: a warehouse that does not exist is an error, never created."""
    from tsrate import TsrateError

    missing = tmp_path / "none.duckdb"
    with pytest.raises(TsrateError, match="no warehouse"):
        rep.write_report(missing, tmp_path / "report.html")
    assert not missing.exists()


def test_the_report_of_an_empty_warehouse_says_there_is_nothing_yet(tmp_path):
    """Before any suite run the marts do not exist: every read gives an empty frame, the
    report names no suite run and shows no ratings."""
    import duckdb

    warehouse = tmp_path / "empty.duckdb"
    duckdb.connect(str(warehouse)).close()
    text = rep.write_report(warehouse, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Suite run: none." in text and "No scores yet" in text
    assert "give the published rating (1 = firm).</p><p>none</p>" in text
