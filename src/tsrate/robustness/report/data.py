"""What the rating report reads: the published snapshot's marts and seeds, as DataFrames.

:func:`load_report_data` opens the snapshot read-only and returns a :class:`ReportData`;
everything after it (:mod:`.render`) is pure over those frames, so the sections are
unit-tested on small ones. The constants here name the metrics, outcomes and thresholds
the sections share.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.robustness.identical import identical_pairs

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
    "wql": "the probabilistic outcome: the window's weighted quantile loss (WQL)",
    "coverage_error_80": "the calibration outcome: |coverage of the 80 % interval − 0.8|",
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
    #: marts.paper_comparison: the paper's printed values beside the run's (empty: none)
    paper_comparison: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: marts.uncertainty_effects (every probabilistic outcome) and marts.rating_leave_one_out
    #: at the paper's outcome and the accuracy metrics (empty: a snapshot without them)
    uncertainty_effects: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    leave_one_out: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: marts.window_leakage summed per system (n_windows, n_flagged, n_known, basis, reason)
    leakage: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: marts.forecast_failures_summary: failed and fallback windows per system and
    #: perturbation (empty: a snapshot without it)
    forecast_failures: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    #: the robustness outcome of the marts' default view (var robustness_outcome: the paper's
    #: R^max unless the build set another); ratings and rating_stability are read at it
    default_outcome: str = PAPER_OUTCOME
    #: (system_a, system_b, shared forecast steps) of each pair of systems whose forecasts
    #: in marts.forecast_traces are the same on every step they share
    #: (:func:`tsrate.robustness.identical.identical_pairs`; empty: none, or no such mart)
    identical_pairs: list = dataclasses.field(default_factory=list)
    #: system id -> {withdrawn_at, reason} of each system withdrawn from the study and left
    #: out of the marts (published_runs.withdrawn; empty: none, or an older snapshot)
    withdrawn: dict = dataclasses.field(default_factory=dict)
    #: (the ratings frame it was read from, {metric: {system: perturbation ids}}): each
    #: system's rated perturbations per metric, read once per report by
    #: :func:`.coverage.rated_perturbations` (None: not read yet; a new ``ratings`` frame
    #: reads again)
    rated_by_metric: tuple | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )


@dataclasses.dataclass(frozen=True)
class Report:
    html: str
    charts: dict[str, dict]


@dataclasses.dataclass(frozen=True)
class ReportResult:
    path: Path
    charts_dir: Path
    run_id: str
    n_charts: int


def default_report_path(snapshot: Path) -> Path:
    """``report.html`` beside the snapshot (override with ``TSRATE_REPORT``)."""
    override = os.environ.get("TSRATE_REPORT")
    return Path(override) if override else Path(snapshot).parent / REPORT_NAME


def load_report_data(snapshot: Path) -> ReportData:
    """Read the marts and seeds of the published ``snapshot`` (read-only)."""
    snapshot = Path(snapshot)
    if not snapshot.exists():
        raise TsrateError(
            f"no published snapshot at {snapshot}: finish a `tsrate run` (or a `tsrate import` "
            "that builds) before `tsrate report`"
        )
    hint = "give --snapshot a published tsrate.duckdb (`tsrate run` writes one)"
    if snapshot.is_file():
        with snapshot.open("rb") as handle:
            header = handle.read(12)
        if header[8:12] != b"DUCK":  # DuckDB's header: an 8-byte checksum, then "DUCK"
            raise TsrateError(
                f"{snapshot} cannot be opened as a DuckDB snapshot: it is not a DuckDB file "
                f"(no DuckDB header in its first bytes); {hint}"
            )
    try:
        con = duckdb.connect(str(snapshot), read_only=True)
    except duckdb.Error as exc:  # a newer DuckDB's file, a damaged one
        raise TsrateError(
            f"{snapshot} cannot be opened as a DuckDB snapshot (DuckDB: "
            f"{str(exc).splitlines()[0]}); {hint}"
        ) from None
    try:
        tables = {
            f"{schema}.{name}"
            for schema, name in con.execute(
                "select schema_name, table_name from duckdb_tables()"
            ).fetchall()
        }
        #: (mart, column) of every mart, read once
        columns = set(
            con.execute(
                "select table_name, column_name from duckdb_columns() where schema_name = 'marts'"
            ).fetchall()
        )
        missing = [m for m in REQUIRED_MARTS if f"marts.{m}" not in tables]
        if missing or "main.published_runs" not in tables:
            raise TsrateError(
                f"{snapshot} is not a complete tsrate snapshot: missing "
                f"{[f'marts.{m}' for m in missing] or ['published_runs']}"
            )
        recorded = con.execute(  # published_runs.withdrawn: snapshots of older releases lack it
            "select count(*) from duckdb_columns() where table_name = 'published_runs' "
            "and column_name = 'withdrawn'"
        ).fetchone()[0]
        run_id, published_at, study, withdrawn = con.execute(
            "select run_id, cast(published_at as varchar), cast(study as varchar), "
            f"{'cast(withdrawn as varchar)' if recorded else 'null'} "
            # suite publications (tsrate.suites.publishing) carry no study: skip them
            "from published_runs where study is not null order by published_at desc limit 1"
        ).fetchone()
        # the default view's robustness outcome (var robustness_outcome), as the build chose
        default_outcome = PAPER_OUTCOME
        if {("ratings", "outcome"), ("ratings", "is_default_outcome")} <= columns:
            found = con.execute(
                "select min(outcome) from marts.ratings where run_id = ? "
                "and is_default_outcome and outcome is not null",
                [run_id],
            ).fetchone()[0]
            default_outcome = found or PAPER_OUTCOME

        def mart(
            name: str, sql: str = "select * from marts.{name} where run_id = ?"
        ) -> pd.DataFrame:
            """The run's rows; at the default outcome when the mart has an outcome column."""
            if f"marts.{name}" not in tables:
                return pd.DataFrame()
            query, params = sql.format(name=name), [run_id]
            if (name, "outcome") in columns:
                query += " and (outcome is null or outcome = ?)"
                params.append(default_outcome)
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
        if "marts.robustness_scores" in tables and (
            ("robustness_scores", "separates_systems") in columns
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
        if ("ratings", "outcome") in columns:
            outcome_ratings = con.execute(
                "select * from marts.ratings where run_id = ? and outcome is not null "
                "and outcome <> ? order by outcome, metric, perturbation_id, system_id",
                [run_id, default_outcome],
            ).df()
        uncertainty = pd.DataFrame()
        if "marts.uncertainty_effects" in tables:
            uncertainty = con.execute(
                "select * from marts.uncertainty_effects where run_id = ? "
                "order by outcome, system_id, perturbation_id",
                [run_id],
            ).df()
        leakage = pd.DataFrame()
        if "marts.window_leakage" in tables:
            leakage = con.execute(
                "select system_id, count(*) as n_windows, "
                "count(*) filter (where in_training_data) as n_flagged, "
                "count(in_training_data) as n_known, min(leakage_basis) as leakage_basis, "
                "min(leakage_reason) as leakage_reason "
                "from marts.window_leakage where run_id = ? group by system_id",
                [run_id],
            ).df()
        identical = []
        if "marts.forecast_traces" in tables:
            identical = identical_pairs(
                con, "(select * from marts.forecast_traces where run_id = ?)", [run_id]
            )
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
            paper_comparison=mart("paper_comparison"),
            uncertainty_effects=uncertainty,
            leave_one_out=mart("rating_leave_one_out"),
            leakage=leakage,
            forecast_failures=mart("forecast_failures_summary"),
            default_outcome=default_outcome,
            identical_pairs=identical,
            withdrawn=json.loads(withdrawn) if withdrawn else {},
        )
    finally:
        con.close()


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
    scored = set(scores["system_id"].unique())
    order = [s for s in systems if s in scored]
    order += sorted(scored - set(order))
    # one stable sort, then each system's rows: the same order as sorting each system's own
    ranked = scores.sort_values(
        ["disagreement", "ticker", "window_end_date", "perturbation_id"],
        ascending=[False, True, True, True],
    )
    taken: set[tuple] = set()
    chosen = []
    for system in order:
        mine = ranked[ranked["system_id"] == system]
        picked = 0
        # at most per_system picks and len(taken) skips: read no further rows than that
        for row in mine.head(per_system + len(taken)).itertuples():
            cell = (row.ticker, row.window_end_date, row.perturbation_id)
            if picked == per_system:
                break
            if cell in taken:
                continue
            taken.add(cell)
            chosen.append([system, *cell, row.disagreement])
            picked += 1
    return pd.DataFrame(chosen, columns=columns)
