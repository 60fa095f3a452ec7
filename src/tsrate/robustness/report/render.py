"""The rating report: one self-contained HTML file read from the published snapshot.

``tsrate report`` (and the last step of ``tsrate run``) reads the read-only snapshot
(``warehouse/published/tsrate.duckdb``), never the live warehouse, and writes
``report.html`` beside it plus every chart as an ``.svg`` file in ``report-charts/``.
The page works offline: no CDN, no fonts or images to fetch; charts are inline SVG drawn
by :mod:`tsrate.html.svg` (each is its own static fallback) and a few lines of inline script
only toggle series when a legend entry is clicked.

Traceability: every number printed in the report is a ``<span class="num">`` (and every
plotted point an SVG element) carrying ``data-mart`` (``marts.<name>``), ``data-column``,
``data-where`` (JSON equality filters; a list means IN) and ``data-value`` (the full
value); ``data-agg="avg"`` marks a plain mean over the matching rows. The integration
test re-reads each one from the snapshot. A note under every table and chart names its mart.
Flags (a score that does not separate systems, a rating not separable within its spread over
treatment draws, a rating's reason) are ``<em class="flag">`` elements whose text is the mart
text column ``data-text-column`` of ``data-text-mart`` at ``data-where``.

Loading (:func:`load_report_data`) is separate from rendering (:func:`build_report`, pure
over DataFrames) so the builders are unit-tested on small frames.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.html.svg import Line, Point, Series, bar_chart, colour_for, esc, line_chart, radar_chart
from tsrate.robustness.report.probabilistic import (
    leaderboard_section,
    probabilistic_section,
    provenance_section,
)

REPORT_NAME = "report.html"
ROBUSTNESS_METRICS = (
    "wrs_industry",
    "wrs_company",
    "ape_industry",
    "ape_company",
    "pie_industry",
    "pie_company",
)
ACCURACY_METRICS = ("smape", "mase", "sign_accuracy")
METRIC_LABELS = {
    "wrs_industry": "WRS industry",
    "wrs_company": "WRS company",
    "ape_industry": "APE industry",
    "ape_company": "APE company",
    "pie_industry": "PIE % industry",
    "pie_company": "PIE % company",
    "smape": "SMAPE",
    "mase": "MASE",
    "sign_accuracy": "Sign accuracy %",
}
METRIC_NOTES = {
    "wrs": "statistical bias (RQ1): weighted rejection score, sum over pairs of groups",
    "ape": "perturbation effect (RQ3): worst-case |APE_m| over confounder distributions, price units",
    "pie": "confounding bias (RQ2): worst-case PIE % over confounder distributions",
    "smape": "symmetric MAPE, eq. 4, 0-2 scale",
    "mase": "mean |error| / mean absolute one-step change of the clean context",
    "sign_accuracy": "% of steps whose direction matches; higher is better",
}
COMPARISONS = {
    "foundation": ("ARQ1 · Foundation vs non-foundation (Figure 7, right)", "is_foundation_model"),
    "modality": ("ARQ2 · Uni-modal vs multi-modal (Figure 7, left)", "modality"),
    "purpose": ("ARQ3 · Time-series-specific vs general-purpose (Figure 9, left)", "purpose"),
    "architecture": (
        "ARQ3 · Encoder-only vs decoder-only vs encoder-decoder (Figure 9, right)",
        "architecture",
    ),
}
SCOPES = {
    "all_systems": "all rated systems",
    "without_baselines": "without the baselines (families in var baseline_families), as in the paper",
}


#: marts the report reads; a snapshot lacking one of the first four cannot make a report.
def _default_outcome(frame: pd.DataFrame) -> pd.DataFrame:
    """The paper's view of a mart that carries an ``outcome`` (rows with is_default_outcome)."""
    if "is_default_outcome" not in frame.columns:
        return frame
    return frame.loc[frame["is_default_outcome"].astype(bool)].reset_index(drop=True)


REQUIRED_MARTS = ("ratings", "system_summary", "perturbation_summary", "confounder_comparison")
OPTIONAL_MARTS = ("group_comparisons", "modality_pairs", "rating_stability", "forecast_traces")
#: the paper's robustness outcome (R^max); marts with an ``outcome`` column are read at it
PAPER_OUTCOME = "max_abs_residual"
#: how the report names each robustness outcome (window_errors columns)
OUTCOME_LABELS = {
    "max_abs_residual": "the paper's outcome: R^max, the largest |forecast − actual| of a "
    "window, in price units",
    "relative_max_abs_residual": "the scale-free outcome: R^max divided by the window's last "
    "clean context value",
}
#: a rating is shaky when fewer resamples than this share give it its published level
SHAKY_SHARE = 0.6
#: forecast plots: windows shown per system (see choose_trace_windows)
TRACE_WINDOWS_PER_SYSTEM = 2


@dataclasses.dataclass
class ReportData:
    """Everything the report shows, read from one snapshot (one run)."""

    run_id: str
    published_at: str
    study: dict
    ratings: pd.DataFrame
    system_summary: pd.DataFrame
    perturbation_summary: pd.DataFrame
    confounder_comparison: pd.DataFrame
    group_comparisons: pd.DataFrame
    modality_pairs: pd.DataFrame
    systems: pd.DataFrame
    perturbations: pd.DataFrame
    companies: pd.DataFrame
    windows: pd.DataFrame
    missing_marts: list[str] = dataclasses.field(default_factory=list)
    snapshot_name: str = "tsrate.duckdb"
    #: rating_stability at each published rating: metric, perturbation_id, system_id, rating,
    #: share, ci_low, ci_high, n_valid, n_resamples, confidence (empty: no such mart)
    stability: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: the windows chosen for forecast plots (choose_trace_windows), their forecast_traces
    #: rows (every system) and their context tails from window_inputs
    trace_windows: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    traces: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    contexts: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: robustness_scores, one row per metric x perturbation x outcome: separates_systems and
    #: separation_reason (every outcome; empty: a snapshot without them)
    separation: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: marts.ratings at the robustness outcomes other than the paper's (the scale-free one)
    outcome_ratings: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: marts.probabilistic_scores and marts.leaderboard (empty: a snapshot without them)
    probabilistic_scores: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    leaderboard: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    run_provenance: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)


@dataclasses.dataclass(frozen=True)
class Report:
    html: str
    charts: dict[str, str]


@dataclasses.dataclass(frozen=True)
class ReportResult:
    path: Path
    charts_dir: Path
    run_id: str
    n_charts: int


# --------------------------------------------------------------------------- loading


def default_report_path(snapshot: Path) -> Path:
    """``report.html`` beside the snapshot (override with ``TSRATE_REPORT``)."""
    override = os.environ.get("TSRATE_REPORT")
    return Path(override) if override else Path(snapshot).parent / REPORT_NAME


def load_report_data(snapshot: Path) -> ReportData:
    """Read the marts and seeds of the published ``snapshot`` (read-only)."""
    snapshot = Path(snapshot)
    if not snapshot.exists():
        raise TsrateError(
            f"no published snapshot at {snapshot}: finish a `tsrate run` (or `tsrate build` "
            "and publish) before `tsrate report`"
        )
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        tables = {
            f"{schema}.{name}"
            for schema, name in con.execute(
                "select schema_name, table_name from duckdb_tables()"
            ).fetchall()
        }
        missing = [m for m in REQUIRED_MARTS if f"marts.{m}" not in tables]
        if missing or "main.published_runs" not in tables:
            raise TsrateError(
                f"{snapshot} is not a complete tsrate snapshot: missing "
                f"{[f'marts.{m}' for m in missing] or ['published_runs']}"
            )
        run_id, published_at, study = con.execute(
            "select run_id, cast(published_at as varchar), cast(study as varchar) "
            # suite publications (tsrate.suites.publishing) carry no study: skip them
            "from published_runs where study is not null order by published_at desc limit 1"
        ).fetchone()

        def mart(
            name: str, sql: str = "select * from marts.{name} where run_id = ?"
        ) -> pd.DataFrame:
            """The run's rows; at the paper's outcome when the mart has an outcome column."""
            if f"marts.{name}" not in tables:
                return pd.DataFrame()
            query, params = sql.format(name=name), [run_id]
            if _has_column(con, name, "outcome"):
                query += " and (outcome is null or outcome = ?)"
                params.append(PAPER_OUTCOME)
            return con.execute(query, params).df()

        def seed(name: str) -> pd.DataFrame:
            if f"seeds.{name}" not in tables:
                return pd.DataFrame()
            return con.execute(f"select * from seeds.{name}").df()

        def systems() -> pd.DataFrame:
            """The seed plus systems registered by import --metadata (marts.system_catalog;
            snapshots published before that mart existed have the seed only)."""
            if "marts.system_catalog" in tables:
                return con.execute("select * from marts.system_catalog").df()
            return seed("systems")

        windows = pd.DataFrame(columns=["ticker", "n_windows", "first_window", "last_window"])
        if "marts.window_errors" in tables:
            windows = con.execute(
                "select ticker, count(distinct window_end_date) as n_windows, "
                "cast(min(window_end_date) as varchar) as first_window, "
                "cast(max(window_end_date) as varchar) as last_window "
                "from marts.window_errors where run_id = ? group by ticker order by ticker",
                [run_id],
            ).df()
        stability = mart(
            "rating_stability",
            "select metric, perturbation_id, system_id, rating, share, ci_low, ci_high, "
            "n_valid, n_resamples, confidence from marts.{name} "
            "where run_id = ? and rating_level = rating",
        )
        trace_windows, traces, contexts = _load_traces(
            con, tables, run_id, json.loads(study or "{}")
        )
        separation = pd.DataFrame()
        if "marts.robustness_scores" in tables and _has_column(
            con, "robustness_scores", "separates_systems"
        ):
            # the flag and its reason are the same on every row of the group
            separation = con.execute(
                "select metric, perturbation_id, outcome, "
                "bool_and(separates_systems) as separates_systems, "
                "min(separation_reason) as separation_reason "
                "from marts.robustness_scores where run_id = ? group by all",
                [run_id],
            ).df()
        outcome_ratings = pd.DataFrame()
        if _has_column(con, "ratings", "outcome"):
            outcome_ratings = con.execute(
                "select * from marts.ratings where run_id = ? and outcome is not null "
                "and outcome <> ? order by outcome, metric, perturbation_id, system_id",
                [run_id, PAPER_OUTCOME],
            ).df()
        return ReportData(
            run_id=run_id,
            published_at=published_at,
            study=json.loads(study) if study else {},
            ratings=_default_outcome(mart("ratings")),
            system_summary=mart("system_summary"),
            perturbation_summary=mart("perturbation_summary"),
            confounder_comparison=mart("confounder_comparison"),
            group_comparisons=mart("group_comparisons"),
            modality_pairs=mart("modality_pairs"),
            systems=systems(),
            perturbations=seed("perturbations"),
            companies=seed("companies"),
            windows=windows,
            missing_marts=[m for m in OPTIONAL_MARTS if f"marts.{m}" not in tables],
            snapshot_name=snapshot.name,
            stability=stability,
            trace_windows=trace_windows,
            traces=traces,
            contexts=contexts,
            separation=separation,
            outcome_ratings=outcome_ratings,
            probabilistic_scores=mart("probabilistic_scores"),
            leaderboard=mart("leaderboard"),
            run_provenance=mart("run_provenance"),
        )
    finally:
        con.close()


