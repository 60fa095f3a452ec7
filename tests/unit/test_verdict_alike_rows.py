"""The verdict says how many robustness rows (metric x perturbation) give every system the
same rating: such rows do not separate the systems, yet count in every system's mean.
Expected counts and names worked out by hand from the rows each test builds."""

from __future__ import annotations

from tests.support.report_text import plain, rating_rows, report_data, three_systems
from tsrate.robustness.report.sections import verdict_section


def test_no_sentence_when_every_row_separates_some_systems():
    text = plain(verdict_section(report_data(rating_rows(three_systems()))))
    assert "rate every system alike" not in text


def test_the_rows_that_rate_every_system_alike_are_counted_and_named():
    """wrs_company at 3 for all three systems on P0..P3 (4 rows) and ape_industry at 2 for
    all on P1 (zeta is 2 there already): 5 of the 20 rows (2 WRS metrics x 4
    perturbations + 4 APE/PIE metrics x 3), named in (metric, perturbation) order."""
    levels = three_systems()
    for system in levels.values():
        system["wrs_company"] = [3, 3, 3, 3]
        system["ape_industry"][0] = 2
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert (
        "5 of the 20 robustness rows (metric × perturbation) rate every system alike "
        "(ape_industry on P1, wrs_company on P0, wrs_company on P1 and 2 more): they do not "
        "separate the systems, and they narrow the gap between the means." in text
    ), text


def test_one_system_apart_is_not_alike_and_an_unrated_cell_is_left_out():
    """wrs_company alike on P0..P2 only (mid 4 on P3); on P1 alpha has no rating (null):
    the two others still rate alike there, so 3 rows. wrs_industry on P0 rates zeta only
    (alpha and mid null): a row of one system is no row of the count (19 of them)."""
    levels = three_systems()
    for system in levels.values():
        system["wrs_company"] = [3, 3, 3, 3]
    levels["mid"]["wrs_company"][3] = 4
    rows = rating_rows(levels)
    unrated = (
        (rows["system_id"] == "alpha")
        & (rows["metric"] == "wrs_company")
        & (rows["perturbation_id"] == "P1")
    )
    rows.loc[unrated, "rating"] = None
    alone = (
        rows["system_id"].isin(["alpha", "mid"])
        & (rows["metric"] == "wrs_industry")
        & (rows["perturbation_id"] == "P0")
    )
    rows.loc[alone, "rating"] = None
    text = plain(verdict_section(report_data(rows)))
    assert "3 of the 19 robustness rows" in text, text
    assert "(wrs_company on P0, wrs_company on P1, wrs_company on P2)" in text
