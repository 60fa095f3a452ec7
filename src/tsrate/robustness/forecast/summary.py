"""What a forecast run did and what went wrong in it: :class:`RunSummary` (its counts,
timings, skipped systems and the windows without a model forecast, failed, fallback or
copied) and :func:`run_problems`, the same lines read back from a stored run; once it is
rated, :func:`source_change_line` names the systems it rated from forecasts of other prices.

:func:`tsrate.robustness.forecast.execute.run_forecasts` fills a summary; ``tsrate run``
prints a stored run's problems once it is rated (:mod:`tsrate.commands.pipeline`).
"""

from __future__ import annotations

import dataclasses

import duckdb

from tsrate.robustness.forecast import copies


@dataclasses.dataclass
class RunSummary:
    run_id: str
    partitions: int = 0
    reused: int = 0
    computed: int = 0
    forecast_rows: int = 0
    seconds: float = 0.0
    #: wall seconds of each system's forecasts (summed over partitions; without setup)
    per_system_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    #: the same forecasts' CPU seconds in the workers (the floor on this many cores)
    per_system_cpu_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    #: one-time setup in the workers: building each system, importing its libraries and
    #: loading its weights, summed over the workers that did it
    per_system_setup_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    #: systems the study names that cannot run here: system_id -> reason (raw.run_skipped_systems)
    skipped_systems: dict[str, str] = dataclasses.field(default_factory=dict)
    #: windows without a forecast (raw.forecast_failures) per system, in computed and reused
    #: partitions of the run
    failed_windows: dict[str, int] = dataclasses.field(default_factory=dict)
    #: windows a system forecast by its last-value fallback (raw.forecast_fallbacks) per
    #: system, in computed and reused partitions of the run
    fallback_windows: dict[str, int] = dataclasses.field(default_factory=dict)
    #: windows whose forecast copies a stretch of their context, per system with any (the same)
    copied_windows: dict[str, int] = dataclasses.field(default_factory=dict)

    def describe_problems(self) -> list[str]:
        """One line per skipped system and per system with failed, fallback or copied windows."""
        lines = [f"skipped {s}: {reason}" for s, reason in sorted(self.skipped_systems.items())]
        lines += [
            f"{s}: {n} window(s) without a forecast (see raw.forecast_failures; those windows "
            "are left out of every system's scores, see marts.forecast_failures_summary)"
            for s, n in sorted(self.failed_windows.items())
        ]
        lines += [
            f"{s}: {n} window(s) forecast by the last-value fallback, not the model (scored "
            "as its forecasts; see staging.stg_forecast_fallbacks, "
            "marts.forecast_failures_summary)"
            for s, n in sorted(self.fallback_windows.items())
        ]
        return lines + copies.copied_lines(self.copied_windows)


def failed_windows(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, int]:
    """Windows without a forecast per system, over the partitions the run uses."""
    return dict(
        con.execute(
            "select system_id, count(*)::integer from raw.forecast_failures "
            "where partition_key in (select partition_key from raw.run_partitions "
            "where run_id = ?) group by system_id order by system_id",
            [run_id],
        ).fetchall()
    )


def fallback_windows(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, int]:
    """Windows forecast by a system's last-value fallback, per system, over the partitions
    the run uses (none in a warehouse without raw.forecast_fallbacks)."""
    try:
        counts = con.execute(
            "select system_id, count(*)::integer from raw.forecast_fallbacks "
            "where partition_key in (select partition_key from raw.run_partitions "
            "where run_id = ?) group by system_id order by system_id",
            [run_id],
        ).fetchall()
    except duckdb.CatalogException:
        return {}
    return dict(counts)


def run_problems(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """What a stored run skipped, failed or fell back on, one line each (empty when nothing)."""
    skipped = dict(
        con.execute(
            "select system_id, reason from raw.run_skipped_systems where run_id = ?", [run_id]
        ).fetchall()
    )
    stored = RunSummary(
        run_id,
        skipped_systems=skipped,
        failed_windows=failed_windows(con, run_id),
        fallback_windows=fallback_windows(con, run_id),
        copied_windows=copies.copied_window_counts(con, run_id),
    )
    return stored.describe_problems()


def source_change_line(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    """One line naming the systems of ``run_id`` rated from forecasts an earlier run made on
    other prices (``marts.run_provenance.source_days_changed > 0``), each with its changed
    ticker-days, and the hint the mart's ``source_inputs_reason`` gives; None when there is
    none, or no such mart (a run not built)."""
    try:
        rows = con.execute(
            "select system_id, source_days_changed, source_run_id from marts.run_provenance "
            "where run_id = ? and source_days_changed > 0 order by system_id",
            [run_id],
        ).fetchall()
    except duckdb.CatalogException:
        return None
    if not rows:
        return None
    systems = ", ".join(
        f"{system} ({changed} ticker-day(s) changed since run {source} forecast it)"
        for system, changed, source in rows
    )
    ids = ",".join(system for system, *_ in rows)
    return (
        f"rated from forecasts made on other prices: {systems}; their scores compare "
        f"forecasts of one series with another. Forecast them again on this run's inputs: "
        f"tsrate run --systems {ids} (an imported model: tsrate export-inputs, then "
        "import-predictions); see marts.run_provenance.source_inputs_reason"
    )