def _has_column(con: duckdb.DuckDBPyConnection, mart: str, column: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_columns() where schema_name = 'marts' "
            "and table_name = ? and column_name = ?",
            [mart, column],
        ).fetchone()[0]
    )


def context_tail_length(context_length: int, horizon: int) -> int:
    """Context values drawn before a forecast: 3 horizons, at most the whole context."""
    return max(1, min(int(context_length), 3 * int(horizon)))


def _load_traces(
    con: duckdb.DuckDBPyConnection, tables: set[str], run_id: str, study: dict
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The windows to plot, their forecasts (every system) and their context tails."""
    empty = pd.DataFrame()
    if "marts.forecast_traces" not in tables:
        return empty, empty, empty
    scores = con.execute(
        "select system_id, ticker, window_end_date, perturbation_id, "
        "avg(abs(forecast - consensus_forecast) / abs(actual)) as disagreement "
        "from marts.forecast_traces where run_id = ? and n_systems >= 2 group by all",
        [run_id],
    ).df()
    systems = list(dict.fromkeys(study.get("systems", []))) or sorted(set(scores["system_id"]))
    chosen = choose_trace_windows(scores, systems)
    if chosen.empty:
        return chosen, empty, empty
    cells = chosen[["ticker", "window_end_date", "perturbation_id"]]
    con.register("report_trace_cells", cells)
    try:
        traces = con.execute(
            "select t.* from marts.forecast_traces t join report_trace_cells c "
            "using (ticker, window_end_date, perturbation_id) where t.run_id = ? "
            "order by t.ticker, t.window_end_date, t.perturbation_id, t.system_id, t.horizon_step",
            [run_id],
        ).df()
        contexts = empty
        if "marts.window_inputs" in tables:
            context_length = int(study.get("context_length", 0) or 0)
            tail = context_tail_length(context_length, int(study.get("horizon", 1) or 1))
            contexts = con.execute(
                "select w.ticker, w.window_end_date, w.perturbation_id, w.context_step, "
                "w.price_date, w.clean_value, w.input_value from marts.window_inputs w "
                "join report_trace_cells c using (ticker, window_end_date, perturbation_id) "
                "where w.run_id = ? and w.context_step > ? "
                "order by w.ticker, w.window_end_date, w.perturbation_id, w.context_step",
                [run_id, context_length - tail],
            ).df()
    finally:
        con.unregister("report_trace_cells")
    return chosen, traces, contexts


def write_report(snapshot: Path, output: Path | None = None) -> ReportResult:
    """Build the report from ``snapshot`` and write it (and the SVG files) atomically.

    The HTML is written to a temporary file and renamed over ``output``, so a reader
    never sees half a report; chart files go to ``<output stem>-charts/``.
    """
    output = Path(output or default_report_path(snapshot))
    data = load_report_data(snapshot)
    report = build_report(data)
    output.parent.mkdir(parents=True, exist_ok=True)
    charts_dir = output.with_name(f"{output.stem}-charts")
    charts_dir.mkdir(exist_ok=True)
    for stale in charts_dir.glob("*.svg"):
        if stale.name not in report.charts:
            stale.unlink()
    for name, svg in report.charts.items():
        _atomic_write(charts_dir / name, '<?xml version="1.0" encoding="UTF-8"?>\n' + svg)
    _atomic_write(output, report.html)
    return ReportResult(output, charts_dir, data.run_id, len(report.charts))


def _atomic_write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


# --------------------------------------------------------------------------- numbers


def format_share(share: float | None) -> str:
    """A bootstrap share as whole percent, rounded DOWN (0.599 -> '59 %'), so that a share
    printed as 60 % or more is never a shaky one (see :func:`is_shaky`)."""
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return "–"
    return f"{math.floor(float(share) * 100 + 1e-9):.0f} %"


def is_shaky(share: float | None) -> bool:
    """A rating is shaky when under SHAKY_SHARE (60 %) of the bootstrap resamples give it its
    published level; an unknown share (no valid resample) is not called shaky."""
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return False
    return float(share) < SHAKY_SHARE


def choose_trace_windows(
    scores: pd.DataFrame, systems: Sequence[str], per_system: int = TRACE_WINDOWS_PER_SYSTEM
) -> pd.DataFrame:
    """The windows to plot: per system, where it strays furthest from the other systems.

    ``scores``: one row per system_id, ticker, window_end_date, perturbation_id with
    ``disagreement`` = mean over the horizon of |forecast - consensus| / actual, consensus =
    the median forecast of all systems at that step (marts.forecast_traces). Rule: systems
    in ``systems`` order (then any others alphabetically); each takes its ``per_system``
    cells (ticker, window, perturbation) of largest disagreement, ties broken by ticker,
    date, perturbation, skipping cells an earlier system took, so every plot is a different
    window. Missing disagreements are never chosen. Returns system_id (chosen for), ticker,
    window_end_date, perturbation_id, disagreement, in the order chosen.
    """
    columns = ["system_id", "ticker", "window_end_date", "perturbation_id", "disagreement"]
    if scores.empty:
        return pd.DataFrame(columns=columns)
    scores = scores.dropna(subset=["disagreement"])
    order = [s for s in systems if s in set(scores["system_id"])]
    order += sorted(set(scores["system_id"]) - set(order))
    taken: set[tuple] = set()
    chosen = []
    for system in order:
        mine = scores[scores["system_id"] == system].sort_values(
            ["disagreement", "ticker", "window_end_date", "perturbation_id"],
            ascending=[False, True, True, True],
        )
        picked = 0
        for row in mine.itertuples():
            cell = (row.ticker, row.window_end_date, row.perturbation_id)
            if picked == per_system:
                break
            if cell in taken:
                continue
            taken.add(cell)
            chosen.append([system, *cell, row.disagreement])
            picked += 1
    return pd.DataFrame(chosen, columns=columns)


def format_number(value: float | None, integer: bool = False) -> str:
    """Readable fixed precision: >= 1000 no decimals, >= 1 two, below 1 three significant.

    ``integer``: print a whole number (counts, ratings) without decimals.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    if integer and value.is_integer():
        return f"{value:.0f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def provenance(
    mart: str, column: str, where: Mapping[str, object], value: float, agg: str = ""
) -> dict:
    """``data-*`` attributes naming the mart row(s) a number comes from."""
    attrs = {
        "data-mart": f"marts.{mart}",
        "data-column": column,
        "data-where": json.dumps(dict(where), sort_keys=True),
        "data-value": repr(float(value)),
    }
    if agg:
        attrs["data-agg"] = agg
    return attrs


