"""The report end to end: a tiny real study, built, published, reported, opened in Chromium.

The study runs the naive, random and biased systems on four companies. So that every
section of the report has something to show, the module works on a copy of the project
whose systems seed relabels them (random: a multi-modal general-purpose decoder-only
foundation model; biased: a time-series encoder-only foundation model; naive and random:
the numeric and numeric+image variants of one base model 'demo'). The systems themselves
run unchanged; the dbt build (with its data and unit tests of group_comparisons and
modality_pairs) and the report are the real ones.
"""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.browser import Chromium, decode_png, find_chromium
from tests.integration.builds import forecast_and_build
from tests.support.dbt_project import copy_project, seed_parse
from tests.support.warehouses import ingest, small_study
from tsrate import cli
from tsrate.config import project_dir
from tsrate.html.charts import PALETTE, chart_rows, page_specs
from tsrate.platform.publish import publish
from tsrate.robustness.report.render import (
    PAPER_OUTCOME,
    SHAKY_SHARE,
    TRACE_WINDOWS_PER_SYSTEM,
    format_number,
    format_share,
)

pytestmark = pytest.mark.slow

STUDY = small_study(
    systems=["naive", "random", "biased"], study_start="2022-09-01", context_length=30, horizon=5
)
#: what the report reads, and everything those marts need
REPORT_MARTS = (
    "+group_comparisons +modality_pairs +confounder_comparison +perturbation_summary "
    "+rating_stability +forecast_traces window_errors +window_inputs systems perturbations "
    "companies +paper_comparison +leaderboard"  # the verdict reads the leaderboard too
)
RELABEL = {
    # system_id: (modality, family, purpose, architecture, is_foundation_model, base_model)
    "naive": ("numeric", "baseline", "time-series", "statistical", "false", "demo"),
    "random": ("numeric+image", "foundation", "general-purpose", "decoder-only", "true", "demo"),
    "biased": ("numeric", "foundation", "time-series", "encoder-only", "true", ""),
}


def _relabel_seed(path: Path) -> None:
    seed = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = ["modality", "family", "purpose", "architecture", "is_foundation_model", "base_model"]
    for system_id, values in RELABEL.items():
        seed.loc[seed["system_id"] == system_id, columns] = values
    seed.to_csv(path, index=False)


@pytest.fixture(scope="module")
def reported(tmp_path_factory, session_parse):
    root = tmp_path_factory.mktemp("report")
    project = copy_project(root / "project")
    _relabel_seed(project / "seeds" / "systems.csv")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSRATE_PROJECT_DIR", str(project))
        warehouse = root / "warehouse" / "tsrate.duckdb"
        warehouse.parent.mkdir()
        ingest(warehouse, list(STUDY.tickers))
        # the session's parse: only the relabelled seed is parsed again
        target = seed_parse(session_parse, root / "target")
        run_id = forecast_and_build(warehouse, STUDY, target, select=REPORT_MARTS)
        snapshot = publish(warehouse, run_id).path
        output = root / "out" / "report.html"
        # the report reads the snapshot only: it must work with the live file gone
        hidden = warehouse.with_name("hidden.duckdb")
        warehouse.rename(hidden)
        try:
            code = cli.main(["report", "--snapshot", str(snapshot), "--output", str(output)])
        finally:
            hidden.rename(warehouse)
    assert code == 0
    return dict(
        root=root,
        project=project,
        warehouse=warehouse,
        snapshot=snapshot,
        output=output,
        run_id=run_id,
    )


class _Traced(HTMLParser):
    """Every element carrying data-mart (or data-text-mart: a flag whose text is a mart's
    text column), with its text (spans and flags) — in the HTML and its SVG."""

    def __init__(self, key: str = "data-mart") -> None:
        super().__init__()
        self.key = key
        self.found: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.key in attrs:
            item = {"tag": tag, **attrs, "text": ""}
            self.found.append(item)
            self._open = item if tag in ("span", "em") else None

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data

    def handle_endtag(self, tag):
        if tag in ("span", "em"):
            self._open = None


def _traced(html: str, key: str = "data-mart") -> list[dict]:
    parser = _Traced(key)
    parser.feed(html)
    return parser.found


