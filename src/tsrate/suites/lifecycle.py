"""One suite-run lifecycle for every suite: ``raw.suite_runs`` and its status changes.

Every suite run is one row of ``raw.suite_runs`` (grain: suite run), whatever the suite:

* ``suite`` — the :data:`tsrate.suites.SUITES` key; ``suite_run_id`` — ``<prefix>-<UTC
  stamp>-<6 hex>`` (:func:`new_suite_run_id`);
* ``status`` — ``running`` -> the suite's ready status (``answered`` or ``trained``: every
  answer or model is stored) -> ``succeeded`` (marts built and published), or ``failed`` /
  ``build_failed``; staging calls it ``suite_run_status`` in every suite;
* ``config`` — what the run was asked to do (JSON); ``details`` — the suite's sizes and
  names (JSON object, e.g. ``{"config_name": "small", "n_prompts": 120}``), which the
  suite's staging view turns into typed columns; ``message`` — why it failed.

:func:`ensure_suite_tables` creates ``raw.suite_runs`` and every registered suite's raw tables
(one definition each, in ``tsrate.suites.<name>.schema``, collected by
:mod:`tsrate.platform.raw_schema`); each suite run creates them at its start (with every other
raw table), so the staging views read their sources plainly. Warehouses written before this table existed kept one
``raw.<prefix>_suite_runs`` table per suite: their rows are copied in once (the old tables
stay, untouched).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.platform.raw_schema import create_raw_tables, create_suite_tables


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def ensure_suite_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create every suite raw table when missing (idempotent) and copy in the rows of the
    per-suite run tables of older warehouses."""
    create_suite_tables(con)


def new_suite_run_id(suite: str) -> str:
    """``<suite prefix>-<UTC yyyymmddThhmmss>-<6 random hex>``: sortable by start, unique."""
    from tsrate.suites import get_suite

    prefix = get_suite(suite).prefix
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{prefix}-{stamp}-{uuid.uuid4().hex[:6]}"


def start_suite_run(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    suite_run_id: str,
    config: dict,
    details: dict,
) -> None:
    """Record a suite run in status ``running``, creating any missing raw table first. Runs
    inside the caller's transaction when there is one, so a suite can store its plan in the
    same transaction."""
    from tsrate.suites import get_suite

    get_suite(suite)
    create_raw_tables(con)  # a suite run's start is a writing edge
    con.execute(
        "insert into raw.suite_runs values (?, ?, ?, null, 'running', ?, ?, null)",
        [
            suite,
            suite_run_id,
            _now(),
            json.dumps(config, sort_keys=True, default=str),
            json.dumps(details, sort_keys=True, default=str),
        ],
    )


def finish_suite_run(
    con: duckdb.DuckDBPyConnection, suite_run_id: str, status: str, message: str | None = None
) -> None:
    """Set the suite run's status (and finish time, and the message of a failure)."""
    updated = con.execute(
        "update raw.suite_runs set status = ?, finished_at = ?, message = ? "
        "where suite_run_id = ? returning suite_run_id",
        [status, _now(), message, suite_run_id],
    ).fetchall()
    if not updated:
        raise TsrateError(f"no suite run {suite_run_id!r} in raw.suite_runs")


def suite_run_status(con: duckdb.DuckDBPyConnection, suite_run_id: str) -> str:
    """The stored status of ``suite_run_id`` (a TsrateError when there is no such run)."""
    row = con.execute(
        "select status from raw.suite_runs where suite_run_id = ?", [suite_run_id]
    ).fetchone()
    if row is None:
        raise TsrateError(f"no suite run {suite_run_id!r} in raw.suite_runs")
    return row[0]


def end_suite_run(
    warehouse: str | Path, suite_run_id: str, status: str, error: BaseException | None = None
) -> None:
    """Open the warehouse and record the suite run's ``status`` (with ``error``'s text, cut
    to 500 characters, as the message of a failure)."""
    from tsrate.platform.warehouse import connect

    with connect(warehouse) as con:
        finish_suite_run(con, suite_run_id, status, None if error is None else str(error)[:500])


def insert_frame(
    con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, skip_existing: bool = False
) -> None:
    """Append ``frame`` to ``raw.<table>`` by column name; with ``skip_existing`` rows whose
    primary key is stored already are kept as they are (``on conflict do nothing``)."""
    if frame.empty:
        return
    con.register("incoming_rows", frame)
    try:
        columns = ", ".join(frame.columns)
        suffix = " on conflict do nothing" if skip_existing else ""
        con.execute(
            f"insert into raw.{table} ({columns}) select {columns} from incoming_rows{suffix}"
        )
    finally:
        con.unregister("incoming_rows")


def watch_model(answerer: object, progress: Callable[[str], None]) -> None:
    """Let a suite's language-model answerer say how far a long call has got: a model with a
    ``progress`` hook (a local ``hf_local`` model) reports after each of its batches,
    prefixed with the answerer's id (a CPU-bound model may take minutes per suite chunk);
    other answerers are left as they are."""
    model = getattr(answerer, "model", None)
    if model is not None and hasattr(model, "progress"):
        system_id = getattr(answerer, "system_id", "model")
        model.progress = lambda text: progress(f"{system_id}: {text}")