def num(
    value: float | None,
    mart: str,
    column: str,
    where: Mapping[str, object],
    agg: str = "",
    integer: bool = False,
    percent: bool = False,
) -> str:
    """A traceable number: ``<span class="num" data-mart=... data-value=...>text</span>``.

    ``percent``: a share printed by :func:`format_share` (marked ``data-format="percent"``).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<span class="num missing">–</span>'
    attrs = provenance(mart, column, where, value, agg)
    if percent:
        attrs["data-format"] = "percent"
    rendered = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    text = format_share(value) if percent else format_number(value, integer)
    return f'<span class="num"{rendered}>{esc(text)}</span>'


def _source(*marts: str, extra: str = "") -> str:
    names = ", ".join(f"<code>marts.{esc(m)}</code>" for m in marts)
    return f'<p class="source">Source: {names}{(" — " + extra) if extra else ""}.</p>'


#: (id of a frame, key columns) -> (the frame, {key values: first row position}); the
#: report looks up hundreds of cells in the same few marts (a boolean mask per cell cost
#: ~0.5 s of a 0.85 s report). Cleared by :func:`build_report`; the frame is kept beside
#: its index so an id is never reused while its entry lives.
_FIRST_ROWS: dict[tuple[int, tuple[str, ...]], tuple[pd.DataFrame, dict[tuple, int]]] = {}


def _first_row(frame: pd.DataFrame, where: Mapping[str, object]) -> int | None:
    """Position of the first row of ``frame`` whose columns equal ``where`` (None: no row).

    The same rows as ``frame[(frame[k] == v) & ...]``: text and integer keys are looked up
    in an index built once per frame and key columns; other keys (floats, dates) fall back
    to the mask."""
    keys = tuple(where)
    values = tuple(where.values())
    if not all(isinstance(v, str | int) for v in values) or any(
        isinstance(v, bool) for v in values
    ):
        mask = pd.Series(True, index=frame.index)
        for key, value in where.items():
            mask &= frame[key] == value
        hits = mask.to_numpy().nonzero()[0]
        return int(hits[0]) if len(hits) else None
    entry = _FIRST_ROWS.get((id(frame), keys))
    if entry is None or entry[0] is not frame:
        if len(_FIRST_ROWS) > 256:
            _FIRST_ROWS.clear()
        index: dict[tuple, int] = {}
        for position, row in enumerate(zip(*(frame[k].tolist() for k in keys), strict=True)):
            index.setdefault(row, position)  # a null key never equals a text or int key
        entry = (frame, index)
        _FIRST_ROWS[(id(frame), keys)] = entry
    return entry[1].get(values)


def _value(frame: pd.DataFrame, column: str, **where: object) -> float | None:
    if frame.empty:
        return None
    position = _first_row(frame, where)
    if position is None:
        return None
    value = frame[column].iat[position]
    if pd.isna(value):
        return None
    return float(value)


# --------------------------------------------------------------------------- helpers


def _system_order(data: ReportData) -> list[str]:
    """Rated systems in seed order (unknown ones last, alphabetically)."""
    rated = set(data.ratings["system_id"]) if not data.ratings.empty else set()
    seed_order = list(data.systems["system_id"]) if not data.systems.empty else []
    ordered = [s for s in seed_order if s in rated]
    return ordered + sorted(rated - set(ordered))


def _perturbation_order(data: ReportData) -> list[str]:
    if data.ratings.empty:
        return []
    return sorted(set(data.ratings["perturbation_id"]))


def _colours(systems: Sequence[str]) -> dict[str, str]:
    return {system: colour_for(i) for i, system in enumerate(systems)}


def _chart_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") + ".svg"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _figure(name: str, svg: str, charts: dict[str, str], caption: str) -> str:
    charts[name] = svg
    return (
        f'<figure class="chart-figure" data-chart="{esc(name)}">{svg}'
        f'<figcaption>{caption} <a href="report-charts/{esc(name)}">SVG file</a></figcaption></figure>'
    )


# --------------------------------------------------------------------------- sections


def study_section(data: ReportData) -> str:
    """The study: data, period, window shape, companies, systems, perturbations, and gaps."""
    study = data.study
    tickers = list(study.get("tickers", []))
    companies = data.companies
    if not companies.empty:
        companies = companies[companies["ticker"].isin(tickers)]
    company_rows = []
    for ticker in tickers:
        row = companies[companies["ticker"] == ticker] if not companies.empty else pd.DataFrame()
        name = row["company_name"].iloc[0] if not row.empty else "(not in the companies seed)"
        industry = row["industry"].iloc[0] if not row.empty else ""
        windows = data.windows[data.windows["ticker"] == ticker]
        n_windows = (
            num(
                float(windows["n_windows"].iloc[0]),
                "window_errors",
                "window_end_date",
                {"run_id": data.run_id, "ticker": ticker},
                agg="count_distinct",
                integer=True,
            )
            if not windows.empty
            else "0"
        )
        company_rows.append([esc(ticker), esc(name), esc(industry), n_windows])
    rated = _system_order(data)
    systems = data.systems.set_index("system_id") if not data.systems.empty else pd.DataFrame()
    system_rows = []
    for system_id in rated:
        info = systems.loc[system_id] if system_id in systems.index else None

        def field(name: str, info=info) -> str:
            if info is None or pd.isna(info.get(name)):
                return ""
            return esc(info.get(name))

        system_rows.append(
            [
                f"<code>{esc(system_id)}</code>",
                field("display_name"),
                field("paper_symbol"),
                field("modality"),
                field("family"),
                field("purpose"),
                field("architecture"),
                field("is_foundation_model"),
            ]
        )
    unavailable_rows = []
    requested = list(study.get("systems", []))
    for system_id in requested:
        if system_id not in rated:
            unavailable_rows.append(
                [f"<code>{esc(system_id)}</code>", "in this study but has no ratings in the run"]
            )
    if not data.systems.empty:
        empty = data.systems["implementation"].isna() | (
            data.systems["implementation"].astype(str).str.strip() == ""
        )
        for row in data.systems[empty].itertuples():
            if row.system_id in rated:
                continue  # rated from imported predictions
            unavailable_rows.append(
                [
                    f"<code>{esc(row.system_id)}</code> ({esc(row.display_name)})",
                    f"not runnable in this version: {esc(row.description)}",
                ]
            )
        for row in data.systems[~empty].itertuples():
            if row.system_id in rated or row.system_id in requested:
                continue
            unavailable_rows.append(
                [
                    f"<code>{esc(row.system_id)}</code> ({esc(row.display_name)})",
                    "not in this study (var systems; <code>tsrate systems</code> says whether it "
                    f"can run here): {esc(row.description)}",
                ]
            )
    perturbation_rows = []
    studied = set(study.get("perturbations", []))
    rated_perturbations = set(_perturbation_order(data))
    takes_images = False
    if not data.systems.empty:
        takes_images = bool(
            data.systems[data.systems["system_id"].isin(rated)]["modality"]
            .astype(str)
            .str.contains("image")
            .any()
        )
    for row in data.perturbations.itertuples() if not data.perturbations.empty else []:
        if row.perturbation_id in rated_perturbations:
            status = "rated"
        elif row.perturbation_id in studied:
            status = "in the study but not rated"
        elif row.modality == "image" and not takes_images:
            status = "unavailable: acts on image inputs, and no rated system takes images"
        else:
            status = "not in this study (var perturbations)"
        perturbation_rows.append(
            [
                esc(row.perturbation_id),
                esc(row.name),
                esc(row.family),
                esc(row.modality),
                esc(row.description),
                esc(status),
            ]
        )
    shape = (
        f"context n = {esc(study.get('context_length', '?'))} trading days, horizon d = "
        f"{esc(study.get('horizon', '?'))}, stride {esc(study.get('stride', '?'))}, "
        f"perturbation phase {esc(study.get('perturbation_phase', '?'))}, seed "
        f"{esc(study.get('seed', '?'))}"
    )
    parts = [
        '<section id="study"><h2>The study</h2>',
        f"<p>Run <code>{esc(data.run_id)}</code>, published {esc(data.published_at[:19])} UTC to "
        f"<code>{esc(data.snapshot_name)}</code>. Daily closing prices of "
        f"{len(tickers)} companies, study period {esc(study.get('start', '?'))} to "
        f"{esc(study.get('end', '?'))}; {shape}. A window is named by its last context day "
        "(the forecast origin); the target is always the clean future.</p>",
        "<h3>Companies</h3>",
        _table(["Ticker", "Company", "Industry", "Windows"], company_rows),
        _source(
            "window_errors", extra="windows per ticker; names from <code>seeds.companies</code>"
        ),
        "<h3>Systems rated</h3>",
        _table(
            [
                "System",
                "Name",
                "Paper",
                "Modality",
                "Family",
                "Purpose",
                "Architecture",
                "Foundation",
            ],
            system_rows,
        ),
        _source("ratings", extra="metadata from <code>marts.system_catalog</code>"),
        "<h3>Systems not rated in this run</h3>",
        _table(["System", "Why"], unavailable_rows)
        if unavailable_rows
        else "<p>Every system of the seed was rated.</p>",
        '<p class="source">Source: <code>seeds.systems</code> (empty <code>implementation</code>) '
        "and the run's study.</p>",
        "<h3>Perturbations</h3>",
        _table(
            ["Id", "Name", "Family", "Modality", "What it does", "In this run"], perturbation_rows
        ),
        '<p class="source">Source: <code>seeds.perturbations</code>, <code>marts.ratings</code>.</p>',
        "</section>",
    ]
    return "".join(parts)


def reading_paragraph(data: ReportData) -> str:
    """One paragraph reading the results, every number a traceable mart value."""
    summary, per_perturbation = data.system_summary, data.perturbation_summary
    sentences: list[str] = []
    run = {"run_id": data.run_id}
    if summary.empty:
        return "<p>No ratings in this run.</p>"
    systems = _system_order(data)
    robustness = summary[summary["metric"].isin(ROBUSTNESS_METRICS)]
    if not robustness.empty:
        means = robustness.groupby("system_id")["avg_rating"].mean().sort_values()
        best_value, worst_value = means.iloc[0], means.iloc[-1]
        best = [s for s in systems if s in means.index and math.isclose(means[s], best_value)]
        worst = [s for s in systems if s in means.index and math.isclose(means[s], worst_value)]
        metrics = sorted(set(robustness["metric"]))

        def rating_of(system: str) -> str:
            return num(
                float(means[system]),
                "system_summary",
                "avg_rating",
                {**run, "system_id": system, "metric": metrics},
                agg="avg",
            )

        sentences.append(
            f"Across {len(systems)} rated systems, the most robust is "
            + " and ".join(f"<b>{esc(s)}</b> (mean robustness rating {rating_of(s)})" for s in best)
            + ", the least robust "
            + " and ".join(f"<b>{esc(s)}</b> ({rating_of(s)})" for s in worst)
            + " on a 1 (best) to "
            + num(
                float(summary["rating_levels"].max()),
                "system_summary",
                "rating_levels",
                run,
                agg="max",
                integer=True,
            )
            + f" scale, averaged over the {len(metrics)} robustness metrics and the perturbations."
        )
    ape = per_perturbation[per_perturbation["metric"].isin(["ape_industry", "ape_company"])]
    if not ape.empty:
        means = ape.groupby("perturbation_id")["avg_raw_score"].mean().sort_values()
        worst = means.index[-1]
        sentences.append(
            f"The perturbation that hurts most is <b>{esc(worst)}</b>: its mean perturbation "
            "effect (APE, industry and company confounders, over systems) is "
            + num(
                float(means[worst]),
                "perturbation_summary",
                "avg_raw_score",
                {**run, "perturbation_id": worst, "metric": ["ape_company", "ape_industry"]},
                agg="avg",
            )
            + " price units"
            + (
                ", against "
                + num(
                    float(means.iloc[0]),
                    "perturbation_summary",
                    "avg_raw_score",
                    {
                        **run,
                        "perturbation_id": means.index[0],
                        "metric": ["ape_company", "ape_industry"],
                    },
                    agg="avg",
                )
                + f" for the mildest, {esc(means.index[0])}"
                if len(means) > 1
                else ""
            )
            + "."
        )
    smape = per_perturbation[per_perturbation["metric"] == "smape"].set_index("perturbation_id")
    treated = smape.drop(index="P0", errors="ignore")
    if "P0" in smape.index and not treated.empty:
        worst = treated["avg_raw_score"].idxmax()
        sentences.append(
            f"For accuracy, <b>{esc(worst)}</b> raises the mean SMAPE over systems most: from "
            + num(
                float(smape.loc["P0", "avg_raw_score"]),
                "perturbation_summary",
                "avg_raw_score",
                {**run, "perturbation_id": "P0", "metric": "smape"},
            )
            + " on clean inputs to "
            + num(
                float(smape.loc[worst, "avg_raw_score"]),
                "perturbation_summary",
                "avg_raw_score",
                {**run, "perturbation_id": worst, "metric": "smape"},
            )
            + "."
        )
    accuracy = summary[summary["metric"] == "smape"].set_index("system_id")
    if not accuracy.empty:
        best = accuracy["avg_raw_score"].idxmin()
        sentences.append(
            f"The most accurate system by SMAPE is <b>{esc(best)}</b> ("
            + num(
                float(accuracy.loc[best, "avg_raw_score"]),
                "system_summary",
                "avg_raw_score",
                {**run, "system_id": best, "metric": "smape"},
            )
            + " averaged over perturbations)."
        )
    overall = data.confounder_comparison
    if not overall.empty:
        rows = overall[(overall["grouped_by"] == "all") & overall["measure"].isin(["ape", "pie"])]
        for row in rows.sort_values("measure").itertuples():
            if pd.isna(row.industry_avg) or pd.isna(row.company_avg):
                continue
            where = {**run, "grouped_by": "all", "measure": row.measure, "system_id": None}
            where["perturbation_id"] = None
            sentences.append(
                f"With {row.measure.upper()}, "
                + (
                    "industry as the confounder shows more bias than company"
                    if row.industry_avg > row.company_avg
                    else "company as the confounder shows at least as much bias as industry"
                )
                + " ("
                + num(row.industry_avg, "confounder_comparison", "industry_avg", where)
                + " vs "
                + num(row.company_avg, "confounder_comparison", "company_avg", where)
                + ")."
            )
    return (
        '<section id="reading"><h2>Reading the results</h2><p class="reading">'
        + " ".join(sentences)
        + "</p>"
        + _source(
            "system_summary",
            "perturbation_summary",
            "confounder_comparison",
            extra="hover a number to see the mart row it comes from",
        )
        + "</section>"
    )


def _partial_order(block: pd.DataFrame) -> str:
    """``a < b = c``: systems by ascending raw score (ties share a rank), ids only."""
    parts, previous = [], None
    for row in block.sort_values(["rank", "system_id"]).itertuples():
        if previous is not None:
            parts.append(" = " if row.rank == previous else " &lt; ")
        parts.append(esc(row.system_id))
        previous = row.rank
    return "".join(parts)


def _stability_of(data: ReportData, metric: str, perturbation: str, system: str):
    """The rating_stability row at the published rating, or None."""
    frame = data.stability
    if frame.empty:
        return None
    where = {"metric": metric, "perturbation_id": perturbation, "system_id": system}
    position = _first_row(frame, where)
    return None if position is None else frame.iloc[position]


def _text(value) -> str | None:
    """A text cell of a mart row, or None (null, NaN, empty)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value).strip() or None