def _outcome_clause(con, mart: str, alias: str) -> str:
    """`` and (alias.outcome is null or ... = 'max_abs_residual')`` when ``mart`` has one."""
    has = con.execute(
        "select count(*) from duckdb_columns() where schema_name = 'marts' and table_name = ? "
        "and column_name = 'outcome'",
        [mart],
    ).fetchone()[0]
    return f" and ({alias}.outcome is null or {alias}.outcome = '{PAPER_OUTCOME}')" if has else ""


def _where(con, mart: str, where: dict) -> tuple[str, list]:
    """SQL conditions and parameters for a data-where (at the paper's outcome unless named)."""
    clauses, params = [], []
    for column, value in where.items():
        if value is None:
            clauses.append(f'"{column}" is null')
        elif isinstance(value, list):
            clauses.append(f'"{column}" in ({", ".join("?" for _ in value)})')
            params.extend(value)
        else:
            clauses.append(f'"{column}" = ?')
            params.append(value)
    outcome = con.execute(
        "select count(*) from duckdb_columns() where schema_name = 'marts' and table_name = ? "
        "and column_name = 'outcome'",
        [mart.split(".")[1]],
    ).fetchone()[0]
    if outcome and "outcome" not in where:  # the report reads the paper's outcome
        clauses.append("(outcome is null or outcome = ?)")
        params.append(PAPER_OUTCOME)
    return " and ".join(clauses), params


def _mart_value(con, item: dict) -> float:
    where = json.loads(item["data-where"])
    condition, params = _where(con, item["data-mart"], where)
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
    traced = _traced(html)
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


def test_report_has_every_section_and_its_charts_as_vega_lite_specs(reported):
    html = reported["output"].read_text()
    for heading in (
        "This study and the paper's",
        "in the shape of Table 2",
        "in the shape of Tables 5–6",
        "The paper's printed numbers beside this run's",
        "Reading the results",
        "The study",
        "Table 2",
        "Tables 5–6",
        "Figures 5–6",
        "Figure 4",
        "Figures 7–9",
        "Figure 8",
        "Forecasts beside actuals",
    ):
        assert heading in html, heading
    plain = re.sub(r"<[^>]+>", "", html)
    # seed rows without an implementation are listed as not runnable, with the seed's reason
    seed = pd.read_csv(project_dir() / "seeds" / "systems.csv", dtype=str, keep_default_na=False)
    for row in seed[seed["implementation"] == ""].itertuples():
        assert f"{row.system_id} ({row.display_name})" in plain
    # random is relabelled multi-modal here, so P4-P6 are simply not in the study
    assert "P4Centre pixel black" in plain and "not in this study" in plain
    charts = sorted((reported["output"].parent / "report-charts").glob("*.vl.json"))
    names = {chart.name.removesuffix(".vl.json") for chart in charts}
    assert {
        "radar-robustness-p1",
        "radar-robustness-average",
        "radar-accuracy-p0",
        "radar-accuracy-average",
        "confounders-wrs",
        "confounders-ape",
        "confounders-pie",
        "groups-all-systems-foundation",
        "groups-all-systems-modality",
        "groups-all-systems-purpose",
        "groups-all-systems-architecture",
        "modality-pair-demo",
    } <= names
    forecasts = [n for n in names if n.startswith("forecast-")]
    assert len(forecasts) == TRACE_WINDOWS_PER_SYSTEM * len(STUDY.systems)
    specs = page_specs(html)
    assert set(specs) == names  # each spec file is the page's own chart
    for chart in charts:
        assert json.loads(chart.read_text()) == specs[chart.name.removesuffix(".vl.json")]
    assert not re.search(r"(src|href)=\"https?:", html)


