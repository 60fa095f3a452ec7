"""The core report's text (tsrate.robustness.report: sections, numbers, paper, probabilistic,
relative, render) against numbers worked out independently from the mart rows each test
builds: means and maxima by plain Python loops over the rows, best and worst by sorting
those loops' results, shaky counts from the documented 60 % rule, and every printed number
formatted by the documented precision rule (>= 1000 no decimals, >= 1 two, below 1 three
significant).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_text.json): an analyst acts on these words, so a mutant that names
the wrong system as best, reverses a direction word, prints a number that no longer matches
the mart row it names, or drops the shaky marker changes a checked string here.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from tests.support.report_text import (
    ROBUSTNESS,
    RUN,
    SEED,
    plain,
    rating_rows,
    report_data,
    summaries,
    three_systems,
    uniform,
)
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.sections import (
    overview_section,
    shaky_counts,
    study_section,
    summary_section,
    verdict_section,
)


def fmt(value: float) -> str:
    """The documented precision: >= 1000 no decimals, >= 1 two, below 1 three significant."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def nums(html: str) -> list[dict]:
    """Every traceable number: its mart, column, where, value and printed text."""
    out = []
    for attrs, text in re.findall(r'<span class="num"([^>]*)>([^<]*)</span>', html):
        found = dict(re.findall(r' (data-[a-z-]+)="([^"]*)"', attrs))
        where = json.loads(found["data-where"].replace("&quot;", '"'))
        out.append(
            dict(
                mart=found["data-mart"],
                column=found["data-column"],
                where=where,
                value=float(found["data-value"]),
                agg=found.get("data-agg", ""),
                text=text,
            )
        )
    return out


def by_hand_means(levels: dict) -> dict[str, float]:
    """Mean over the robustness metrics of each metric's mean rating over perturbations."""
    return {
        system: sum(sum(v) / len(v) for m, v in by_metric.items() if m in ROBUSTNESS) / 6
        for system, by_metric in levels.items()
    }


def stability_of(ratings: pd.DataFrame, shares: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    """rating_stability at each published rating: share 0.9 unless ``shares`` says otherwise
    (keys: metric, perturbation, system)."""
    return pd.DataFrame(
        [
            dict(
                metric=r.metric,
                perturbation_id=r.perturbation_id,
                system_id=r.system_id,
                rating=r.rating,
                share=shares.get((r.metric, r.perturbation_id, r.system_id), 0.9),
            )
            for r in ratings.itertuples()
        ]
    )


# ----------------------------------------------------------------------------- verdict


def test_the_verdict_names_best_and_worst_by_the_hand_worked_means():
    """zeta: WRS industry (1+1+2+2)/4 = 1.5, five metrics at 2 -> 11.5/6 = 1.92; alpha: APE
    company 3, five at 1 -> 8/6 = 1.33; mid: PIE company 1, five at 4 -> 21/6 = 3.50. Best
    alpha, worst mid, gap 3.50 - 1.33 = 2.17 on a 1 to 4 scale; SMAPE lowest alpha (20),
    highest mid (40); MASE lowest mid (0.5, not the lowest SMAPE: no "too")."""
    levels = three_systems()
    means = by_hand_means(levels)
    assert [round(means[s], 4) for s in SEED] == [1.9167, 1.3333, 3.5]
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert (
        "Of 3 rated systems, alpha is the most robust (mean robustness rating 1.33 on a 1 "
        "(best) to 4 scale, over 6 robustness metrics and the perturbations) and mid the "
        "least (3.50): a gap of 2.17 rating levels." in text
    )
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )
    assert "By MASE, mid has the lowest mean (0.5)." in text
    assert "How firm these ratings are is unknown" in text


def test_the_verdict_numbers_trace_to_the_rows_they_print():
    levels = three_systems()
    html = verdict_section(report_data(rating_rows(levels)))
    means = by_hand_means(levels)
    printed = nums(html)
    ratings = [n for n in printed if n["column"] == "avg_rating"]
    assert [(n["where"]["system_id"], n["agg"]) for n in ratings] == [
        ("alpha", "avg"),
        ("mid", "avg"),
    ]
    for n in ratings:
        assert n["value"] == pytest.approx(means[n["where"]["system_id"]], abs=1e-12)
        assert n["where"]["metric"] == sorted(ROBUSTNESS)
        assert n["text"] == fmt(n["value"])
    levels_num = [n for n in printed if n["column"] == "rating_levels"]
    assert [(n["value"], n["agg"], n["text"]) for n in levels_num] == [(4.0, "max", "4")]
    gap = re.search(r'data-derived="robustness_gap" data-value="([^"]*)"', html).group(1)
    assert float(gap) == pytest.approx(means["mid"] - means["alpha"], abs=1e-12)