def _flag(css: str, text: str, mart: str, column: str, where: Mapping[str, object], **attrs) -> str:
    """A flag whose text is ``marts.<mart>.<column>`` at ``where`` (``data-text-*``; the
    integration test re-reads it) plus any ``data-*`` ``attrs`` (e.g. a boolean's provenance)."""
    attrs = {
        **attrs,
        "data-text-mart": f"marts.{mart}",
        "data-text-column": column,
        "data-where": json.dumps(dict(where), sort_keys=True),
    }
    rendered = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    return f'<em class="flag {css}"{rendered}>{esc(text)}</em>'


def separation_flag(
    data: ReportData, metric: str, perturbation: str, outcome: str = PAPER_OUTCOME
) -> str:
    """The robustness_scores flag of a metric x perturbation x outcome whose score does not
    separate systems on this study (every system at the same extreme or the same score):
    its ``separation_reason``, marked with ``separates_systems`` (false); "" otherwise."""
    frame = data.separation
    if frame.empty:
        return ""
    match = frame[
        (frame["metric"] == metric)
        & (frame["perturbation_id"] == perturbation)
        & (frame["outcome"] == outcome)
    ]
    if match.empty or pd.isna(match["separates_systems"].iloc[0]):
        return ""
    if bool(match["separates_systems"].iloc[0]):
        return ""
    where = {
        "run_id": data.run_id,
        "metric": metric,
        "perturbation_id": perturbation,
        "outcome": outcome,
    }
    reason = _text(match["separation_reason"].iloc[0]) or "does not separate systems on this study"
    # the flag is the same on every system's row: max over them is that one value
    marks = provenance("robustness_scores", "separates_systems", where, 0.0, agg="max")
    return '<br><span class="flag-mark">⊘</span> ' + _flag(
        "no-separation", reason, "robustness_scores", "separation_reason", where, **marks
    )


def rating_notes(row, key: Mapping[str, object]) -> str:
    """Under a rating: its ``rating_reason`` (a null rating, or one given by the score's
    absolute value) and, when ``separable`` is false, its ``separation_reason``."""
    notes = ""
    reason = _text(getattr(row, "rating_reason", None))
    if reason:
        notes += "<br>" + _flag("rating-reason", reason, "ratings", "rating_reason", key)
    separable = getattr(row, "separable", None)
    if separable is not None and not pd.isna(separable) and not bool(separable):
        why = _text(getattr(row, "separation_reason", None)) or "not separable"
        marks = provenance("ratings", "separable", key, 0.0)
        notes += '<br><span class="flag-mark">≈</span> ' + _flag(
            "not-separable", why, "ratings", "separation_reason", key, **marks
        )
    return notes