def test_forecast_traces_are_published_and_match_window_errors(reported):
    """The mart holds every forecast step beside its actual; tsrate publish carries it."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        kind = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'marts' "
            "and table_name = 'forecast_traces'"
        ).fetchone()[0]
        traces = con.execute("select * from marts.forecast_traces").df()
        errors = con.execute("select * from marts.window_errors").df()
    finally:
        con.close()
    assert kind == 1  # a table in the snapshot (a view in the live warehouse)
    keys = ["system_id", "ticker", "window_end_date", "perturbation_id"]
    assert len(traces) == len(errors) * STUDY.horizon
    assert not traces.duplicated([*keys, "horizon_step"]).any()
    np.testing.assert_allclose(traces["residual"], traces["forecast"] - traces["actual"])
    per_window = traces.assign(abs_residual=traces["residual"].abs()).groupby(keys)
    merged = errors.merge(per_window["abs_residual"].max().rename("rmax").reset_index(), on=keys)
    assert len(merged) == len(errors)
    np.testing.assert_allclose(merged["rmax"], merged["max_abs_residual"], rtol=1e-12)
    # the consensus is the median over systems at each step (numpy, independently)
    step = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    median = traces.groupby(step)["forecast"].transform(lambda f: np.median(f.to_numpy()))
    np.testing.assert_allclose(traces["consensus_forecast"], median, rtol=1e-12)
    assert (traces["n_systems"] == traces.groupby(step)["forecast"].transform("count")).all()


def test_forecast_plots_show_where_each_system_strays_most(reported):
    """The plotted windows follow the stated rule, recomputed here from the snapshot."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        traces = con.execute("select * from marts.forecast_traces").df()
    finally:
        con.close()
    traces["dev"] = (traces["forecast"] - traces["consensus_forecast"]).abs() / traces["actual"]
    cells = ["ticker", "window_end_date", "perturbation_id"]
    scores = traces.groupby(["system_id", *cells])["dev"].mean().reset_index()
    taken, expected = set(), []
    for system in STUDY.systems:
        mine = scores[scores["system_id"] == system].sort_values(
            ["dev", *cells], ascending=[False, True, True, True]
        )
        picked = [
            c
            for c in zip(
                mine["ticker"], mine["window_end_date"], mine["perturbation_id"], strict=True
            )
            if c not in taken
        ][:TRACE_WINDOWS_PER_SYSTEM]
        taken.update(picked)
        expected += [(system, *c) for c in picked]
    html = reported["output"].read_text()
    shown = re.findall(
        r'data-chart="forecast-([a-z]+)-(\d{4}-\d{2}-\d{2})-(p\d)".*?'
        r"Chosen for <b>([^<]+)</b>",
        html,
        flags=re.S,
    )
    assert [(s, t.upper(), d, p.upper()) for t, d, p, s in shown] == [
        (s, t, f"{pd.Timestamp(d):%Y-%m-%d}", p) for s, t, d, p in expected
    ]


def test_every_rating_shows_its_stability_and_the_shaky_ones_are_counted(reported):
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        at_paper_outcome = {  # robustness marts may carry an outcome: the report reads R^max
            mart: _outcome_clause(con, mart, alias)
            for mart, alias in (("ratings", "r"), ("rating_stability", "s"))
        }
        at_rating = con.execute(
            "select s.metric, s.perturbation_id, s.system_id, s.share from marts.rating_stability s "
            "join marts.ratings r using (run_id, metric, perturbation_id, system_id) "
            "where s.rating_level = r.rating" + "".join(at_paper_outcome.values())
        ).df()
        n_ratings = con.execute(
            "select count(*) from marts.ratings r where true" + at_paper_outcome["ratings"]
        ).fetchone()[0]
    finally:
        con.close()
    assert len(at_rating) == n_ratings
    html = reported["output"].read_text()
    shares = [
        item for item in _traced(html)
        if item["data-mart"] == "marts.rating_stability" and item["data-column"] == "share"
    ]  # fmt: skip
    assert len(shares) == n_ratings
    shaky = int((at_rating["share"] < SHAKY_SHARE).sum())
    assert html.count('class="share shaky"') == shaky
    plain = re.sub(r"<[^>]+>", "", html)
    assert f"{shaky} of {n_ratings} ratings are shaky" in plain


def _flags(html: str, css: str) -> list[dict]:
    return [
        item
        for item in _traced(html, "data-text-mart")
        if item["tag"] == "em" and css in item["class"].split()
    ]


