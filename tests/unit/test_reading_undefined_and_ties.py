"""The core report's reading paragraph with undefined means and ties.

A system whose robustness ratings are all null is not "the least robust" (it used to sort
last as NaN and leave the sentence with no name); a perturbation whose APE is undefined is
not "the perturbation that hurts most" (NaN also sorted last); perturbations tied for the
largest APE or SMAPE are all named, in perturbation order, whatever order the mart's rows
come in (it named one of them, by row position). Expected texts are written by hand from
the values set in each test.
"""

from __future__ import annotations

import math

from tests.support.report_text import plain, rating_rows, report_data, three_systems
from tsrate.robustness.report.reading import reading_paragraph


def _with_perturbation_means(ape: dict[str, float], smape: dict[str, float]):
    data = report_data(rating_rows(three_systems()))
    frame = data.perturbation_summary.copy()
    for perturbation, value in ape.items():
        rows = frame["metric"].str.startswith("ape") & (frame["perturbation_id"] == perturbation)
        frame.loc[rows, "avg_raw_score"] = value
    for perturbation, value in smape.items():
        rows = (frame["metric"] == "smape") & (frame["perturbation_id"] == perturbation)
        frame.loc[rows, "avg_raw_score"] = value
    data.perturbation_summary = frame
    return data


def test_a_system_without_robustness_ratings_is_not_named_least_robust():
    # by hand (three_systems): zeta 11.5 / 6 = 1.92, alpha 8 / 6 = 1.33, mid 21 / 6 = 3.50
    data = report_data(rating_rows(three_systems()))
    summary = data.system_summary.copy()
    summary.loc[summary["system_id"] == "mid", "avg_rating"] = math.nan
    data.system_summary = summary
    text = plain(reading_paragraph(data))
    assert (
        "the most robust is alpha (mean robustness rating 1.33), the least robust zeta (1.92)"
        in text
    )


def test_an_undefined_ape_does_not_make_a_perturbation_hurt_most():
    data = _with_perturbation_means({"P1": 1.0, "P2": 3.0, "P3": math.nan}, {})
    text = plain(reading_paragraph(data))
    assert (
        "The perturbation that hurts most is P2: its mean perturbation effect (APE, industry "
        "and company confounders, over systems) is 3.00 price units, against 1.00 for the "
        "mildest, P1." in text
    )
    assert "nan" not in text.lower()


def test_perturbations_tied_for_the_largest_ape_are_all_named():
    data = _with_perturbation_means({"P1": 3.0, "P2": 3.0, "P3": 1.0}, {})
    forward = plain(reading_paragraph(data))
    assert (
        "The perturbations that hurt most are P1 and P2: their mean perturbation effect (APE, "
        "industry and company confounders, over systems) is 3.00 price units, against 1.00 for "
        "the mildest, P3." in forward
    )
    data.perturbation_summary = data.perturbation_summary.iloc[::-1].reset_index(drop=True)
    assert plain(reading_paragraph(data)) == forward


def test_every_perturbation_at_one_ape_names_no_mildest():
    data = _with_perturbation_means({"P1": 2.0, "P2": 2.0, "P3": 2.0}, {})
    text = plain(reading_paragraph(data))
    assert "The perturbations that hurt most are P1 and P2 and P3: their mean" in text
    assert "mildest" not in text


def test_perturbations_tied_for_the_largest_smape_are_all_named():
    data = _with_perturbation_means({}, {"P0": 10.0, "P1": 30.0, "P2": 20.0, "P3": 30.0})
    forward = plain(reading_paragraph(data))
    assert (
        "For accuracy, P1 and P3 raise the mean SMAPE over systems most: from 10.00 on clean "
        "inputs to 30.00." in forward
    )
    data.perturbation_summary = data.perturbation_summary.iloc[::-1].reset_index(drop=True)
    assert plain(reading_paragraph(data)) == forward


def test_one_perturbation_raising_smape_most_is_named_alone():
    data = _with_perturbation_means({}, {"P0": 10.0, "P1": 30.0, "P2": 20.0, "P3": math.nan})
    text = plain(reading_paragraph(data))
    assert "For accuracy, P1 raises the mean SMAPE over systems most: from 10.00 on clean" in text


def test_an_undefined_ape_in_the_first_row_is_left_out_too():
    data = _with_perturbation_means({"P1": math.nan, "P2": 3.0, "P3": 1.0}, {})
    text = plain(reading_paragraph(data))
    assert "The perturbation that hurts most is P2: its mean" in text
    assert "is 3.00 price units, against 1.00 for the mildest, P3." in text