def _rating_level(row, key: Mapping[str, object]) -> str:
    """The rating (coloured good to poor; grey 'no rating' when null) and the raw score."""
    rating = None if pd.isna(row.rating) else float(row.rating)
    if rating is None:
        tone = "none"
    else:
        levels = int(row.rating_levels)
        goodness = rating if row.higher_is_better else levels + 1 - rating
        tone = "good" if goodness == levels else ("poor" if goodness == 1 else "mid")
    return (
        f'<span class="rating {tone}">{num(rating, "ratings", "rating", key, integer=True)}'
        f"</span> {num(row.raw_score, 'ratings', 'raw_score', key)}"
    )


def rating_cell(data: ReportData, row, where: Mapping[str, object]) -> str:
    """One rating: the level (coloured), the raw score, its bootstrap interval and the share
    of resamples at the published level, flagged ⚠ when shaky (< SHAKY_SHARE); then its
    rating_reason and, when not separable from another system, why (:func:`rating_notes`)."""
    key = {**where, "system_id": row.system_id}
    cell = _rating_level(row, key)
    notes = rating_notes(row, key)
    stable = _stability_of(data, row.metric, row.perturbation_id, row.system_id)
    if stable is None:
        return (
            cell + ' <span class="share missing" title="no rating_stability row">–</span>' + notes
        )
    at = {**key, "rating_level": int(stable["rating"])}
    interval = (
        f'<span class="ci">[{num(stable["ci_low"], "rating_stability", "ci_low", at)} – '
        f"{num(stable['ci_high'], 'rating_stability', 'ci_high', at)}]</span>"
    )
    share = num(stable["share"], "rating_stability", "share", at, percent=True)
    shaky = is_shaky(stable["share"])
    flag = (
        ' <span class="shaky-flag" title="shaky: under 60 % of resamples">⚠</span>' if shaky else ""
    )
    css = "share shaky" if shaky else "share"
    return f'{cell}<br>{interval} <span class="{css}">{share}{flag}</span>{notes}'


def rating_tables_section(data: ReportData) -> str:
    """Tables 5-6 with uncertainty: per metric and perturbation, each system's rating, raw
    score, bootstrap interval and the share of resamples at its rating (marts.ratings,
    marts.rating_stability), and the partial order."""
    ratings = data.ratings
    if ratings.empty:
        return '<section id="ratings"><h2>Ratings</h2><p>No ratings.</p></section>'
    systems = _system_order(data)
    confidence = (
        f"{float(data.stability['confidence'].iloc[0]):.0%}" if not data.stability.empty else "95%"
    )
    parts = ['<section id="ratings"><h2>Ratings per metric and perturbation (Tables 5–6)</h2>']
    parts.append(
        "<p>Each cell: the rating (1 = lowest raw score, which is best for every metric except "
        "sign accuracy; colours show good green to poor red), the raw score, its "
        f"{esc(confidence)} bootstrap interval [low – high], and the share of bootstrap "
        "resamples (moving blocks of window dates) that give the system the same rating. "
        f"<b>⚠ marks a shaky rating</b>: under {SHAKY_SHARE:.0%} of resamples agree, so it "
        "rests on the particular windows of this study. Partial order: systems by ascending "
        "raw score, ties share a rank.</p>"
        '<p class="note">Robustness ratings are for the paper\'s outcome (R^max in price units) '
        "unless labelled otherwise. <b>⊘</b> under a partial order: the score does not "
        "separate systems on this study (every system at the same extreme or the same score; "
        "<code>marts.robustness_scores.separates_systems</code>), so its ratings say nothing "
        "about which system is better. <b>≈</b> under a rating: the APE/PIE score differs from "
        "another system's by less than their spread over treatment draws, so the two are not "
        "separable (<code>marts.ratings.separable</code>). A rating without a level (–) or "
        "rated by its distance from the ideal value shows why "
        "(<code>marts.ratings.rating_reason</code>).</p>" + separation_summary(data)
    )
    if data.stability.empty:
        parts.append(
            '<p class="note">This snapshot has no <code>marts.rating_stability</code>: '
            "intervals and shares are missing.</p>"
        )
    else:
        judged = ratings.merge(
            data.stability[["metric", "perturbation_id", "system_id", "share"]],
            on=["metric", "perturbation_id", "system_id"],
        )
        shaky = judged[judged["share"].map(is_shaky)]
        parts.append(
            f'<p class="stability-summary"><b>{len(shaky)} of {len(judged)}</b> ratings are '
            f"shaky (fewer than {SHAKY_SHARE:.0%} of resamples at the published rating)"
            + (
                ": "
                + ", ".join(
                    f"{esc(r.system_id)} · {esc(METRIC_LABELS.get(r.metric, r.metric))} · "
                    f"{esc(r.perturbation_id)}"
                    for r in shaky.sort_values(
                        ["metric", "perturbation_id", "system_id"]
                    ).itertuples()
                )
                if len(shaky)
                else ""
            )
            + ".</p>"
        )
    for family, metrics in (("Robustness", ROBUSTNESS_METRICS), ("Accuracy", ACCURACY_METRICS)):
        rows = []
        robust = family == "Robustness"
        for metric in metrics:
            subset = ratings[ratings["metric"] == metric]
            for perturbation in sorted(set(subset["perturbation_id"])):
                block = subset[subset["perturbation_id"] == perturbation]
                where = {"run_id": data.run_id, "metric": metric, "perturbation_id": perturbation}
                by_system = {row.system_id: row for row in block.itertuples()}
                arrow = "↑" if bool(block["higher_is_better"].iloc[0]) else "↓"
                rows.append(
                    [
                        f"{esc(METRIC_LABELS.get(metric, metric))} {arrow}",
                        esc(perturbation),
                        *[
                            rating_cell(data, by_system[s], where) if s in by_system else "–"
                            for s in systems
                        ],
                        f'<span class="order">{_partial_order(block)}</span>'
                        + (separation_flag(data, metric, perturbation) if robust else ""),
                    ]
                )
        if rows:
            heading = f"{family} — {OUTCOME_LABELS[PAPER_OUTCOME]}" if robust else family
            parts.append(f"<h3>{esc(heading)}</h3>")
            parts.append(
                _table(
                    ["Metric", "P", *[f"<code>{esc(s)}</code>" for s in systems], "Partial order"],
                    rows,
                    css="ratings",
                )
            )
    parts.append(
        _source(
            "ratings",
            "rating_stability",
            "robustness_scores",
            extra="the same orders as text: <code>marts.partial_orders</code>",
        )
    )
    parts.append(outcome_ratings_block(data))
    parts.append("</section>")
    return "".join(parts)


def separation_summary(data: ReportData) -> str:
    """One line counting the flags of the paper's outcome: scores that do not separate
    systems, ratings not separable within their spread, ratings with a reason."""
    ratings, frame = data.ratings, data.separation
    flat = 0
    if not frame.empty:
        rated = set(zip(ratings["metric"], ratings["perturbation_id"], strict=True))
        paper = frame[
            (frame["outcome"] == PAPER_OUTCOME) & ~frame["separates_systems"].astype(bool)
        ]
        flat = sum(
            (m, p) in rated for m, p in zip(paper["metric"], paper["perturbation_id"], strict=True)
        )
    close = 0
    if "separable" in ratings.columns:
        close = int(
            ratings["separable"].map(lambda v: v is not None and not pd.isna(v) and not v).sum()
        )
    reasons = 0
    if "rating_reason" in ratings.columns:
        reasons = int(ratings["rating_reason"].map(lambda v: _text(v) is not None).sum())
    return (
        '<p class="separation-summary">Flags at the paper\'s outcome: metric × perturbation '
        f"scores that do not separate systems on this study (⊘): <b>{flat}</b>; ratings not "
        "separable from another system's within their spread over treatment draws (≈): "
        f"<b>{close}</b>; ratings with a rating reason: <b>{reasons}</b>.</p>"
    )


def outcome_ratings_block(data: ReportData) -> str:
    """The robustness ratings at the other outcomes (the scale-free R^max / price level), in
    a compact table: rating and raw score per system, flags and reasons as in the main one."""
    frame = data.outcome_ratings
    if frame.empty:
        return ""
    systems = _system_order(data)
    systems += sorted(set(frame["system_id"]) - set(systems))
    parts = []
    for outcome in sorted(set(frame["outcome"])):
        rows = []
        for metric in ROBUSTNESS_METRICS:
            subset = frame[(frame["outcome"] == outcome) & (frame["metric"] == metric)]
            for perturbation in sorted(set(subset["perturbation_id"])):
                block = subset[subset["perturbation_id"] == perturbation]
                where = {
                    "run_id": data.run_id,
                    "metric": metric,
                    "perturbation_id": perturbation,
                    "outcome": outcome,
                }
                by_system = {row.system_id: row for row in block.itertuples()}
                cells = []
                for system in systems:
                    row = by_system.get(system)
                    if row is None:
                        cells.append("–")
                        continue
                    key = {**where, "system_id": system}
                    cells.append(_rating_level(row, key) + rating_notes(row, key))
                rows.append(
                    [
                        f"{esc(METRIC_LABELS.get(metric, metric))} ↓",
                        esc(perturbation),
                        *cells,
                        f'<span class="order">{_partial_order(block)}</span>'
                        + separation_flag(data, metric, perturbation, outcome),
                    ]
                )
        if not rows:
            continue
        label = OUTCOME_LABELS.get(outcome, outcome)
        parts.append(
            f'<h3 class="outcome" data-outcome="{esc(outcome)}">Robustness — {esc(label)}</h3>'
            '<p class="note">The same metrics on a scale-free outcome, so that price levels '
            "do not decide WRS and APE (compare its ⊘ flags with the table above). Rating and "
            "raw score only; bootstrap shares are computed for the paper's outcome.</p>"
            + _table(
                ["Metric", "P", *[f"<code>{esc(s)}</code>" for s in systems], "Partial order"],
                rows,
                css="ratings outcome-ratings",
            )
            + _source("ratings", "robustness_scores", extra=f"outcome = '{esc(outcome)}'")
        )
    return "".join(parts)


