"""The core report's reading paragraph (tsrate.robustness.report.reading) against numbers
worked out independently from the mart rows each test builds: the most and least robust
systems by hand-worked means, ties in seed order, the worst and mildest perturbation by mean
APE, the scale, and which confounder shows more bias.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_text.json): an analyst acts on these words, so a mutant that names
the wrong system as best, reverses a direction word, prints a number that no longer matches
the mart row it names, or drops the shaky marker changes a checked string here.
"""

from __future__ import annotations

import pandas as pd

from tests.support.report_text import (
    RUN,
    plain,
    rating_rows,
    report_data,
    three_systems,
    uniform,
)
from tests.support.sweep9_report_text import (
    nums,
    perturbation_frame,
)
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.sections import (
    verdict_section,
)

#: APE per perturbation (industry, company): P1 (2, 4) -> 3, P2 (6, 8) -> 7, P3 (1, 2) ->
#: 1.5; PIE says the opposite and is not read. SMAPE: P0 10, P1 12, P2 11, P3 15.
READING_ROWS = [
    *[(p, "ape_industry", v) for p, v in (("P1", 2.0), ("P2", 6.0), ("P3", 1.0))],
    *[(p, "ape_company", v) for p, v in (("P1", 4.0), ("P2", 8.0), ("P3", 2.0))],
    *[(p, "pie_industry", v) for p, v in (("P1", 90.0), ("P2", 1.0), ("P3", 99.0))],
    *[(p, "smape", v) for p, v in (("P0", 10.0), ("P1", 12.0), ("P2", 11.0), ("P3", 15.0))],
]


def test_the_reading_names_the_most_and_least_robust_by_the_hand_worked_means():
    text = plain(reading_paragraph(report_data(rating_rows(three_systems()))))
    assert (
        "Across 3 rated systems, the most robust is alpha (mean robustness rating 1.33), the "
        "least robust mid (3.50) on a 1 (best) to 4 scale, averaged over the 6 robustness "
        "metrics and the perturbations." in text
    )
    assert "The most accurate system by SMAPE is alpha (20.00 averaged over perturbations)." in text


def test_the_reading_names_every_tied_system_in_seed_order():
    levels = {"zeta": uniform(2), "alpha": uniform(1), "mid": uniform(1)}
    text = plain(reading_paragraph(report_data(rating_rows(levels))))
    assert (
        "the most robust is alpha (mean robustness rating 1.00) and mid (mean robustness rating 1.00), the least robust zeta (2.00)"
        in text
    )


def test_the_reading_names_the_worst_and_mildest_perturbation_by_mean_ape():
    data = report_data(
        rating_rows(three_systems()), perturbation_summary=perturbation_frame(READING_ROWS)
    )
    html = reading_paragraph(data)
    text = plain(html)
    assert (
        "The perturbation that hurts most is P2: its mean perturbation effect (APE, industry "
        "and company confounders, over systems) is 7.00 price units, against 1.50 for the "
        "mildest, P3." in text
    )
    assert (
        "For accuracy, P3 raises the mean SMAPE over systems most: from 10.00 on clean inputs to 15.00."
        in text
    )
    ape = [n for n in nums(html) if n["mart"] == "marts.perturbation_summary" and n["agg"] == "avg"]
    assert [(n["where"]["perturbation_id"], n["value"]) for n in ape] == [("P2", 7.0), ("P3", 1.5)]
    assert all(n["where"]["metric"] == ["ape_company", "ape_industry"] for n in ape)
    smape = [
        n
        for n in nums(html)
        if n["where"].get("metric") == "smape" and n["mart"] == "marts.perturbation_summary"
    ]
    assert [(n["where"]["perturbation_id"], n["value"]) for n in smape] == [
        ("P0", 10.0),
        ("P3", 15.0),
    ]


def test_the_scale_is_the_largest_number_of_levels_and_two_perturbations_have_a_mildest():
    """WRS company rated on 3 levels, the rest on 4: the scale runs to 4 (the largest); APE
    P1 (2, 4) -> 3 against P2 (1, 1) -> 1: the worst and the mildest of two."""
    ratings = rating_rows(three_systems())
    ratings.loc[ratings["metric"] == "wrs_company", "rating_levels"] = 3
    ratings = pd.concat([ratings[ratings["metric"] == "wrs_company"], ratings])
    ratings = ratings.drop_duplicates(subset=["metric", "perturbation_id", "system_id"])
    rows = [("P1", "ape_industry", 2.0), ("P1", "ape_company", 4.0)]
    rows += [("P2", "ape_industry", 1.0), ("P2", "ape_company", 1.0)]
    data = report_data(ratings, perturbation_summary=perturbation_frame(rows))
    assert sorted(set(data.system_summary["rating_levels"])) == [3, 4]
    text = plain(reading_paragraph(data))
    assert "on a 1 (best) to 4 scale, averaged over the 6 robustness metrics" in text
    assert "is 3.00 price units, against 1.00 for the mildest, P2." in text
    assert "on a 1 (best) to 4 scale, over 6 robustness metrics" in plain(verdict_section(data))


def test_the_reading_with_one_perturbation_has_no_mildest_and_without_p0_no_smape_rise():
    rows = [
        ("P1", "ape_industry", 2.0),
        ("P1", "ape_company", 4.0),
        ("P1", "smape", 3.0),
        ("P2", "smape", 9.0),
    ]
    text = plain(
        reading_paragraph(
            report_data(rating_rows(three_systems()), perturbation_summary=perturbation_frame(rows))
        )
    )
    assert (
        "hurts most is P1: its mean perturbation effect (APE, industry and company confounders, over systems) is 3.00 price units."
        in text
    )
    assert "mildest" not in text and "raises the mean SMAPE" not in text
    only_p0 = [("P0", "smape", 3.0)]
    text = plain(
        reading_paragraph(
            report_data(
                rating_rows(three_systems()), perturbation_summary=perturbation_frame(only_p0)
            )
        )
    )
    assert "raises the mean SMAPE" not in text and "hurts most" not in text


def confounders(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id=RUN, grouped_by=g, system_id=None, perturbation_id=None, measure=m,
                 industry_avg=i, company_avg=c)
            for g, m, i, c in rows
        ]
    )  # fmt: skip


def test_the_reading_says_which_confounder_shows_more_bias_and_ties_go_to_company():
    frame = confounders(
        [("all", "pie", 5.0, 5.0), ("all", "ape", 2.0, 3.0), ("system", "ape", 9.0, 1.0),
         ("all", "wrs", 9.0, 1.0)]
    )  # fmt: skip
    text = plain(
        reading_paragraph(report_data(rating_rows(three_systems()), confounder_comparison=frame))
    )
    assert (
        "With APE, company as the confounder shows at least as much bias as industry (2.00 vs "
        "3.00). With PIE, company as the confounder shows at least as much bias as industry "
        "(5.00 vs 5.00)." in text
    )
    assert "WRS" not in text and "9.00" not in text
    frame = confounders([("all", "ape", 3.0, 2.0), ("all", "pie", float("nan"), 1.0)])
    text = plain(
        reading_paragraph(report_data(rating_rows(three_systems()), confounder_comparison=frame))
    )
    assert (
        "With APE, industry as the confounder shows more bias than company (3.00 vs 2.00)." in text
    )
    assert "With PIE" not in text
    frame = confounders([("all", "pie", 3.0, float("nan"))])
    text = plain(
        reading_paragraph(report_data(rating_rows(three_systems()), confounder_comparison=frame))
    )
    assert "With PIE" not in text