def test_every_flag_and_reason_in_the_report_equals_its_mart_row(reported):
    """Each flag's text is its mart's reason at data-where; its boolean (if any) is false."""
    html = reported["output"].read_text()
    flags = _traced(html, "data-text-mart")
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        for item in flags:
            condition, params = _where(con, item["data-text-mart"], json.loads(item["data-where"]))
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
    """As many ⊘, ≈ and reason flags as the marts have rows for them, at each outcome."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        flat = con.execute(
            "select s.outcome, s.metric, s.perturbation_id from marts.robustness_scores s "
            "where not s.separates_systems and exists (select 1 from marts.ratings r where "
            "r.metric = s.metric and r.perturbation_id = s.perturbation_id "
            "and r.outcome = s.outcome) group by all"
        ).fetchall()
        close = con.execute(
            "select outcome, metric, perturbation_id, system_id from marts.ratings "
            "where separable = false"
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
        # flags without an outcome are at the paper's (or, for accuracy, none)
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


def test_documented_arq_queries_run_on_the_snapshot(reported):
    readme = (project_dir() / "docs" / "ratings.md").read_text()
    blocks = [b for b in re.findall(r"```sql\n(.*?)```", readme, flags=re.S) if "ARQ" in b]
    statements = [
        s.strip()
        for block in blocks
        for s in re.sub(r"--[^\n]*", "", block).split(";")
        if s.strip()
    ]
    assert len(statements) >= 4
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        for statement in statements:
            assert len(con.execute(statement).df()) > 0, statement
    finally:
        con.close()


def test_marts_carry_their_descriptions_into_the_snapshot(reported):
    """persist_docs: BI tools read the YAML descriptions as DuckDB comments."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        table = con.execute(
            "select comment from duckdb_tables() where schema_name = 'marts' "
            "and table_name = 'group_comparisons'"
        ).fetchone()[0]
        columns = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() where schema_name = 'marts' "
                "and table_name = 'modality_pairs'"
            ).fetchall()
        )
    finally:
        con.close()
    assert table.startswith("ARQ1-ARQ3 of the paper") and "One row per run" in table
    assert columns["better_variant"].startswith("'numeric', 'numeric+image' or 'tie'")


def test_every_documented_column_of_the_core_models_carries_its_comment(reported):
    """persist_docs writes each YAML column description as a DuckDB comment on every core
    staging view, intermediate view and mart of the live warehouse (tsrate overrides
    dbt-duckdb's column-comment macro to skip a second catalog query: nothing may be lost)."""
    import yaml

    expected = {}
    for folder in ("staging", "intermediate", "marts"):
        for path in (project_dir() / "models" / folder).glob("*.yml"):
            for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
                for column in model.get("columns", []):
                    if column.get("description"):
                        expected[(folder, model["name"], column["name"])] = " ".join(
                            column["description"].split()
                        )
    assert len(expected) > 300
    con = duckdb.connect(str(reported["warehouse"]), read_only=True)
    try:
        stored = {
            (schema, table, column): " ".join((comment or "").split())
            for schema, table, column, comment in con.execute(
                "select schema_name, table_name, column_name, comment from duckdb_columns() "
                "where schema_name in ('staging', 'intermediate', 'marts')"
            ).fetchall()
        }
    finally:
        con.close()
    built = {(schema, table) for schema, table, _ in stored}
    present = {key: text for key, text in expected.items() if key[:2] in built}
    assert len({key[:2] for key in present}) >= 20, "the report's marts and their parents"
    absent = sorted(key for key in present if key not in stored)
    assert not absent, f"documented columns missing from built models: {absent[:5]}"
    missing = {key: text for key, text in present.items() if stored[key] != text}
    assert not missing, list(missing.items())[:5]


def test_docs_site_documents_the_marts_and_the_report_exposure(reported, monkeypatch):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(reported["project"]))
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(reported["warehouse"]))
    site = reported["root"] / "docs"
    assert cli.main(["docs", "--output", str(site)]) == 0
    assert (site / "static_index.html").stat().st_size > 100_000
    manifest = json.loads((site / "manifest.json").read_text())
    exposure = manifest["exposures"]["exposure.tsrate.rating_report"]
    assert {"model.tsrate.group_comparisons", "model.tsrate.modality_pairs"} <= set(
        exposure["depends_on"]["nodes"]
    )
    catalog = json.loads((site / "catalog.json").read_text())
    columns = catalog["nodes"]["model.tsrate.group_comparisons"]["columns"]
    assert columns["avg_raw_score"]["type"].upper() == "DOUBLE"


def test_report_without_a_snapshot_fails_clearly_and_writes_nothing(tmp_path, capsys):
    output = tmp_path / "report.html"
    missing = tmp_path / "published" / "tsrate.duckdb"
    code = cli.main(["report", "--snapshot", str(missing), "--output", str(output)])
    assert code == 2
    assert f"no published snapshot at {missing}" in capsys.readouterr().err
    assert not output.exists()


# ----------------------------------------------------------------------------- browser

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary (install Debian's chromium: apt-get install chromium, "
    "or set TSRATE_CHROMIUM); .ci/run tries to install it",
)


