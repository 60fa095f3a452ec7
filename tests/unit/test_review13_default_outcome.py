"""The core report reads the marts' default view: the robustness outcome of var
robustness_outcome (docs/ratings.md: "... and the report show the default view"), not
always the paper's R^max. The loader used to keep only R^max rows and then the
default ones: a build with robustness_outcome = relative_max_abs_residual lost every
robustness rating from the rating tables (system_summary, the verdict and rating_stability
being at the relative outcome), and showed the relative ratings as "another outcome".

A snapshot written by hand (no dbt): wrs_company of systems a and b at R^max (not the
default) and at the relative outcome (the default), smape (an accuracy metric: no outcome,
always default).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb

from tsrate.robustness.report import data as rd

RUN = "r1"


def _snapshot(path: Path, default: str) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema marts")
        con.execute(
            "create table published_runs as select ? as run_id, "
            "timestamp '2026-01-02' as published_at, ? as study",
            [RUN, json.dumps({"systems": ["a", "b"]})],
        )
        rows = []
        for outcome in ("max_abs_residual", "relative_max_abs_residual"):
            for system, score in (("a", 1.0), ("b", 2.0)):
                rows.append((RUN, "wrs_company", "P1", system, score, outcome, outcome == default))
        rows += [
            (RUN, "smape", "P1", "a", 0.1, None, True),
            (RUN, "smape", "P1", "b", 0.2, None, True),
        ]
        con.execute(
            "create table marts.ratings (run_id varchar, metric varchar, perturbation_id varchar, "
            "system_id varchar, raw_score double, outcome varchar, is_default_outcome boolean)"
        )
        con.executemany("insert into marts.ratings values (?, ?, ?, ?, ?, ?, ?)", rows)
        for name in ("system_summary", "perturbation_summary", "confounder_comparison"):
            con.execute(f"create table marts.{name} as select '{RUN}' as run_id")
    finally:
        con.close()
    return path


def _view(frame) -> list[tuple]:
    return sorted(
        (m, s, None if o is None or o != o else o)
        for m, s, o in zip(frame["metric"], frame["system_id"], frame["outcome"], strict=True)
    )


def test_a_build_at_another_default_outcome_reports_that_outcome(tmp_path):
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", "relative_max_abs_residual"))
    assert _view(data.ratings) == [
        ("smape", "a", None), ("smape", "b", None),
        ("wrs_company", "a", "relative_max_abs_residual"),
        ("wrs_company", "b", "relative_max_abs_residual"),
    ]  # fmt: skip
    assert data.default_outcome == "relative_max_abs_residual"
    # the other outcomes' block holds R^max now, not the default view again
    assert _view(data.outcome_ratings) == [
        ("wrs_company", "a", "max_abs_residual"), ("wrs_company", "b", "max_abs_residual"),
    ]  # fmt: skip


def test_the_papers_outcome_stays_the_default_view_of_a_default_build(tmp_path):
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", "max_abs_residual"))
    assert [o for o in _view(data.ratings) if o[0] == "wrs_company"] == [
        ("wrs_company", "a", "max_abs_residual"), ("wrs_company", "b", "max_abs_residual"),
    ]  # fmt: skip
    assert {o[2] for o in _view(data.outcome_ratings)} == {"relative_max_abs_residual"}
    assert data.default_outcome == "max_abs_residual"


def test_the_rating_tables_name_and_flag_the_default_outcome():
    import pandas as pd

    from tests.support.report_text import rating_rows, report_data, three_systems
    from tsrate.robustness.report.ratings import rating_tables_section

    separation = pd.DataFrame(
        [("wrs_industry", "P1", "relative_max_abs_residual", False, "every system at 0"),
         ("wrs_company", "P1", "max_abs_residual", False, "every system at 0"),
         ("wrs_company", "P2", "max_abs_residual", False, "every system at 0")],
        columns=["metric", "perturbation_id", "outcome", "separates_systems",
                 "separation_reason"],
    )  # fmt: skip
    ratings = rating_rows(three_systems())
    ratings["rank"] = ratings.groupby(["metric", "perturbation_id"])["raw_score"].rank(method="min")
    data = report_data(
        ratings,
        separation=separation,
        default_outcome="relative_max_abs_residual",
    )
    html = rating_tables_section(data)
    assert "Robustness — the scale-free outcome: R^max divided by" in html
    assert "Robustness — the paper's outcome" not in html
    # one flag at the default outcome (the two at R^max belong to another view)
    flags = re.search(r'class="separation-summary">Flags at ([^:]*):.*?\(⊘\): <b>(\d+)</b>', html)
    assert flags.group(1) == "the default outcome relative_max_abs_residual"
    assert flags.group(2) == "1"
    # and the one ⊘ under a partial order is that one: WRS industry at P1
    assert html.count('class="flag no-separation"') == 1
    assert re.search(r"WRS industry ↑?↓? *</td><td>P1</td>(?:(?!</tr>).)*no-separation", html)
