"""What the reports show a reader, against hand-worked cases: the minimum number of prompts a
chart cell needs, the radar's rank directions and the column it plots, the confounder table,
the reading's "hurts most" sentences, the overview's arrows, the paper outcome's rows, the
paper comparison's rating columns, the understanding report's bold best and F1 profile, and
the interpretability heatmaps and trend rule (round 4 of the planted errors,
tests/planted/round4_reports.json)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tests.support.report_frames import RUN, two_systems
from tsrate.html.charts import RANK_FLOOR, enough, page_specs, spec_rows
from tsrate.robustness.report.comparisons import confounder_section
from tsrate.robustness.report.data import _default_outcome
from tsrate.robustness.report.paper import HEADER, _row_cells
from tsrate.robustness.report.radars import radar_section
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.sections import overview_section
from tsrate.suites.interpretability.report import heatmap_spec, trends_section
from tsrate.suites.understanding.report import figure2, format_table_html, profile_figure


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _rows(html: str) -> list[dict]:
    return [row for spec in page_specs(html).values() for row in spec_rows(spec)]


# ----------------------------------------------------------------------------- minimum n


def test_a_cell_of_exactly_the_minimum_is_drawn_and_one_below_is_not():
    """Convention (charts module, docs/bi.md): a chart is never drawn from a cell below its
    stated minimum; a cell AT the minimum is drawn. The understanding report's minimum is 20
    prompts."""
    assert enough(20, 20) and enough(21, 20)
    assert not enough(19, 20) and not enough(None, 20) and not enough(float("nan"), 20)
    table = pd.DataFrame({"a": [0.5, 0.6], "b": [0.7, 0.8], "c": [0.9, 0.1]}, index=["s", "t"])
    counts = pd.DataFrame({"a": [20, 19], "b": [10, 20], "c": [25, 0]}, index=["s", "t"])
    html = profile_figure("profile", table, counts)
    drawn = {(row["series"], row["axis"]) for row in _rows(html)}
    assert drawn == {("s", "a"), ("t", "b"), ("s", "c")}
    caption = _plain(html)
    assert "fewer than 20 prompts" in caption
    assert "t · a (n = 19)" in caption and "s · b (n = 10)" in caption


# ----------------------------------------------------------------------------- radars


def test_the_best_system_sits_at_the_top_of_every_radar_axis():
    """In the builders' fixture 'good' has the lower raw score on every lower-is-better metric
    (1 + penalty vs 3 + penalty) and the higher sign accuracy (90 vs 70): on every axis of
    every radar (rank scale, best = 1, worst = RANK_FLOOR) good is at 1 and bad at the floor."""
    rows = _rows(radar_section(two_systems(), {}))
    assert rows
    axes = {row["axis"] for row in rows}
    assert {"SMAPE", "MASE", "Sign accuracy %", "APE industry"} <= axes
    for row in rows:
        expected = 1.0 if row["series"] == "good" else RANK_FLOOR
        assert row["position"] == pytest.approx(expected), row


def test_each_radar_axis_takes_its_direction_from_the_ratings_mart():
    """The direction of an axis is the mart's ``higher_is_better`` for that metric, not a
    list of metric names: told that higher MASE is better (as it would be for a new
    higher-is-better metric), the radars put the system with the higher MASE (bad: 3 + penalty
    against 1 + penalty) at the top of the MASE axis and leave every other axis as it was."""
    data = two_systems()
    data.ratings.loc[data.ratings["metric"] == "mase", "higher_is_better"] = True
    rows = _rows(radar_section(data, {}))
    assert any(row["axis"] == "MASE" for row in rows)
    for row in rows:
        best = "bad" if row["axis"] == "MASE" else "good"
        expected = 1.0 if row["series"] == best else RANK_FLOOR
        assert row["position"] == pytest.approx(expected), row


def test_the_per_perturbation_radars_plot_the_raw_score():
    """Each per-perturbation radar point is ratings.raw_score of its cell: hand-worked from the
    fixture, SMAPE at P0 is 1 for good and 3 for bad, at P1 1 + 1 = 2 and 3 + 1 = 4, at P2
    1 + 5 = 6 and 3 + 5 = 8."""
    rows = _rows(radar_section(two_systems(), {}))
    smape = {
        (row["series"], eval_where(row)["perturbation_id"]): row["value"]
        for row in rows
        if row["axis"] == "SMAPE" and row.get("column") == "raw_score"
    }
    assert smape == {
        ("good", "P0"): 1.0,
        ("bad", "P0"): 3.0,
        ("good", "P1"): 2.0,
        ("bad", "P1"): 4.0,
        ("good", "P2"): 6.0,
        ("bad", "P2"): 8.0,
    }


def eval_where(row: dict) -> dict:
    return json.loads(row["where"])


# ----------------------------------------------------------------------------- sections


def test_the_confounder_table_puts_each_average_in_its_own_column():
    """The fixture's overall APE row: industry_avg 6, company_avg 2 (industry more biased)."""
    html = confounder_section(two_systems(), {})
    table = html[html.rindex("<table") :]
    row = re.search(r"<tr><td>APE \(price units\)</td>(.*?)</tr>", table).group(1)
    cells = [_plain(c).strip() for c in re.findall(r"<td>(.*?)</td>", row)]
    assert cells == ["6.00", "2.00", "industry"]


def test_the_reading_names_the_perturbation_that_raises_smape_most():
    """Mean SMAPE over systems: P0 (1 + 3) / 2 = 2, P1 (2 + 4) / 2 = 3, P2 (6 + 8) / 2 = 7: P2
    raises it most, from 2.00 to 7.00."""
    plain = _plain(reading_paragraph(two_systems()))
    assert "For accuracy, P2 raises the mean SMAPE over systems most: from 2.00" in plain
    assert "on clean inputs to 7.00" in plain