def _palette_pixels(image: np.ndarray, colour: str, tolerance: int = 12) -> int:
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(image.astype(int) - rgb).max(axis=2) <= tolerance).sum())


@needs_chromium
def test_report_renders_in_chromium_without_console_errors(reported):
    html_text = reported["output"].read_text()
    n_specs = len(page_specs(html_text))
    with Chromium(CHROMIUM) as browser:
        browser.open(reported["output"].as_uri())
        charts = browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
            "window.tsrateCharts"
        )
        boxes = browser.evaluate(
            "Array.from(document.querySelectorAll('.vega-chart svg')).map(svg => {"
            " const r = svg.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })"
        )
        height = browser.evaluate("document.documentElement.scrollHeight")
        page = browser.screenshot({"x": 0, "y": 0, "width": 1300, "height": height})
        (reported["root"] / "report.png").write_bytes(page)  # for a person to look at
        shots = [
            decode_png(browser.screenshot({"x": x, "y": y, "width": w, "height": h}))
            for x, y, w, h in (boxes[0], boxes[-1])
        ]
        stability = browser.evaluate(
            "(() => { const all = Array.from(document.querySelectorAll('#ratings .share'));"
            " const shaky = all.filter(e => e.classList.contains('shaky'));"
            " const visible = all.filter(e => e.getBoundingClientRect().width > 0);"
            " return [all.length, visible.length, shaky.length,"
            " shaky.length ? getComputedStyle(shaky[0]).backgroundColor : ''];"
            " })()"
        )
        flags = browser.evaluate(
            "Array.from(document.querySelectorAll('#ratings em.flag')).map(e => {"
            " const r = e.getBoundingClientRect(); return [r.width, r.height,"
            " getComputedStyle(e).backgroundColor]; })"
        )
        plots = browser.evaluate(
            "Array.from(document.querySelectorAll('#forecasts .vega-chart svg')).map(svg => {"
            " const r = svg.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height,"
            " svg.querySelectorAll('.mark-line path').length]; })"
        )
        x, y, w, h, _ = plots[0]
        plot = decode_png(browser.screenshot({"x": x, "y": y, "width": w, "height": h}))
        width = browser.evaluate("document.documentElement.scrollWidth")
        errors = browser.errors()
        network = browser.network_requests()
    assert errors == []
    assert network == []  # the libraries are inlined: nothing is fetched
    assert charts["failed"] == [] and charts["rendered"] == charts["total"] == n_specs
    assert len(boxes) == n_specs  # every spec became an SVG
    assert width <= 1300
    assert len(flags) == len(_traced(html_text, "data-text-mart"))
    assert flags and all(w > 20 and h > 5 for w, h, _ in flags)  # every flag on screen
    assert all(bg != "rgba(0, 0, 0, 0)" for _, _, bg in flags)  # and highlighted
    n_ratings = html_text.count('data-column="share"')
    assert stability[0] == stability[1] == n_ratings  # every rating's share is on screen
    if stability[2]:
        assert stability[3] == "rgb(255, 225, 179)"  # shaky ones are highlighted
    assert len(plots) == TRACE_WINDOWS_PER_SYSTEM * len(STUDY.systems)
    assert all(w > 300 and h > 200 and lines >= 3 for _, _, w, h, lines in plots)
    assert len(np.unique(plot.reshape(-1, 3), axis=0)) > 20
    assert _palette_pixels(plot, "#222222", tolerance=20) > 30  # the actual series
    assert all(w > 200 and h > 150 for _, _, w, h in boxes)
    for image in shots:
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 20  # not blank
        assert _palette_pixels(image, PALETTE[0]) > 50  # the first series' colour is drawn
        assert _palette_pixels(image, PALETTE[1]) > 50