def summary_section(data: ReportData) -> str:
    """Table 2: each metric averaged per system and per perturbation, as two tables (rows:
    metrics; columns: systems, perturbations); the best value of each row in bold."""
    summary, per_perturbation = data.system_summary, data.perturbation_summary
    if summary.empty:
        return ""
    systems = [s for s in _system_order(data) if s in set(summary["system_id"])]
    systems += sorted(set(summary["system_id"]) - set(systems))
    perturbations = (
        sorted(set(per_perturbation["perturbation_id"])) if not per_perturbation.empty else []
    )
    system_rows, perturbation_rows = [], []
    for metric in (*ROBUSTNESS_METRICS, *ACCURACY_METRICS):
        by_system = summary[summary["metric"] == metric]
        if by_system.empty:
            continue
        higher = bool(by_system["higher_is_better"].iloc[0])
        label = esc(METRIC_LABELS.get(metric, metric)) + (" ↑" if higher else " ↓")
        run = {"run_id": data.run_id, "metric": metric}

        def cells(frame, key, names, mart, run=run, higher=higher):
            values = {
                getattr(r, key): r.avg_raw_score
                for r in frame.itertuples()
                if not pd.isna(r.avg_raw_score)
            }
            best = (max if higher else min)(values.values()) if values else None
            out = []
            for name in names:
                if name not in values:
                    out.append("–")
                    continue
                text = num(values[name], mart, "avg_raw_score", {**run, key: name})
                out.append(f'<b class="best">{text}</b>' if values[name] == best else text)
            return out

        system_rows.append([label, *cells(by_system, "system_id", systems, "system_summary")])
        by_perturbation = per_perturbation[per_perturbation["metric"] == metric]
        perturbation_rows.append(
            [
                label,
                *cells(by_perturbation, "perturbation_id", perturbations, "perturbation_summary"),
            ]
        )
    return (
        '<section id="summary"><h2>Comparison across systems and perturbations (Table 2)</h2>'
        "<p>Plain means of the raw scores (↓ lower is better, ↑ higher is better); the best "
        "of each row in bold.</p><h3>Per system (mean over perturbations)</h3>"
        + _table(
            ["Metric", *[f"<code>{esc(s)}</code>" for s in systems]], system_rows, css="table2"
        )
        + _source("system_summary")
        + "<h3>Per perturbation (mean over systems)</h3>"
        + _table(["Metric", *map(esc, perturbations)], perturbation_rows, css="table2")
        + _source("perturbation_summary")
        + "</section>"
    )


def _radar_for(
    title: str,
    metrics: Sequence[str],
    names: Sequence[str],
    colours: Mapping[str, str],
    value_of,
) -> str | None:
    """A radar over ``metrics`` for ``names``; ``value_of(name, metric)`` -> (value, attrs)."""
    present = [m for m in metrics if any(value_of(n, m)[0] is not None for n in names)]
    if len(present) < 3 or not names:
        return None
    series, directions = [], []
    for metric in present:
        directions.append(metric == "sign_accuracy")
    for name in names:
        points = []
        for metric in present:
            value, attrs = value_of(name, metric)
            label = f"{name} · {METRIC_LABELS.get(metric, metric)}: {format_number(value)}"
            points.append(Point(value, label, attrs if value is not None else {}))
        series.append(Series(name, points, colours[name]))
    return radar_chart(title, [METRIC_LABELS.get(m, m) for m in present], series, directions)


def radar_section(data: ReportData, charts: dict[str, str]) -> str:
    """Figures 5-6: robustness and accuracy radars per perturbation and averaged."""
    systems = _system_order(data)
    colours = _colours(systems)
    ratings, summary = data.ratings, data.system_summary
    parts = ['<section id="radars"><h2>Robustness and accuracy radar plots (Figures 5–6)</h2>']
    parts.append(
        "<p>Each axis ranks the systems in the chart: the best raw score sits on the rim, the "
        "worst near the centre, the others evenly between them by rank, equal scores together "
        "(↓ lower raw score is better, ↑ higher is better), so larger shapes are better. A rank "
        "scale, not a min-max one, so that an outlier such as the Biased baseline cannot push "
        "every other system onto the rim; the distances are in the tables and tooltips. Hover a "
        "point for its raw score; click a legend entry to hide a system.</p>"
    )
    for family, metrics, figure in (
        ("Robustness", ROBUSTNESS_METRICS, "Figure 5"),
        ("Accuracy", ACCURACY_METRICS, "Figure 6"),
    ):
        parts.append(f'<h3>{family} ({figure})</h3><div class="grid">')
        for perturbation in _perturbation_order(data):

            def value_of(system: str, metric: str, perturbation=perturbation):
                value = _value(
                    ratings,
                    "raw_score",
                    system_id=system,
                    metric=metric,
                    perturbation_id=perturbation,
                )
                where = {
                    "run_id": data.run_id,
                    "metric": metric,
                    "perturbation_id": perturbation,
                    "system_id": system,
                }
                return value, (
                    provenance("ratings", "raw_score", where, value) if value is not None else {}
                )

            title = f"{family} · {perturbation}"
            svg = _radar_for(title, metrics, systems, colours, value_of)
            if svg:
                parts.append(
                    _figure(
                        _chart_name(f"radar {family} {perturbation}"),
                        svg,
                        charts,
                        f"{esc(title)}. Source: <code>marts.ratings</code> (raw_score).",
                    )
                )

        def average_of(system: str, metric: str):
            value = _value(summary, "avg_raw_score", system_id=system, metric=metric)
            where = {"run_id": data.run_id, "metric": metric, "system_id": system}
            return value, (
                provenance("system_summary", "avg_raw_score", where, value)
                if value is not None
                else {}
            )

        title = f"{family} · average over perturbations"
        svg = _radar_for(title, metrics, systems, colours, average_of)
        if svg:
            parts.append(
                _figure(
                    _chart_name(f"radar {family} average"),
                    svg,
                    charts,
                    f"{esc(title)}. Source: <code>marts.system_summary</code> (avg_raw_score).",
                )
            )
        parts.append("</div>")
    parts.append(
        '<p class="note">P0 is the control: APE and PIE measure the other perturbations '
        "against it, so P0 has only its WRS (see the rating tables) and no robustness radar.</p>"
    )
    parts.append(_source("ratings", "system_summary"))
    parts.append("</section>")
    return "".join(parts)


def _trace_where(data: ReportData, ticker, window, perturbation) -> dict:
    return {
        "run_id": data.run_id,
        "ticker": ticker,
        "window_end_date": str(pd.Timestamp(window).date()),
        "perturbation_id": perturbation,
    }


def trace_y_range(values: Sequence[float]) -> tuple[float, float] | None:
    """The y axis of a forecast plot: the clean prices (context tail and actuals) padded by
    their own range or 20 % of their mean level, whichever is larger. Forecasts beyond it are
    drawn on the edge, marked off scale (e.g. the Biased baseline, or a forecast of 0 after
    a drop-to-zero), so they do not flatten the actual series."""
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not present:
        return None
    low, high = min(present), max(present)
    pad = max(high - low, 0.2 * abs(sum(present) / len(present)), 1e-9)
    return low - pad, high + pad