def test_the_verdict_breaks_a_tie_in_seed_order_and_names_both():
    """zeta and alpha both at 1 everywhere, mid at 3: zeta and alpha tie (seed order: zeta
    first though alpha sorts first), mid the least; the leaders' firmness counts both, in the
    order the tie named them."""
    levels = {"zeta": uniform(1, smape=5.0), "alpha": uniform(1, smape=6.0), "mid": uniform(3)}
    ratings = rating_rows(levels)
    stability = stability_of(
        ratings,
        {("wrs_industry", "P1", "alpha"): 0.59, ("wrs_company", "P2", "mid"): 0.1,
         ("ape_company", "P3", "zeta"): 0.6, ("pie_company", "P1", "zeta"): float("nan")},
    )  # fmt: skip
    text = plain(verdict_section(report_data(ratings, stability=stability)))
    n = sum(1 for r in ratings.itertuples() if r.system_id == "zeta")
    assert (
        "Of 3 rated systems, zeta and alpha tie as the most robust (mean robustness rating 1.00"
        in text
    )
    assert "and mid the least (3.00): a gap of 2.00 rating levels." in text
    # 0.59 is under 60 %: shaky; exactly 0.6 and an unknown share are not
    assert (
        f"How firm: 1 of the leaders' {2 * n} ratings are shaky (zeta 0 of {n}, alpha 1 of {n}; "
        "under 60% of bootstrap resamples of the window dates give the published level), "
        f"and 2 of all {3 * n};" in text
    )


def test_the_verdict_names_the_single_leaders_shaky_ratings():
    levels = three_systems()
    ratings = rating_rows(levels)
    stability = stability_of(
        ratings, {("smape", "P0", "alpha"): 0.2, ("mase", "P3", "alpha"): 0.5999,
                  ("smape", "P1", "mid"): 0.0}
    )  # fmt: skip
    text = plain(verdict_section(report_data(ratings, stability=stability)))
    n = sum(1 for r in ratings.itertuples() if r.system_id == "alpha")
    assert f"How firm: 2 of alpha's {n} ratings are shaky (under 60%" in text
    assert f"and 3 of all {len(ratings)};" in text


def test_the_verdict_with_one_system_and_with_all_tied():
    one = rating_rows({"mid": uniform(3)})
    text = plain(verdict_section(report_data(one)))
    assert (
        "Only mid is rated in this run (mean robustness rating 3.00 on a 1 (best) to 4 scale)"
        in text
    )
    tied = rating_rows({s: uniform(2) for s in SEED})
    text = plain(verdict_section(report_data(tied)))
    assert (
        "All 3 rated systems have the same mean robustness rating (2.00 on a 1 (best) to 4" in text
    )


def test_the_verdict_ties_at_the_last_decimal_but_not_beyond():
    """Means within 1e-9 are one tie (rounding of equal fractions: at a mean of 1 the
    relative and absolute tolerances are both 1e-9); 1.5e-9 apart are not."""
    base = rating_rows({s: uniform(1) for s in SEED})
    summary, perturbation_summary = summaries(base)
    for delta, tie in ((5e-10, True), (1.5e-9, False), (1e-6, False)):
        shifted = summary.copy()
        shifted.loc[shifted["system_id"] == "mid", "avg_rating"] += delta
        data = report_data(base)
        data.system_summary = shifted
        text = plain(verdict_section(data))
        assert ("All 3 rated systems" in text) == tie
        if not tie:
            assert "zeta and alpha tie as the most robust" in text and "mid the least" in text


def _board(rows: dict[str, tuple[float, float]], metric: str = "smape") -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id=RUN, scope="all", metric=metric, system_id=s,
                 skill_score_lower=low, skill_score_upper=high)
            for s, (low, high) in rows.items()
        ]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("alpha", "zeta", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "clearly ahead of zeta (30.00)"),
        ((0.3, 0.4), (0.1, 0.3), "but not separably from zeta (30.00)"),  # touching: overlap
        ((0.1, 0.2), (0.2, 0.3), "but not separably from zeta (30.00)"),  # touching: overlap
        ((0.1, 0.2), (0.21, 0.3), "yet the leaderboard ranks zeta (30.00) ahead"),
    ],
)
def test_the_verdict_separates_the_smape_leader_only_by_strictly_apart_intervals(alpha, zeta, says):
    """alpha has the lowest mean SMAPE (20), zeta the runner-up (30), mid the highest (40):
    the leaderboard's intervals decide ahead / behind only when strictly apart."""
    board = _board({"alpha": alpha, "zeta": zeta, "mid": (0.0, 0.05)})
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert f"By accuracy, alpha has the lowest mean SMAPE (20.00), {says}" in text
    assert (
        f"([{fmt(alpha[0])}, {fmt(alpha[1])}] vs [{fmt(zeta[0])}, {fmt(zeta[1])}]); mid has the highest (40.00)."
        in text
    )