@needs_chromium
def test_the_verdict_numbers_equal_the_marts(reported):
    """The verdict's best and worst system, their gap and the shaky counts, recomputed
    from the snapshot (pandas), and the verdict is the first section on screen."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        summary = con.execute("select * from marts.system_summary").df()
        board = con.execute("select * from marts.leaderboard where scope = 'all'").df()
        judged = con.execute(
            "select r.system_id, s.share from marts.ratings r join marts.rating_stability s "
            "using (run_id, metric, perturbation_id, system_id) where s.rating_level = r.rating"
            + _outcome_clause(con, "ratings", "r")
            + _outcome_clause(con, "rating_stability", "s")
        ).df()
    finally:
        con.close()
    robust = summary[summary["metric"].str.startswith(("wrs", "ape", "pie"))]
    means = robust.groupby("system_id")["avg_rating"].mean().sort_values(kind="stable")
    # systems with the best (worst) mean are named together: a tie
    leaders = [s for s in means.index if math.isclose(means[s], means.iloc[0], abs_tol=1e-9)]
    laggards = [s for s in means.index if math.isclose(means[s], means.iloc[-1], abs_tol=1e-9)]
    leader = judged[judged["system_id"].isin(leaders)]
    expected = {
        "robustness_gap": means.iloc[-1] - means.iloc[0],
        "leader_shaky": float((leader["share"] < SHAKY_SHARE).sum()),
        "leader_ratings": float(len(leader)),
        "shaky": float((judged["share"] < SHAKY_SHARE).sum()),
        "ratings": float(len(judged)),
    }
    with Chromium(CHROMIUM) as browser:
        browser.open(reported["output"].as_uri())
        shown = browser.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('#verdict .derived'))"
            ".map(e => [e.dataset.derived, parseFloat(e.dataset.value)]))"
        )
        text = browser.evaluate("document.querySelector('#verdict .verdict').innerText")
        first = browser.evaluate("document.querySelector('section').id")
    assert first == "verdict"
    assert shown.keys() == expected.keys()
    for name, value in expected.items():
        assert math.isclose(shown[name], value, rel_tol=1e-9), name
    for names, single, tied in ((leaders, "is the most robust", "tie as the most robust"),
                                (laggards, "the least", "tie as the least")):  # fmt: skip
        if len(names) == 1:
            assert f"{names[0]} {single}" in text
        else:
            assert all(name in text.split(tied)[0] for name in names) and tied in text
    # the lowest mean SMAPE and MASE against their runner-up, by the leaderboard's intervals
    for metric, label in (("smape", "SMAPE"), ("mase", "MASE")):
        rows = summary[summary["metric"] == metric].dropna(subset=["avg_raw_score"])
        top, runner = rows.sort_values(["avg_raw_score", "system_id"])["system_id"][:2]
        bounds = board[board["metric"] == metric].set_index("system_id")
        columns = ["skill_score_lower", "skill_score_upper"]
        if not {top, runner} <= set(bounds.index) or bounds.loc[[top, runner], columns].isna().any(
            axis=None
        ):  # no interval to compare: the verdict must not claim a separation
            assert f"{label} skill scores" not in text, (metric, bounds)
            continue
        (a_low, a_high), (b_low, b_high) = (
            bounds.loc[s, columns].astype(float) for s in (top, runner)
        )
        clause = (
            "clearly ahead of" if a_low > b_high
            else "yet the leaderboard ranks" if b_low > a_high
            else "but not separably from"
        )  # fmt: skip
        lead = "By accuracy," if metric == "smape" else f"By {label},"
        sentence = text[text.index(lead) :].split(". ")[0]
        assert top in sentence.split("lowest")[0] and f"{clause} {runner}" in sentence, sentence


@needs_chromium
def test_the_browser_check_sees_errors_when_there_are_some(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    with Chromium(CHROMIUM) as browser:
        browser.open(page.as_uri())
        errors = browser.errors()
    assert any("undefinedFunction" in error for error in errors)


def test_seeds_carry_their_yaml_descriptions_as_comments(reported):
    """persist_docs on seeds: every documented seed column is commented, live and published."""
    import yaml

    expected = {}
    for path in (project_dir() / "seeds").glob("*.yml"):
        for seed in (yaml.safe_load(path.read_text()) or {}).get("seeds", []):
            for column in seed.get("columns", []):
                if column.get("description"):
                    expected[(seed["name"], column["name"])] = " ".join(
                        column["description"].split()
                    )
    assert expected
    for database in (reported["warehouse"], reported["snapshot"]):
        con = duckdb.connect(str(database), read_only=True)
        try:
            stored = {
                (table, column): " ".join((comment or "").split())
                for table, column, comment in con.execute(
                    "select table_name, column_name, comment from duckdb_columns() "
                    "where schema_name = 'seeds'"
                ).fetchall()
            }
        finally:
            con.close()
        present = {key: text for key, text in expected.items() if key in stored}
        assert {"systems", "perturbations", "companies"} <= {table for table, _ in present}
        assert {key: stored[key] for key in present} == present, database
