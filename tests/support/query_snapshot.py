"""A published snapshot holding a few hand-made marts, and ``tsrate query`` run on it in this
process, for the query command's tests. No test here."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tsrate import cli
from tsrate.platform.publish import published_path


def published_marts(live: Path, *statements: str) -> Path:
    """The snapshot ``live`` publishes to, with a ``marts`` schema and ``statements`` run in
    it (the live warehouse is left as it is); returns the snapshot."""
    snapshot = published_path(live)
    snapshot.parent.mkdir(parents=True)
    con = duckdb.connect(str(snapshot))
    try:
        con.execute("create schema marts")
        for statement in statements:
            con.execute(statement)
    finally:
        con.close()
    return snapshot


def run_query(capsys, *args: str) -> tuple[int, str, str]:
    """``tsrate query ARGS``: its exit code, stdout and stderr."""
    code = cli.main(["query", *args])
    out, err = capsys.readouterr()
    return code, out, err
