"""The warehouse a test's commands find through the environment, and a published snapshot
beside it that records publications (its ``published_runs`` table, with publish's columns):
what ``tsrate status`` and ``tsrate runs`` read about runs. No test here."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb


def warehouse_env(path: Path, monkeypatch) -> Path:
    """``path`` as ``TSRATE_WAREHOUSE``, with no ``TSRATE_PUBLISHED`` override: its snapshot
    is the default one beside it (``published/tsrate.duckdb``)."""
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    return path


def published_runs_snapshot(
    warehouse: Path, rows: list[tuple[str, dt.datetime | None, str | None]]
) -> Path:
    """A published snapshot beside ``warehouse`` whose published_runs holds ``rows``
    (run_id, published_at or None for the time of the insert, study JSON); returns it."""
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(snapshot)) as con:
        con.execute(
            "create table published_runs (run_id varchar, published_at timestamp, "
            "study json, row_counts json, parquet_path varchar)"
        )
        for run_id, published_at, study in rows:
            con.execute(
                "insert into published_runs values "
                "(?, coalesce(?, now()::timestamp), ?, '{}', null)",
                [run_id, published_at, study],
            )
    return snapshot


def listed_rows(out: str) -> list[dict[str, str]]:
    """The rows of the table ``tsrate runs`` prints, each column -> cell (right-aligned
    cells: each ends where its header ends)."""
    header, *lines = out.splitlines()
    ends, position = [], 0
    for name in header.split():
        position = header.index(name, position) + len(name)
        ends.append((name, position))
    table = []
    for line in lines:
        row, start = {}, 0
        for name, end in ends:
            row[name] = line[start:end].strip()
            start = end
        table.append(row)
    return table
