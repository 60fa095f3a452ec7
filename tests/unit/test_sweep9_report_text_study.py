"""The core report's study section, Table 2 and overview (tsrate.robustness.report.sections)
against the mart rows each test builds: each ticker with its company and window count, the
rated and unrated systems and perturbations with why, the bold best cell of each Table 2 row
by the metric's direction, and the overview's ranking by mean rating with ties in seed
order.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_text.json): an analyst acts on these words, so a mutant that names
the wrong system as best, reverses a direction word, prints a number that no longer matches
the mart row it names, or drops the shaky marker changes a checked string here.
"""

from __future__ import annotations

import dataclasses
import re

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
    stability_of,
)
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.sections import (
    overview_section,
    study_section,
    summary_section,
)

# ----------------------------------------------------------------------------- study


def table_rows(html: str, after: str) -> list[list[str]]:
    """The body rows of the first table after the heading ``after``, as plain cells."""
    part = html[html.index(after) :]
    body = part[part.index("<tbody>") : part.index("</tbody>")]
    return [
        [plain(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def study_data(**overrides) -> ReportData:
    levels = {"zeta": uniform(1), "alpha": uniform(2), "mid": uniform(3)}
    ratings = rating_rows(levels)
    ratings = ratings[ratings["perturbation_id"].isin(["P0", "P1"])]
    systems = pd.DataFrame(
        [
            dict(system_id="zeta", display_name="Zeta", implementation="m", modality="numeric",
                 family="stat", purpose="fc", architecture="arima", is_foundation_model=False,
                 paper_symbol="S_z", description="z"),
            dict(system_id="alpha", display_name="Alpha", implementation="m",
                 modality="numeric+image", family="nn", purpose="fc", architecture="vit",
                 is_foundation_model=True, paper_symbol=None, description="a"),
            dict(system_id="mid", display_name="Mid", implementation=None, modality="numeric",
                 family="ext", purpose="fc", architecture="x", is_foundation_model=False,
                 paper_symbol=None, description="imported"),
            dict(system_id="ghost", display_name="Ghost", implementation="  ", modality="numeric",
                 family="f", purpose="p", architecture="a", is_foundation_model=False,
                 paper_symbol=None, description="Needs ghost weights."),
            dict(system_id="spare", display_name="Spare", implementation="m", modality="numeric",
                 family="f", purpose="p", architecture="a", is_foundation_model=False,
                 paper_symbol=None, description="Runs anywhere."),
            dict(system_id="asked", display_name="Asked", implementation="m", modality="numeric",
                 family="f", purpose="p", architecture="a", is_foundation_model=False,
                 paper_symbol=None, description="Asked for."),
        ]
    )  # fmt: skip
    perturbations = pd.DataFrame(
        [
            dict(perturbation_id=p, name=f"n{p}", family="fam", modality=m, description=f"d{p}")
            for p, m in [("P0", "numeric"), ("P1", "numeric"), ("P2", "numeric"),
                         ("P3", "numeric"), ("P4", "image")]
        ]
    )  # fmt: skip
    values = dict(
        study=dict(tickers=["AAA", "CCC"], systems=["zeta", "alpha", "asked"],
                   perturbations=["P0", "P1", "P2"], start="2022-01-03", end="2022-12-30",
                   context_length=80, horizon=20, stride=5, perturbation_phase=1, seed=7),
        systems=systems,
        perturbations=perturbations,
        companies=pd.DataFrame(
            [dict(ticker="BBB", company_name="B Corp", industry="Oil"),
             dict(ticker="AAA", company_name="A Corp", industry="Tech")]
        ),
        windows=pd.DataFrame([dict(ticker="AAA", n_windows=12), dict(ticker="BBB", n_windows=3)]),
    )  # fmt: skip
    values.update(overrides)
    return report_data(ratings, **values)


def test_the_study_lists_each_ticker_with_its_own_company_and_window_count():
    """AAA is in the companies seed (A Corp, Tech, 12 windows); CCC is not (and has no
    windows); BBB is in the seed but not in the study."""
    html = study_section(study_data())
    assert table_rows(html, "<h3>Companies</h3>") == [
        ["AAA", "A Corp", "Tech", "12"],
        ["CCC", "(not in the companies seed)", "", "0"],
    ]
    (count,) = [n for n in nums(html) if n["mart"] == "marts.window_errors"]
    assert count["where"] == {"run_id": RUN, "ticker": "AAA"} and count["value"] == 12.0
    assert "Daily closing prices of 2 companies, study period 2022-01-03 to 2022-12-30" in plain(
        html
    )
    assert (
        "context n = 80 trading days, horizon d = 20, stride 5, perturbation phase 1, seed 7"
        in plain(html)
    )


def test_the_study_without_a_companies_seed_names_no_company():
    html = study_section(study_data(companies=pd.DataFrame()))
    assert table_rows(html, "<h3>Companies</h3>") == [
        ["AAA", "(not in the companies seed)", "", "12"],
        ["CCC", "(not in the companies seed)", "", "0"],
    ]


def test_the_study_lists_rated_systems_in_seed_order_with_their_metadata():
    html = study_section(study_data())
    assert table_rows(html, "<h3>Systems rated</h3>") == [
        ["zeta", "Zeta", "S_z", "numeric", "stat", "fc", "arima", "False"],
        ["alpha", "Alpha", "", "numeric+image", "nn", "fc", "vit", "True"],
        ["mid", "Mid", "", "numeric", "ext", "fc", "x", "False"],
    ]
    bare = study_section(study_data(systems=pd.DataFrame()))
    assert table_rows(bare, "<h3>Systems rated</h3>") == [
        [s] + [""] * 7 for s in ("alpha", "mid", "zeta")
    ]


def test_the_study_says_why_each_system_is_not_rated():
    """asked: in the study, no ratings; ghost: blank implementation (not runnable); spare:
    runnable but not in the study; mid: no implementation but rated (imported), not listed."""
    rows = table_rows(study_section(study_data()), "<h3>Systems not rated in this run</h3>")
    assert rows == [
        ["asked", "in this study but has no ratings in the run"],
        ["ghost (Ghost)", "not runnable in this version: Needs ghost weights."],
        ["spare (Spare)", "not in this study (var systems; tsrate systems says whether it can "
         "run here): Runs anywhere."],
    ]  # fmt: skip


def test_a_withdrawn_system_is_said_to_be_withdrawn_with_when_and_why():
    """published_runs.withdrawn: ghost (no implementation, as an import) and asked (in the
    study's list) were withdrawn; the report gives the time and reason, not "not runnable"
    nor "no ratings"; a withdrawal without a reason gives the time alone."""
    withdrawn = {
        "ghost": {"withdrawn_at": "2026-12-06 22:32:10", "reason": "a  trial\nwithdraw"},
        "asked": {"withdrawn_at": "2026-12-05 08:00:00", "reason": None},
    }
    html = study_section(dataclasses.replace(study_data(), withdrawn=withdrawn))
    rows = table_rows(html, "<h3>Systems not rated in this run</h3>")
    assert rows[:2] == [
        ["asked", "withdrawn from this study (2026-12-05 08:00)"],
        ["ghost (Ghost)", "withdrawn from this study (2026-12-06 22:32: a trial withdraw)"],
    ]
    assert "not runnable" not in html


def test_the_study_says_of_each_perturbation_whether_it_was_rated():
    """P0, P1 rated; P2 in the study, not rated; P3 neither; P4 acts on images: unavailable
    unless a rated system takes images (alpha does, numeric+image)."""
    html = study_section(study_data())
    status = {row[0]: row[-1] for row in table_rows(html, "<h3>Perturbations</h3>")}
    assert status == {
        "P0": "rated",
        "P1": "rated",
        "P2": "in the study but not rated",
        "P3": "not in this study (var perturbations)",
        "P4": "not in this study (var perturbations)",
    }
    no_images = study_data()
    no_images.systems.loc[no_images.systems["system_id"] == "alpha", "modality"] = "numeric"
    status = {
        row[0]: row[-1] for row in table_rows(study_section(no_images), "<h3>Perturbations</h3>")
    }
    assert status["P4"] == "unavailable: acts on image inputs, and no rated system takes images"
    assert status["P3"] == "not in this study (var perturbations)"  # numeric: not unavailable
    # an image system that is not rated does not make image perturbations available
    unrated = study_data()
    unrated.systems.loc[unrated.systems["system_id"] == "alpha", "modality"] = "numeric"
    unrated.systems.loc[unrated.systems["system_id"] == "spare", "modality"] = "image"
    status = {
        row[0]: row[-1] for row in table_rows(study_section(unrated), "<h3>Perturbations</h3>")
    }
    assert status["P4"].startswith("unavailable")
    # no systems catalogue at all: no rated system is known to take images
    bare = study_section(study_data(systems=pd.DataFrame()))
    status = {row[0]: row[-1] for row in table_rows(bare, "<h3>Perturbations</h3>")}
    assert status["P4"].startswith("unavailable") and status["P3"].startswith("not in this study")


# ----------------------------------------------------------------------------- Table 2


def table2(html: str, heading: str) -> dict[str, list[str]]:
    """The rows of the Table 2 block under ``heading``, keyed by metric label, with a
    trailing '*' on the bold (best) cells."""
    part = html[html.index(heading) :]
    body = part[part.index("<tbody>") : part.index("</tbody>")]
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        out[plain(cells[0])] = [plain(c) + ("*" if 'class="best"' in c else "") for c in cells[1:]]
    return out


def test_table2_with_one_system():
    """One rated system: each row has its one value, in bold (the best of one)."""
    html = summary_section(report_data(rating_rows({"mid": uniform(2, smape=7.0)})))
    rows = table2(html, "Per system")
    assert rows["SMAPE ↓"] == ["7.00*"] and rows["Sign accuracy % ↑"] == ["50.00*"]


def test_table2_bolds_the_lowest_or_the_highest_as_each_metric_says():
    """Per system (seed order zeta, alpha, mid): SMAPE 30, 20, 40 (lower better: alpha); MASE
    1.5, 2, 0.5 (mid); sign accuracy 40, 60, 55 (higher better: alpha); WRS industry mean
    rating-as-score 1.5, 1, 4 (zeta is not best)."""
    html = summary_section(report_data(rating_rows(three_systems())))
    rows = table2(html, "Per system")
    assert list(rows) == [
        "WRS industry ↓", "WRS company ↓", "APE industry ↓", "APE company ↓", "PIE % industry ↓",
        "PIE % company ↓", "SMAPE ↓", "MASE ↓", "Sign accuracy % ↑",
    ]  # fmt: skip
    assert rows["SMAPE ↓"] == ["30.00", "20.00*", "40.00"]
    assert rows["MASE ↓"] == ["1.50", "2.00", "0.5*"]
    assert rows["Sign accuracy % ↑"] == ["40.00", "60.00*", "55.00"]
    assert rows["WRS industry ↓"] == ["1.50", "1.00*", "4.00"]
    assert rows["PIE % company ↓"] == ["2.00", "1.00*", "1.00*"]  # a tie: both bold
    headers = re.findall(r"<th>(.*?)</th>", html[: html.index("Per perturbation")])
    assert [plain(h) for h in headers] == ["Metric", "zeta", "alpha", "mid"]


def test_table2_per_perturbation_bolds_by_direction_and_marks_missing_cells():
    rows = [
        ("P1", "smape", 5.0), ("P2", "smape", 4.0), ("P0", "smape", 6.0),
        ("P1", "sign_accuracy", 50.0), ("P2", "sign_accuracy", 70.0),
    ]  # fmt: skip
    html = summary_section(
        report_data(rating_rows(three_systems()), perturbation_summary=perturbation_frame(rows))
    )
    per = table2(html, "Per perturbation")
    assert per["SMAPE ↓"] == ["6.00", "5.00", "4.00*"]
    assert per["Sign accuracy % ↑"] == ["–", "50.00", "70.00*"]
    assert per["WRS industry ↓"] == ["–", "–", "–"]


# ----------------------------------------------------------------------------- overview


def test_the_overview_ranks_by_mean_rating_with_ties_in_seed_order():
    """mid 1 everywhere, zeta and alpha tie at 2 (seed order: zeta first, one rank); shaky counts by
    the 60 % rule; accuracy means by system."""
    levels = {
        "zeta": uniform(2, smape=7.0),
        "alpha": uniform(2, smape=8.0),
        "mid": uniform(1, smape=9.0, sign=61.0),
    }
    ratings = rating_rows(levels)
    stability = stability_of(ratings, {("smape", "P0", "zeta"): 0.3, ("smape", "P1", "zeta"): 0.6})
    html = overview_section(report_data(ratings, stability=stability))
    body = html[html.index("<tbody>") :]
    rows = [
        [plain(c) for c in re.findall(r"<td>(.*?)</td>", r, re.S)]
        for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]
    n = len(ratings) // 3
    assert rows == [
        ["1", "mid", "Mid", "1.00", "9.00", "1.00", "61.00", f"0 of {n}"],
        ["2", "zeta", "Zeta", "2.00", "7.00", "1.00", "50.00", f"1 of {n} ⚠"],
        # tied means share a rank (the verdict says they tie; the table ranked them 2 and 3)
        ["2", "alpha", "Alpha", "2.00", "8.00", "1.00", "50.00", f"0 of {n}"],
    ]
    without = overview_section(report_data(ratings))
    assert without.count("<td>–</td>") == 3


def test_the_overview_without_a_systems_catalogue_leaves_the_names_blank():
    levels = {"zeta": uniform(2), "mid": uniform(1)}
    for systems in (pd.DataFrame(), pd.DataFrame({"system_id": ["zeta", "mid"]})):
        html = overview_section(report_data(rating_rows(levels), systems=systems))
        body = html[html.index("<tbody>") :]
        rows = [
            [plain(c) for c in re.findall(r"<td>(.*?)</td>", r, re.S)][:4]
            for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)
        ]
        assert rows == [["1", "mid", "", "1.00"], ["2", "zeta", "", "2.00"]]
