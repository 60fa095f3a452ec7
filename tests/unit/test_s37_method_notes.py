"""The report states the paper it follows by its real title and how it reads the paper where
the paper is open or says two things (t-test, confidence levels, ties, matching, PIE's unit),
and it explains a sign accuracy near 0 % (a flat forecast) under the summary table, as it
explains Biased's near 100 %."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd

from tests.support.report_frames import RUN, two_systems
from tsrate.robustness.report.paper import paper_comparison_section, paper_study_section
from tsrate.robustness.report.reading import flat_forecasts, flat_sign_note, reading_paragraph
from tsrate.robustness.report.render import build_report

TITLE = (
    "Creating a Causally Grounded Rating Method for Assessing the Robustness of AI Models "
    "for Time-Series Forecasting"
)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&lt;", "<")


def _low_sign(data, system: str = "bad", value: float = 0.357):
    summary = data.system_summary.copy()
    mask = (summary["system_id"] == system) & (summary["metric"] == "sign_accuracy")
    summary.loc[mask, "avg_raw_score"] = value
    return dataclasses.replace(data, system_summary=summary)


def _traces(flat: dict[str, tuple[bool, bool]]) -> pd.DataFrame:
    """Forecast traces of two windows per system, each flat or moving as ``flat`` says."""
    rows = []
    for system, flags in flat.items():
        for window, is_flat in zip(("2022-06-01", "2022-07-01"), flags, strict=True):
            for step in (1, 2, 3):
                value = 100.0 if is_flat else 100.0 + step * 0.5
                rows.append(
                    dict(
                        system_id=system, ticker="AAA", window_end_date=window,
                        perturbation_id="P0", horizon_step=step, forecast=value,
                    )
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_header_and_the_study_section_name_the_paper_by_its_title():
    data = two_systems()
    report = build_report(data, generated_at="now")
    header = report.html.split('<section id="verdict"')[0]
    assert TITLE in _text(header)
    assert "foundation models for robustness (causal rating framework)" not in report.html
    assert TITLE in _text(paper_study_section(data))


def test_the_method_conventions_say_each_departure():
    text = _text(paper_study_section(two_systems()))
    assert "Method conventions" in text
    for said in (
        "two-sided Student t-test with pooled variance",
        "count as independent observations",
        "95 / 75 / 60 % with weights 1 / 0.8 / 0.6",
        "Algorithm 1 lists 95 / 70 / 60 %",
        "distinct raw scores are split",
        "no caliper",
        "exact stratification",
        "a one-arm stratum is matched to the stratum of nearest propensity, however far",
        "not a percentage",
        "79 for this study's context of 80",
    ):
        assert said in text, said


def test_the_mase_convention_counts_the_studys_own_context_changes():
    data = two_systems()
    short = dataclasses.replace(data, study={**data.study, "context_length": 30})
    assert "29 for this study's context of 30" in _text(paper_study_section(short))
    unknown = dataclasses.replace(data, study={**data.study, "context_length": None})
    assert "(context length − 1)" in _text(paper_study_section(unknown))


def test_the_comparison_reads_algorithm_1s_70_as_a_confidence_level():
    row = {
        "run_id": RUN, "paper_table": "5", "metric": "wrs_industry", "perturbation_id": "P0",
        "paper_label": "WRSI", "paper_symbol": "S_b", "system_id": "biased",
        "paper_value": 6.9, "paper_printed": "6.9", "paper_rating": 3, "tsrate_value": 7.2,
        "difference": 0.3, "tsrate_rating": 3, "same_study": False, "paper_note": "",
    }  # fmt: skip
    data = dataclasses.replace(two_systems(), paper_comparison=pd.DataFrame([row]))
    text = _text(paper_comparison_section(data))
    assert "Algorithm 1 is a confidence level with the same weights" in text
    assert "the 70 % of the paper's Algorithm 1, all but 5.6" not in text


def test_a_near_zero_sign_accuracy_is_explained_as_a_flat_forecast():
    data = _low_sign(two_systems())
    html = flat_sign_note(data)
    text = _text(html)
    assert "A sign accuracy near 0 % is a flat forecast, not a bug." in text
    assert "bad ( 0.357 %)" in text and "good" not in text
    assert 'data-mart="marts.system_summary"' in html and 'data-value="0.357"' in html
    assert "naive repeats" not in text and "plotted forecasts flat" not in text
    # the note sits in the reading section, right under the summary table
    assert "flat-sign-note" in reading_paragraph(data)


def test_the_note_says_the_plotted_forecasts_are_flat_only_when_they_are():
    data = _low_sign(_low_sign(two_systems()), "good", 4.9)
    data = dataclasses.replace(data, traces=_traces({"bad": (True, True), "good": (True, False)}))
    assert flat_forecasts(data.traces) == {"bad"}  # good moves in one of its two windows
    text = _text(flat_sign_note(data))
    assert "bad ( 0.357 %, its plotted forecasts flat)" in text
    assert "good ( 4.90 %)" in text


def test_naive_is_named_as_repeating_its_last_value():
    data = _low_sign(two_systems())
    summary = data.system_summary.replace({"system_id": {"bad": "naive"}})
    data = dataclasses.replace(data, system_summary=summary)
    assert "naive repeats the last context value" in _text(flat_sign_note(data))


def test_no_note_when_every_sign_accuracy_is_at_least_five_percent():
    assert flat_sign_note(two_systems()) == ""
    assert flat_sign_note(_low_sign(two_systems(), value=5.0)) == ""
    assert "flat-sign-note" not in reading_paragraph(two_systems())
