"""The report end to end, its numbers against the marts: every printed number, flag and
reason equals its mart row in the published snapshot, the report flags every score and
rating its marts flag, and the comparison marts (group comparisons against an independent
computation, modality pairs on shared perturbations) were tested by dbt on the tiny
warehouse.

The study (tests/integration/report_study.py) runs the naive, random and biased systems on
four companies, relabelled in a copy of the project's systems seed so that every section has
something to show; the dbt build and the report are the real ones, built once per test
process.
"""

from __future__ import annotations

import json
import math
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.report_study import (
    RELABEL,
    built_report,
)
from tests.support.report_marts import (
    traced_elements,
    where_clause,
)
from tsrate.html.charts import chart_rows
from tsrate.robustness.report.render import (
    PAPER_OUTCOME,
    format_number,
    format_share,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reported(tmp_path_factory, session_parse):
    return built_report(tmp_path_factory, session_parse)


def _mart_value(con, item: dict) -> float:
    where = json.loads(item["data-where"])
    condition, params = where_clause(con, item["data-mart"], where)
    column = f'"{item["data-column"]}"'
    agg = item.get("data-agg", "")
    select = {
        "": column,
        "avg": f"avg({column})",
        "max": f"max({column})",
        "count_distinct": f"count(distinct {column})",
        "sum": f"sum({column})",
    }[agg]
    rows = con.execute(
        f"select {select} from {item['data-mart']} where {condition}", params
    ).fetchall()
    assert len(rows) == 1, f"{item['data-mart']} {where}: {len(rows)} rows"
    return float(rows[0][0])


def test_every_number_in_the_report_equals_its_mart_value(reported):
    html = reported["output"].read_text()
    traced = traced_elements(html)
    assert len(traced) > 300
    marts = {item["data-mart"] for item in traced} | {row["mart"] for row in chart_rows(html)}
    assert {
        "marts.ratings",
        "marts.system_summary",
        "marts.perturbation_summary",
        "marts.confounder_comparison",
        "marts.group_comparisons",
        "marts.modality_pairs",
        "marts.window_errors",
        "marts.rating_stability",
        "marts.forecast_traces",
        "marts.window_inputs",
    } <= marts
    plotted = chart_rows(html)  # every plotted number names its mart row too
    assert len(plotted) > 100
    assert {"marts.ratings", "marts.forecast_traces", "marts.window_inputs"} <= {
        row["mart"] for row in plotted
    }
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        for row in plotted:
            item = {"data-mart": row["mart"], "data-column": row["column"],
                    "data-where": row["where"], "data-agg": row.get("agg", "")}  # fmt: skip
            assert math.isclose(row["value"], _mart_value(con, item), rel_tol=1e-12), row
        for item in traced:
            expected = _mart_value(con, item)
            assert math.isclose(float(item["data-value"]), expected, rel_tol=1e-12), item
            if item["tag"] == "span":
                integer = (
                    item["data-column"]
                    in ("rating", "rating_levels", "paper_rating", "tsrate_rating")
                    or item.get("data-agg") == "count_distinct"
                )
                if item.get("data-format") == "percent":
                    assert item["text"] == format_share(expected), item
                else:
                    assert item["text"] == format_number(expected, integer), item
    finally:
        con.close()


def _flags(html: str, css: str) -> list[dict]:
    return [
        item
        for item in traced_elements(html, "data-text-mart")
        if item["tag"] == "em" and css in item["class"].split()
    ]


def test_every_flag_and_reason_in_the_report_equals_its_mart_row(reported):
    """Each flag's text is its mart's reason at data-where; its boolean (if any) is false."""
    html = reported["output"].read_text()
    flags = traced_elements(html, "data-text-mart")
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        for item in flags:
            condition, params = where_clause(
                con, item["data-text-mart"], json.loads(item["data-where"])
            )
            texts = con.execute(
                f'select distinct "{item["data-text-column"]}" from {item["data-text-mart"]} '
                f"where {condition}",
                params,
            ).fetchall()
            assert texts == [(item["text"],)], item
            if "data-mart" in item:  # the flag's boolean: false on every row it names
                assert item["data-mart"] == item["data-text-mart"]
                values = con.execute(
                    f'select distinct "{item["data-column"]}" from {item["data-mart"]} '
                    f"where {condition}",
                    params,
                ).fetchall()
                assert values == [(False,)], item
    finally:
        con.close()


def test_the_report_flags_every_score_and_rating_its_marts_flag(reported):
    """As many ⊘, ≈ and reason flags as the marts have rows for them, at each outcome (≈ left
    out of a row marked ⊘)."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        flat = con.execute(
            "select s.outcome, s.metric, s.perturbation_id from marts.robustness_scores s "
            "where not s.separates_systems and exists (select 1 from marts.ratings r where "
            "r.metric = s.metric and r.perturbation_id = s.perturbation_id "
            "and r.outcome = s.outcome) group by all"
        ).fetchall()
        # a row marked ⊘ (its score separates no system) says so once, not ≈ in every cell
        close = con.execute(
            "select r.outcome, r.metric, r.perturbation_id, r.system_id from marts.ratings r "
            "where r.separable = false and not exists (select 1 from marts.robustness_scores s "
            "where not s.separates_systems and s.metric = r.metric "
            "and s.perturbation_id = r.perturbation_id and s.outcome = r.outcome)"
        ).fetchall()
        reasons = con.execute(
            "select outcome, metric, perturbation_id, system_id from marts.ratings "
            "where rating_reason is not null"
        ).fetchall()
        outcomes = {
            o for (o,) in con.execute("select distinct outcome from marts.ratings").fetchall()
        }
    finally:
        con.close()
    assert outcomes == {
        None,
        PAPER_OUTCOME,
        "relative_max_abs_residual",
        "wql",
        "coverage_error_80",
    }
    html = reported["output"].read_text()

    def shown(css: str, columns: tuple[str, ...]) -> list[tuple]:
        wheres = [json.loads(item["data-where"]) for item in _flags(html, css)]
        # a reason every system of a row shares is said once, naming all of them: one per
        # system; flags without an outcome are at the paper's (or, for accuracy, none)
        wheres = [
            {**w, "system_id": system} if isinstance(w.get("system_id"), list) else w
            for w in wheres
            for system in (w["system_id"] if isinstance(w.get("system_id"), list) else [None])
        ]
        return sorted((w.get("outcome", PAPER_OUTCOME), *(w[c] for c in columns)) for w in wheres)

    def at(rows: list[tuple]) -> list[tuple]:
        return sorted((o or PAPER_OUTCOME, *rest) for o, *rest in rows)

    assert shown("no-separation", ("metric", "perturbation_id")) == at(flat)
    assert shown("not-separable", ("metric", "perturbation_id", "system_id")) == at(close)
    assert shown("rating-reason", ("metric", "perturbation_id", "system_id")) == at(reasons)
    # the tiny study has all three: WRS scores every system shares (all at the maximum),
    # APE/PIE scores within their spread over draws, and all-tied groups rated by the ideal
    assert flat and close and reasons, (len(flat), len(close), len(reasons))
    plain = re.sub(r"<[^>]+>", "", html)
    paper_flat = sum(o == PAPER_OUTCOME for o, *_ in flat)
    assert f"do not separate systems on this study (⊘): {paper_flat};" in plain
    assert "Robustness — the paper's outcome: R^max" in html.replace("&#x27;", "'")
    assert 'data-outcome="relative_max_abs_residual"' in html


def test_group_comparisons_match_an_independent_computation(reported):
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        summary = con.execute("select * from marts.system_summary").df()
        got = con.execute("select * from marts.group_comparisons").df()
    finally:
        con.close()
    labels = {
        "foundation": {"naive": "non-foundation", "random": "foundation", "biased": "foundation"},
        "modality": {"naive": "uni-modal", "random": "multi-modal", "biased": "uni-modal"},
        "purpose": {
            "naive": "time-series-specific",
            "random": "general-purpose",
            "biased": "time-series-specific",
        },
        "architecture": {"random": "decoder-only", "biased": "encoder-only"},
    }
    rows = []
    for scope, systems in (("all_systems", RELABEL), ("without_baselines", ["random", "biased"])):
        for comparison, mapping in labels.items():
            subset = summary[summary["system_id"].isin([s for s in systems if s in mapping])]
            subset = subset.assign(group_name=subset["system_id"].map(mapping))
            for (group, metric), frame in subset.groupby(["group_name", "metric"]):
                rows.append((scope, comparison, group, metric, frame["avg_raw_score"].mean()))
    expected = pd.DataFrame(
        rows, columns=["system_scope", "comparison", "group_name", "metric", "expected"]
    )
    merged = expected.merge(
        got, on=["system_scope", "comparison", "group_name", "metric"], how="outer"
    )
    assert len(merged) == len(expected) == len(got)
    np.testing.assert_allclose(merged["avg_raw_score"], merged["expected"], rtol=1e-12)


def test_dbt_tested_the_comparison_marts_on_the_tiny_warehouse(reported):
    """The fixture's dbt build ran the grain, not-null, accepted-values and unit tests.

    tsrate's build runs the models and unit tests in dbt (their run_results kept as
    build_run_results.json) and the data tests' compiled SQL in one connection
    (data_test_results.json)."""
    target = reported["root"] / "target"
    results = [
        *json.loads((target / "build_run_results.json").read_text())["results"],
        *json.loads((target / "data_test_results.json").read_text())["results"],
    ]
    tests = {
        r["unique_id"]: r["status"]
        for r in results
        if r["unique_id"].startswith(("test.", "unit_test."))
        and ("group_comparisons" in r["unique_id"] or "modality_pairs" in r["unique_id"])
    }
    assert len(tests) >= 15
    assert set(tests.values()) == {"pass"}
    assert any(u.startswith("unit_test.tsrate.group_comparisons.") for u in tests)
    assert any(u.startswith("unit_test.tsrate.modality_pairs.") for u in tests)


def test_modality_pairs_compare_the_variants_on_shared_perturbations(reported):
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        pairs = con.execute("select * from marts.modality_pairs order by metric").df()
        ratings = con.execute(
            "select metric, system_id, avg(raw_score) as score from marts.ratings "
            "where system_id in ('naive', 'random') and is_default_outcome group by all"
        ).df()
    finally:
        con.close()
    assert set(pairs["base_model"]) == {"demo"}
    assert (pairs["numeric_system_id"] == "naive").all()
    assert (pairs["multimodal_system_id"] == "random").all()
    scores = ratings.pivot(index="metric", columns="system_id", values="score")
    np.testing.assert_allclose(
        pairs.set_index("metric")["numeric_avg_raw_score"], scores.loc[pairs["metric"], "naive"]
    )
    np.testing.assert_allclose(
        pairs.set_index("metric")["multimodal_avg_raw_score"],
        scores.loc[pairs["metric"], "random"],
    )
