"""One study's runs in a warehouse of the current raw schema, oldest first, one of each
final status, for the buildable-run tests. No test here."""

from __future__ import annotations

import duckdb

from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.studies import ensure_studies

#: (run_id, started_at, status) of one study, oldest first
RUNS = [
    ("r1-succeeded", "2026-01-01 00:00:00", "succeeded"),
    ("r2-publish-failed", "2026-01-02 00:00:00", "publish_failed"),
    ("r3-build-failed", "2026-01-03 00:00:00", "build_failed"),
    ("r4-failed", "2026-01-04 00:00:00", "failed"),
]


def runs_warehouse(path) -> duckdb.DuckDBPyConnection:  # noqa: ANN001 - a Path
    con = duckdb.connect(str(path))
    create_raw_tables(con)
    ensure_studies(con)  # adds raw.runs.study_id
    for run_id, started, status in RUNS:
        con.execute(
            "insert into raw.runs (run_id, started_at, status, study_hash, study, tickers, "
            "systems, perturbations, study_start, study_end, context_length, horizon, stride, "
            "perturbation_phase, message, study_id) values (?, ?::timestamp, ?, 'h', '{}', "
            "['AAPL'], ['naive'], ['P0'], '2022-01-01', '2022-06-30', 30, 5, 5, 0, ?, 's1')",
            [run_id, started, status, f"{status} of {run_id}"],
        )
    return con