def forecast_chart(data: ReportData, chosen, colours: Mapping[str, str]) -> str | None:
    """Forecast vs actual for one chosen window: the context tail as each system received it
    and clean, the clean actuals over the horizon, and every system's forecast."""
    ticker, window, perturbation = chosen.ticker, chosen.window_end_date, chosen.perturbation_id
    cell = _trace_where(data, ticker, window, perturbation)
    traces = data.traces
    mine = traces[
        (traces["ticker"] == ticker)
        & (pd.to_datetime(traces["window_end_date"]) == pd.Timestamp(window))
        & (traces["perturbation_id"] == perturbation)
    ]
    if mine.empty:
        return None
    contexts = data.contexts
    tail = (
        contexts[
            (contexts["ticker"] == ticker)
            & (pd.to_datetime(contexts["window_end_date"]) == pd.Timestamp(window))
            & (contexts["perturbation_id"] == perturbation)
        ].sort_values("context_step")
        if not contexts.empty
        else contexts
    )
    last_step = int(tail["context_step"].max()) if not tail.empty else 0
    lines = []
    actual_x, actual_points = [], []
    for row in tail.itertuples():
        x = int(row.context_step) - last_step
        actual_x.append(x)
        where = {**cell, "context_step": int(row.context_step)}
        actual_points.append(
            Point(
                float(row.clean_value),
                f"clean input {row.price_date:%Y-%m-%d}: {format_number(row.clean_value)}",
                provenance("window_inputs", "clean_value", where, row.clean_value),
            )
        )
    steps = mine.drop_duplicates("horizon_step").sort_values("horizon_step")
    for row in steps.itertuples():
        actual_x.append(int(row.horizon_step))
        where = {**cell, "system_id": row.system_id, "horizon_step": int(row.horizon_step)}
        actual_points.append(
            Point(
                float(row.actual),
                f"actual {pd.Timestamp(row.target_date):%Y-%m-%d}: {format_number(row.actual)}",
                provenance("forecast_traces", "actual", where, row.actual),
            )
        )
    lines.append(Line("actual", actual_x, actual_points, "#222222"))
    if perturbation != "P0" and not tail.empty:
        points = []
        for row in tail.itertuples():
            value = None if pd.isna(row.input_value) else float(row.input_value)
            where = {**cell, "context_step": int(row.context_step)}
            points.append(
                Point(
                    value,
                    f"{perturbation} input {row.price_date:%Y-%m-%d}: {format_number(value)}",
                    provenance("window_inputs", "input_value", where, value)
                    if value is not None
                    else {},
                )
            )
        lines.append(
            Line(
                f"input ({perturbation})", [p for p in actual_x if p <= 0], points, "#999999", True
            )
        )
    for system in [s for s in colours if s in set(mine["system_id"])]:
        rows = mine[mine["system_id"] == system].sort_values("horizon_step")
        points = []
        for row in rows.itertuples():
            where = {**cell, "system_id": system, "horizon_step": int(row.horizon_step)}
            value = None if pd.isna(row.forecast) else float(row.forecast)
            points.append(
                Point(
                    value,
                    f"{system} step {row.horizon_step}: {format_number(value)}",
                    provenance("forecast_traces", "forecast", where, value)
                    if value is not None
                    else {},
                )
            )
        lines.append(Line(system, [int(x) for x in rows["horizon_step"]], points, colours[system]))
    title = f"{ticker} · origin {pd.Timestamp(window):%Y-%m-%d} · {perturbation}"
    return line_chart(
        title,
        lines,
        x_label="trading days from the origin",
        y_label="close (price units)",
        y_range=trace_y_range([p.value for p in actual_points]),
    )


def forecasts_section(data: ReportData, charts: dict[str, str]) -> str:
    """Forecasts beside actuals for the windows where each system strays most from the rest."""
    parts = ['<section id="forecasts"><h2>Forecasts beside actuals</h2>']
    if "forecast_traces" in data.missing_marts:
        parts.append("<p>This snapshot has no <code>marts.forecast_traces</code>.</p></section>")
        return "".join(parts)
    if data.trace_windows.empty:
        parts.append("<p>No window has forecasts of two or more systems to compare.</p></section>")
        return "".join(parts)
    tail = context_tail_length(
        int(data.study.get("context_length", 0) or 0), int(data.study.get("horizon", 1) or 1)
    )
    parts.append(
        f"<p>For each system, the {TRACE_WINDOWS_PER_SYSTEM} windows (ticker, origin, "
        "perturbation) where its forecast strays furthest from the other systems: largest mean "
        "over the horizon of |forecast − consensus| / actual, consensus = the median forecast "
        "of all systems at that step (<code>marts.forecast_traces.consensus_forecast</code>); "
        "a window already shown for an earlier system is skipped. Each plot shows the last "
        f"{tail} context values (clean, black; as the systems received them under a "
        "perturbation, grey dashed), the clean actuals after the origin (dashed line) and "
        "every system's forecast. The y axis spans the clean prices (padded by their range or "
        "20 % of their level): a forecast beyond it sits on the edge as a triangle and its "
        "legend entry says off scale; hover for its value. Click a legend entry to hide a "
        "line.</p>"
        '<div class="grid">'
    )
    systems = _system_order(data) or sorted(set(data.traces["system_id"]))
    colours = _colours(systems)
    for chosen in data.trace_windows.itertuples():
        svg = forecast_chart(data, chosen, colours)
        if svg is None:
            continue
        name = _chart_name(
            f"forecast {chosen.ticker} {pd.Timestamp(chosen.window_end_date):%Y-%m-%d} "
            f"{chosen.perturbation_id}"
        )
        parts.append(
            _figure(
                name,
                svg,
                charts,
                f"Chosen for <b>{esc(chosen.system_id)}</b>: where it strays most. Source: "
                "<code>marts.forecast_traces</code>, <code>marts.window_inputs</code>.",
            )
        )
    parts.append("</div>")
    parts.append(_source("forecast_traces", "window_inputs"))
    parts.append("</section>")
    return "".join(parts)


def confounder_section(data: ReportData, charts: dict[str, str]) -> str:
    """Figure 4: industry vs company as grouping / confounder, per measure."""
    frame = data.confounder_comparison
    parts = ['<section id="confounders"><h2>Industry vs company as confounder (Figure 4)</h2>']
    if frame.empty:
        parts.append("<p>No confounder comparison in this run.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Mean raw score with the industry and with the company as grouping (WRS) or "
        "confounder (APE, PIE), per system and over all systems; lower is better, so the "
        'taller bar shows more bias.</p><div class="grid">'
    )
    systems = _system_order(data)
    colours = {"industry": colour_for(0), "company": colour_for(1)}
    labels = {"wrs": "WRS", "ape": "APE (price units)", "pie": "PIE %"}
    rows = []
    for measure in ("wrs", "ape", "pie"):
        subset = frame[frame["measure"] == measure]
        if subset.empty:
            continue
        categories = [*systems, "all"]
        series = []
        for confounder in ("industry", "company"):
            column = f"{confounder}_avg"
            points = []
            for category in categories:
                if category == "all":
                    match = subset[subset["grouped_by"] == "all"]
                    where = {"grouped_by": "all", "system_id": None, "perturbation_id": None}
                else:
                    match = subset[
                        (subset["grouped_by"] == "system") & (subset["system_id"] == category)
                    ]
                    where = {"grouped_by": "system", "system_id": category, "perturbation_id": None}
                where = {"run_id": data.run_id, "measure": measure, **where}
                value = (
                    None
                    if match.empty or pd.isna(match[column].iloc[0])
                    else float(match[column].iloc[0])
                )
                attrs = (
                    provenance("confounder_comparison", column, where, value)
                    if value is not None
                    else {}
                )
                points.append(
                    Point(value, f"{category} · {confounder}: {format_number(value)}", attrs)
                )
            series.append(Series(confounder, points, colours[confounder]))
        title = f"{labels[measure]}: industry vs company"
        parts.append(
            _figure(
                _chart_name(f"confounders {measure}"),
                bar_chart(title, categories, series, y_label=labels[measure]),
                charts,
                f"{esc(title)}. Source: <code>marts.confounder_comparison</code>.",
            )
        )
        overall = subset[subset["grouped_by"] == "all"]
        if not overall.empty:
            row = overall.iloc[0]
            where = {
                "run_id": data.run_id,
                "grouped_by": "all",
                "measure": measure,
                "system_id": None,
                "perturbation_id": None,
            }
            rows.append(
                [
                    esc(labels[measure]),
                    num(row["industry_avg"], "confounder_comparison", "industry_avg", where),
                    num(row["company_avg"], "confounder_comparison", "company_avg", where),
                    esc(row["more_biased_confounder"] or ""),
                ]
            )
    parts.append("</div>")
    parts.append(_table(["Measure", "Industry", "Company", "More bias"], rows))
    parts.append(_source("confounder_comparison"))
    parts.append("</section>")
    return "".join(parts)


