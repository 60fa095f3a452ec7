"""The report's paper sections: the study's differences from the paper's, and the comparison."""

from __future__ import annotations

import re

import pandas as pd

from tsrate.robustness.presets import PRESETS
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.paper import (
    paper_comparison_section,
    paper_study_section,
    study_differences,
)

PAPER = PRESETS["paper"]
PAPER_STUDY = {
    "tickers": list(PAPER["study_tickers"]),
    "start": PAPER["study_start"],
    "end": PAPER["study_end"],
    "context_length": 80,
    "horizon": 20,
    "perturbations": list(PAPER["perturbations"]),
    "systems": [
        "arima", "random", "biased", "chronos", "moment", "gemini_numeric",
        "gemini_numeric_image", "phi3_numeric", "phi3_numeric_image",
        "vit_num_spec_precovid", "vit_num_spec_covid",
    ],
}  # fmt: skip
DEFAULT_STUDY = {
    "tickers": ["AAPL", "MSFT", "PFE", "MRK", "JPM", "BAC"],
    "start": "2021-12-29",
    "end": "2022-12-28",
    "context_length": 80,
    "horizon": 20,
    "perturbations": ["P0", "P1", "P2", "P3"],
    "systems": ["naive", "seasonal_naive", "arima", "random", "biased", "fracast"],
}


def _data(study: dict, comparison: pd.DataFrame | None = None) -> ReportData:
    empty = pd.DataFrame()
    return ReportData(
        "r1", "2026-01-01T00:00:00", study, *([empty] * 10),
        paper_comparison=comparison if comparison is not None else empty,
    )  # fmt: skip


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_papers_own_study_differs_in_nothing():
    assert study_differences(PAPER_STUDY) == []
    assert "has the paper's tickers, period" in _text(paper_study_section(_data(PAPER_STUDY)))


def test_the_default_study_names_each_difference():
    lines = study_differences(DEFAULT_STUDY)
    assert [line.split(":")[0] for line in lines] == [
        "Tickers",
        "Period",
        "Systems",
        "Perturbations",
    ]
    text = _text(paper_study_section(_data(DEFAULT_STUDY)))
    assert (
        "AAPL, MSFT, PFE, MRK, JPM, BAC here; the paper's are META, GOOG, PFE, MRK, WFC, C" in text
    )
    assert "2021-12-29 to 2022-12-28 here; the paper's is 2023-03-28 to 2024-04-22" in text
    assert "lacks chronos, moment, gemini_numeric" in text
    assert "adds tsrate's own naive, seasonal_naive, fracast" in text
    assert "not a reproduction" in text and "tsrate run --preset paper" in text


def test_the_comparison_prints_each_row_traceably():
    row = {
        "run_id": "r1", "paper_table": "5", "metric": "wrs_industry", "perturbation_id": "P0",
        "paper_label": "Inter-industry statistical bias (WRSI$\\downarrow$)",
        "paper_symbol": "S_b", "system_id": "biased", "paper_value": 6.9, "paper_printed": "6.9",
        "paper_rating": 3, "tsrate_value": 7.2, "difference": 0.3, "tsrate_rating": 3,
        "same_study": False, "paper_note": "unreachable with weights 1/0.8/0.6",
    }  # fmt: skip
    html = paper_comparison_section(_data(DEFAULT_STUDY, pd.DataFrame([row])))
    text = _text(html)
    assert "not the paper's" in text and "unreachable with weights 1/0.8/0.6" in text
    assert 'data-mart="marts.paper_comparison" data-column="difference"' in html
    assert "biased (S_b)" in text and " 6.9 " in text and " 7.20 " in text
    empty = _text(paper_comparison_section(_data(DEFAULT_STUDY)))
    assert "nothing to set beside" in empty


def test_the_study_paragraph_counts_and_names_every_rated_system():
    """A study with imports: the paragraph said 'rates 6 systems' and 'adds tsrate's own
    naive, seasonal_naive, fracast' beside a verdict and summary of 9 (three imports)."""
    imports = ["drift_csv", "drift_q", "my_model"]
    ratings = pd.DataFrame({"system_id": [*DEFAULT_STUDY["systems"], *imports] * 2})
    catalog = pd.DataFrame(
        {
            "system_id": [*DEFAULT_STUDY["systems"], *imports],
            "origin": ["seed"] * 6 + ["imported"] * 3,
        }
    )
    data = _data(DEFAULT_STUDY)
    data.ratings, data.systems = ratings, catalog
    text = _text(paper_study_section(data))
    assert "This report rates 9 forecasting systems" in text
    assert (
        "it adds tsrate's own naive, seasonal_naive, fracast and the imported drift_csv, "
        "drift_q, my_model." in text
    )