def test_the_verdict_reads_the_mase_rows_for_mase_and_the_all_scope_only():
    """MASE: mid lowest (0.5), zeta runner-up (1.5). The SMAPE rows and another scope's rows
    say otherwise and must not be read."""
    board = pd.concat(
        [
            _board({"alpha": (0.3, 0.4), "zeta": (0.1, 0.2)}),
            _board({"mid": (0.5, 0.6), "zeta": (0.1, 0.2)}, metric="mase"),
            _board({"mid": (0.0, 0.1), "zeta": (0.8, 0.9)}, metric="mase").assign(scope="P1"),
        ],
        ignore_index=True,
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By MASE, mid has the lowest mean (0.5), clearly ahead of zeta (1.50): their MASE" in text
    )
    assert "([0.5, 0.6] vs [0.1, 0.2])." in text
    missing = board.assign(
        skill_score_upper=board["skill_score_upper"].where(board["metric"] != "mase")
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=missing)))
    assert "By MASE, mid has the lowest mean (0.5)." in text


def test_a_leaderboard_without_intervals_says_nothing_of_separation():
    """A leaderboard from before the skill-score intervals (no bound columns): the verdict
    names the lowest and highest SMAPE without a separation clause."""
    board = _board({"alpha": (0.3, 0.4), "zeta": (0.1, 0.2)}).drop(
        columns=["skill_score_lower", "skill_score_upper"]
    )
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )
    assert "leaderboard" not in text


def test_one_missing_bound_is_enough_to_say_nothing_of_separation():
    """Only the runner-up's upper SMAPE bound is null: no interval comparison is printed."""
    board = _board({"alpha": (0.3, 0.4), "zeta": (0.1, float("nan"))})
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )


def test_a_board_without_the_runner_up_says_nothing_of_separation():
    board = _board({"alpha": (0.3, 0.4), "mid": (0.1, 0.2)})  # zeta, the runner-up: absent
    text = plain(verdict_section(report_data(rating_rows(three_systems()), leaderboard=board)))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and mid the highest (40.00)." in text
    )


def test_two_systems_are_compared_by_smape_and_mase():
    """zeta (SMAPE 30, MASE 1.5) and alpha (SMAPE 20, MASE 2): two systems are enough for
    both sentences; alpha lowest by SMAPE, zeta by MASE. With alpha's MASE at 1, alpha is
    lowest by both (too)."""
    levels = three_systems()
    del levels["mid"]
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert (
        "By accuracy, alpha has the lowest mean SMAPE (20.00) and zeta the highest (30.00)." in text
    )
    assert "By MASE, zeta has the lowest mean (1.50)." in text
    levels["alpha"]["mase"] = [1.0] * 4
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert "By MASE, alpha has the lowest mean too (1.00)." in text


def test_no_too_when_there_was_no_smape_sentence():
    """Only alpha has SMAPE rows (no SMAPE sentence: nothing to compare), alpha and zeta
    have MASE: the MASE sentence does not say "too"."""
    levels = three_systems()
    del levels["mid"]
    levels["alpha"]["mase"] = [1.0] * 4
    ratings = rating_rows(levels)
    ratings = ratings[(ratings["metric"] != "smape") | (ratings["system_id"] == "alpha")]
    text = plain(verdict_section(report_data(ratings)))
    assert "lowest mean SMAPE" not in text
    assert "By MASE, alpha has the lowest mean (1.00)." in text


def test_table2_with_one_system():
    """One rated system: each row has its one value, in bold (the best of one)."""
    html = summary_section(report_data(rating_rows({"mid": uniform(2, smape=7.0)})))
    rows = table2(html, "Per system")
    assert rows["SMAPE ↓"] == ["7.00*"] and rows["Sign accuracy % ↑"] == ["50.00*"]


def test_the_verdict_says_too_when_smape_and_mase_agree():
    levels = three_systems()
    levels["alpha"]["mase"] = [0.1] * 4
    text = plain(verdict_section(report_data(rating_rows(levels))))
    assert "By MASE, alpha has the lowest mean too (0.1)." in text


def test_shaky_counts_by_the_documented_rule():
    ratings = rating_rows({"zeta": uniform(1), "alpha": uniform(2)})
    stability = stability_of(
        ratings, {("smape", "P0", "zeta"): 0.5, ("wrs_company", "P2", "zeta"): 0.6,
                  ("mase", "P1", "alpha"): 0.0}
    )  # fmt: skip
    counts = shaky_counts(report_data(ratings, stability=stability)).set_index("system_id")
    n = len(ratings) // 2
    assert counts.loc["zeta"].tolist() == [n, 1] and counts.loc["alpha"].tolist() == [n, 1]


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


# ----------------------------------------------------------------------------- reading


def perturbation_frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id=RUN, perturbation_id=p, metric=m, avg_raw_score=v,
                 higher_is_better=m == "sign_accuracy")
            for p, m, v in rows
        ]
    )  # fmt: skip


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