def test_the_hurts_most_sentence_averages_only_the_ape_rows():
    """The perturbation that hurts most has the largest mean APE (industry and company
    confounders): P1 (10, 10) -> 10 beats P2 (3, 3) -> 3, whatever PIE % says (P1 0, P2 100)."""
    rows = [
        (p, m, v)
        for p, ape, pie in (("P1", 10.0, 0.0), ("P2", 3.0, 100.0))
        for m, v in (("ape_industry", ape), ("ape_company", ape), ("pie_industry", pie))
    ]
    frame = pd.DataFrame(
        [
            dict(run_id=RUN, perturbation_id=p, metric=m, avg_raw_score=v, higher_is_better=False)
            for p, m, v in rows
        ]
    )
    plain = _plain(reading_paragraph(two_systems(perturbation_summary=frame)))
    assert "hurts most is P1" in plain
    assert "is 10.00 price units, against 3.00 for the mildest, P2" in plain


def test_the_overview_marks_which_way_each_accuracy_metric_is_better():
    """SMAPE and MASE: lower is better (↓); sign accuracy: higher is better (↑)."""
    html = overview_section(two_systems())
    headers = [_plain(h).strip() for h in re.findall(r"<th>(.*?)</th>", html)]
    assert "SMAPE (mean) ↓" in headers and "MASE (mean) ↓" in headers
    assert "Sign accuracy % (mean) ↑" in headers


def test_the_report_reads_the_papers_outcome_rows():
    """A mart with an outcome column is read at the paper's outcome (is_default_outcome)."""
    frame = pd.DataFrame(
        {
            "outcome": ["max_abs_residual", "relative_max_abs_residual", "max_abs_residual"],
            "is_default_outcome": [True, False, True],
            "raw_score": [1.0, 0.01, 2.0],
        }
    )
    kept = _default_outcome(frame)
    assert list(kept["outcome"]) == ["max_abs_residual"] * 2
    assert list(kept["raw_score"]) == [1.0, 2.0]


def test_the_paper_comparison_puts_each_rating_under_its_own_header():
    """A row whose paper rating (1) and tsrate rating (3) differ: each under its header."""
    row = SimpleNamespace(
        paper_table="5", paper_label="l", perturbation_id="P1", system_id="biased",
        paper_symbol="S_b", metric="wrs_industry", paper_printed="6.9", tsrate_value=7.2,
        difference=0.3, paper_rating=1, tsrate_rating=3, paper_note=None,
    )  # fmt: skip
    cells = dict(zip(HEADER, [_plain(c).strip() for c in _row_cells(row, RUN)], strict=True))
    assert cells["Paper rating"] == "1" and cells["tsrate rating"] == "3"
    assert cells["tsrate"] == "7.20" and cells["Difference"] == "0.3"


# ----------------------------------------------------------------------------- understanding


def test_table_4_bolds_the_best_format_of_each_task():
    """Scores are F1 / accuracy (higher is better): csv 0.8 beats json 0.5 on detection, json
    0.9 beats csv 0.4 on retrieval."""
    table = pd.DataFrame(
        {
            "system_id": ["s"] * 4,
            "format": ["csv", "json", "csv", "json"],
            "task": ["detection", "detection", "retrieval", "retrieval"],
            "score": [0.8, 0.5, 0.4, 0.9],
        }
    )
    html = format_table_html(table)
    assert re.findall(r"<b>(.*?)</b>", html) == ["0.80", "0.90"]


def test_the_feature_detection_profile_plots_f1():
    """Figure 2(a) plots each feature's detection F1 (not its accuracy), csv format."""
    scores = pd.DataFrame(
        {
            "system_id": ["s"] * 3,
            "format": ["csv"] * 3,
            "task": ["detection"] * 3,
            "feature": ["trend", "seasonality", "anomaly"],
            "f1": [0.2, 0.4, 0.6],
            "accuracy": [0.9, 0.8, 0.7],
            "n_prompts": [30, 30, 30],
        }
    )
    html = "".join(figure2(scores))
    assert {row["axis"]: row["y"] for row in _rows(html)} == {
        "trend": 0.2,
        "seasonality": 0.4,
        "anomaly": 0.6,
    }


# ----------------------------------------------------------------------------- interpretability


def _luminance(colour: str) -> float:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_a_heatmap_draws_larger_weights_darker():
    """The colour scale runs from 0 (lightest) to ``top`` (darkest)."""
    spec = heatmap_spec(np.array([[0.0, 0.5], [1.0, 0.25]]), "t")
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == [0, 1.0]
    low, high = scale["range"]
    assert _luminance(low) > _luminance(high)


def _correctness(temperatures: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "measure": "beta_auroc",
            "variant_id": [f"d9_T{t}" for t in temperatures],
            "model_id": "m",
            "mean_value": 0.7,
            "mean_chance": 0.5,
            "mean_margin": 0.2,
        }
    )


def test_a_trend_needs_three_points():
    """With fewer than 3 points on a sweep the section says it cannot show the trend."""
    two = _plain(trends_section(_correctness(["2", "2.75"])))
    assert "temperature T: 2 point(s)" in two and "cannot show" in two
    three = _plain(trends_section(_correctness(["2", "2.269", "2.75"])))
    assert "temperature T: 3 point(s)" not in three
    assert "temperature T" in three and "cannot show the paper's trend" in three  # r: 0 points
    assert three.count("cannot show") == 1