def group_section(data: ReportData, charts: dict[str, str]) -> str:
    """Figures 7-9: group comparisons (ARQ1-ARQ3) and the modality pairs (Figure 8)."""
    parts = ['<section id="groups"><h2>Group comparisons (ARQ1–ARQ3, Figures 7–9)</h2>']
    if "group_comparisons" in data.missing_marts:
        parts.append("<p>This snapshot has no <code>marts.group_comparisons</code>.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Each metric averaged over the systems of a group (each system's mean over its "
        "perturbations, systems weighted equally); groups come from <code>marts.system_catalog</code>. "
        "A group without rated systems has no row. Radar axes rank the groups "
        "(best on the rim, worst near the centre).</p>"
    )
    frame = data.group_comparisons
    metrics = (*ROBUSTNESS_METRICS, *ACCURACY_METRICS)
    for scope, scope_label in SCOPES.items():
        scoped = frame[frame["system_scope"] == scope] if not frame.empty else frame
        parts.append(f"<h3>{esc(scope_label.capitalize())}</h3>")
        if scoped.empty:
            parts.append("<p>No rated system in this scope (the study rates only baselines).</p>")
            continue
        parts.append('<div class="grid">')
        tables = []
        for comparison, (title, seed_column) in COMPARISONS.items():
            rows = scoped[scoped["comparison"] == comparison]
            groups = list(dict.fromkeys(rows["group_name"]))
            if not groups:
                tables.append(
                    f"<p><b>{esc(title)}</b>: no rated system has a group here "
                    f"(<code>marts.system_catalog.{esc(seed_column)}</code>).</p>"
                )
                continue
            colours = {g: colour_for(i) for i, g in enumerate(groups)}

            def value_of(group: str, metric: str, rows=rows, comparison=comparison, scope=scope):
                value = _value(rows, "avg_raw_score", group_name=group, metric=metric)
                where = {
                    "run_id": data.run_id,
                    "system_scope": scope,
                    "comparison": comparison,
                    "group_name": group,
                    "metric": metric,
                }
                return value, (
                    provenance("group_comparisons", "avg_raw_score", where, value)
                    if value is not None
                    else {}
                )

            if len(groups) >= 2:
                svg = _radar_for(title, metrics, groups, colours, value_of)
                if svg:
                    parts.append(
                        _figure(
                            _chart_name(f"groups {scope} {comparison}"),
                            svg,
                            charts,
                            f"{esc(title)} — {esc(scope_label)}. Source: "
                            "<code>marts.group_comparisons</code>.",
                        )
                    )
            table_rows = []
            for metric in metrics:
                cells = [esc(METRIC_LABELS.get(metric, metric))]
                for group in groups:
                    value, attrs = value_of(group, metric)
                    where = json.loads(attrs["data-where"]) if attrs else {}
                    cells.append(num(value, "group_comparisons", "avg_raw_score", where))
                table_rows.append(cells)
            members = [
                "systems",
                *[
                    esc(" ".join(rows[rows["group_name"] == g]["system_ids"].iloc[0].split()))
                    for g in groups
                ],
            ]
            table_rows.append(members)
            note = (
                ""
                if len(groups) >= 2
                else " — only one group has rated systems: nothing to compare yet"
            )
            tables.append(
                f"<p><b>{esc(title)}</b>{note}</p>"
                + _table(["Metric", *map(esc, groups)], table_rows)
            )
        parts.append("</div>")
        parts.extend(tables)
    parts.append(_source("group_comparisons"))
    parts.append(modality_pairs_block(data, charts))
    parts.append("</section>")
    return "".join(parts)


def modality_pairs_block(data: ReportData, charts: dict[str, str]) -> str:
    """Figure 8: numeric vs numeric+image variant of the same model."""
    parts = ["<h3>ARQ2 per model · numeric vs numeric+image variant (Figure 8)</h3>"]
    pairs = data.modality_pairs
    if pairs.empty:
        known = []
        if not data.systems.empty and "base_model" in data.systems:
            seeded = data.systems[data.systems["base_model"].notna()]
            for base, group in seeded.groupby("base_model"):
                known.append(f"{esc(base)} ({', '.join(esc(s) for s in group['system_id'])})")
        parts.append(
            "<p>No pair is rated in this run: both variants of a model must be rated. "
            + (
                "The systems seed pairs "
                + "; ".join(known)
                + ": a pair is compared once both of its variants are rated in one run "
                "(see Systems rated and Systems not rated in this run)."
                if known
                else "The systems seed declares no pairs (column base_model)."
            )
            + "</p>"
        )
        parts.append(_source("modality_pairs"))
        return "".join(parts)
    parts.append('<div class="grid">')
    metrics = (*ROBUSTNESS_METRICS, *ACCURACY_METRICS)
    rows = []
    for base in sorted(set(pairs["base_model"])):
        subset = pairs[pairs["base_model"] == base]
        names = {
            "numeric": str(subset["numeric_system_id"].iloc[0]),
            "numeric+image": str(subset["multimodal_system_id"].iloc[0]),
        }
        colours = {names["numeric"]: colour_for(0), names["numeric+image"]: colour_for(1)}
        columns = {
            names["numeric"]: "numeric_avg_raw_score",
            names["numeric+image"]: "multimodal_avg_raw_score",
        }

        def value_of(system: str, metric: str, subset=subset, columns=columns, base=base):
            value = _value(subset, columns[system], metric=metric)
            where = {"run_id": data.run_id, "base_model": base, "metric": metric}
            return value, (
                provenance("modality_pairs", columns[system], where, value)
                if value is not None
                else {}
            )

        svg = _radar_for(
            f"{base}: numeric vs numeric+image", metrics, list(colours), colours, value_of
        )
        if svg:
            parts.append(
                _figure(
                    _chart_name(f"modality pair {base}"),
                    svg,
                    charts,
                    f"{esc(base)}. Source: <code>marts.modality_pairs</code>.",
                )
            )
        for row in subset.itertuples():
            where = {"run_id": data.run_id, "base_model": base, "metric": row.metric}
            rows.append(
                [
                    esc(base),
                    esc(METRIC_LABELS.get(row.metric, row.metric)),
                    num(
                        row.numeric_avg_raw_score, "modality_pairs", "numeric_avg_raw_score", where
                    ),
                    num(
                        row.multimodal_avg_raw_score,
                        "modality_pairs",
                        "multimodal_avg_raw_score",
                        where,
                    ),
                    esc(row.better_variant),
                    esc(row.perturbation_ids),
                ]
            )
    parts.append("</div>")
    parts.append(
        _table(["Model", "Metric", "Numeric", "Numeric+image", "Better", "Perturbations"], rows)
    )
    parts.append(_source("modality_pairs"))
    return "".join(parts)


# --------------------------------------------------------------------------- page

STYLE = """
body{font-family:Helvetica,Arial,sans-serif;margin:0 auto;max-width:1280px;padding:0 24px 48px;color:#222}
h1{margin-top:24px}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:40px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.source{font-size:12px;color:#666;margin-top:2px}
.grid{display:flex;flex-wrap:wrap;gap:12px}.chart-figure{margin:0}
figcaption{font-size:12px;color:#555;max-width:460px}
.rating{padding:0 3px;border-radius:3px}.rating.good{background:#d8f0d8}
.rating.mid{background:#fff2c6}.rating.poor{background:#f6d2d2}
.num[data-mart]{border-bottom:1px dotted #999;cursor:help}
.series.hidden{display:none}.legend-item.off{opacity:.35}
.share.shaky{background:#ffe1b3;font-weight:bold;padding:0 3px;border-radius:3px}
.ci{font-size:11px;color:#555}.share{font-size:11px}table.ratings td{white-space:nowrap}
.flag{display:inline-block;white-space:normal;max-width:230px;font-size:11px;font-style:normal;padding:0 3px;border-radius:3px;vertical-align:top}
.flag.no-separation{background:#e6dcf5}.flag.not-separable{background:#dcebf7}
.flag.rating-reason{color:#555;background:#f0f0f0}.rating.none{background:#e4e4e4}
nav a{margin-right:12px}.reading{font-size:15px;line-height:1.5}.note{font-size:13px}
"""

SCRIPT = """
(function () {
  document.querySelectorAll('.num[data-mart]').forEach(function (el) {
    el.title = el.dataset.mart + '.' + el.dataset.column + ' where ' + el.dataset.where +
      (el.dataset.agg ? ' (' + el.dataset.agg + ')' : '') + ' = ' + el.dataset.value;
  });
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    svg.querySelectorAll('.legend-item').forEach(function (item) {
      item.addEventListener('click', function () {
        var name = item.getAttribute('data-series');
        item.classList.toggle('off');
        svg.querySelectorAll('.series').forEach(function (s) {
          if (s.getAttribute('data-series') === name) { s.classList.toggle('hidden'); }
        });
      });
    });
  });
})();
"""


def build_report(data: ReportData, generated_at: str | None = None) -> Report:
    """The whole HTML page and its charts (name -> SVG), from ``data`` alone."""
    generated_at = generated_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    _FIRST_ROWS.clear()
    charts: dict[str, str] = {}
    sections = [
        reading_paragraph(data),
        study_section(data),
        summary_section(data),
        rating_tables_section(data),
        radar_section(data, charts),
        forecasts_section(data, charts),
        confounder_section(data, charts),
        group_section(data, charts),
        probabilistic_section(data.probabilistic_scores, num),
        leaderboard_section(data.leaderboard, num),
        provenance_section(data.run_provenance),
    ]
    nav = "".join(
        f'<a href="#{anchor}">{label}</a>'
        for anchor, label in (
            ("reading", "Reading"),
            ("study", "Study"),
            ("summary", "Table 2"),
            ("ratings", "Ratings"),
            ("radars", "Radar plots"),
            ("forecasts", "Forecasts"),
            ("confounders", "Confounders"),
            ("groups", "Groups"),
            ("probabilistic", "Probabilistic"),
            ("leaderboard", "Leaderboard"),
            ("provenance", "Provenance"),
        )
    )
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>tsrate report · {esc(data.run_id)}</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>Robustness and accuracy ratings of time-series forecasting systems</h1>"
        f'<p class="source">Run <code>{esc(data.run_id)}</code> · generated {esc(generated_at)} '
        f"from the published snapshot <code>{esc(data.snapshot_name)}</code>. Method: "
        "Rating time-series foundation models for robustness (causal rating framework). "
        f"Query the same marts with SQL (docs/bi.md, Querying).</p><nav>{nav}</nav>"
        + "".join(sections)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )
    return Report(page, charts)
