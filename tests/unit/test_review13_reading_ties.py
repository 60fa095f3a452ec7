"""The reading paragraph names every system tied for the lowest mean SMAPE, in seed order,
whatever order the mart's rows come in (a plain read of marts.system_summary has none): it
used to name whichever tied row came first, so two identical readings of one snapshot could
name different systems, and the verdict above (ties by name) another one.

Hand-worked: zeta and alpha average 20.0 SMAPE over the four perturbations, mid 40.0; the
seed order is zeta, alpha, mid.
"""

from __future__ import annotations

from tests.support.report_text import plain, rating_rows, report_data, three_systems
from tsrate.robustness.report.reading import reading_paragraph


def _tied_on_smape():
    levels = three_systems()
    levels["zeta"]["smape"] = [20.0] * 4  # alpha's: a tie at the lowest mean
    return levels


def test_the_reading_names_both_systems_tied_for_the_lowest_smape():
    data = report_data(rating_rows(_tied_on_smape()))
    text = plain(reading_paragraph(data))
    assert "The most accurate systems by SMAPE are zeta and alpha (20.00 averaged over " in text


def test_the_reading_names_the_same_systems_whatever_the_row_order():
    data = report_data(rating_rows(_tied_on_smape()))
    forward = plain(reading_paragraph(data))
    data.system_summary = data.system_summary.iloc[::-1].reset_index(drop=True)
    backward = plain(reading_paragraph(data))
    assert forward == backward


def test_a_lone_lowest_smape_is_named_alone():
    text = plain(reading_paragraph(report_data(rating_rows(three_systems()))))
    assert "The most accurate system by SMAPE is alpha (20.00 averaged over perturbations)." in text
