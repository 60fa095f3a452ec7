"""The published snapshot opens in DuckDB 1.x clients (what BI drivers bundle).

``.ci/run`` installs the newest ``duckdb<2`` wheel into its own virtual environment and
exports its interpreter as ``TSRATE_DUCKDB1_PYTHON``; the client test runs there. Without
that variable the test skips and says why, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import textwrap
from pathlib import Path

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.platform.publish import SNAPSHOT_STORAGE_VERSION, publish

#: DuckDB's storage format numbers: what ``v1.0.0`` writes, what DuckDB 1.x reads.
STORAGE_FORMAT_V1_0 = 64
READABLE_BY_DUCKDB_1 = range(64, 69)


def _storage_format(path: Path) -> int:
    """The storage format number in a DuckDB file's main header (bytes 12-19, after 'DUCK')."""
    header = path.read_bytes()[:20]
    assert header[8:12] == b"DUCK", "not a DuckDB file"
    return struct.unpack("<Q", header[12:20])[0]


def _live(path: Path) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema raw; create schema marts; create schema seeds")
        con.execute("create table raw.runs (run_id varchar, study json)")
        con.execute("insert into raw.runs values ('run-a', ?)", [json.dumps({"n": 3})])
        con.execute(
            "create table marts.ratings as select 'run-a' as run_id, 'sys' || range as "
            "system_id, [range, range + 1] as ranks, range * 0.25 as score, "
            "timestamp '2024-01-02 03:04:05' as rated_at from range(3)"
        )
        con.execute("comment on table marts.ratings is 'One row per system.'")
        con.execute("comment on column marts.ratings.score is 'Mean score (higher is better).'")
        con.execute("create table seeds.systems as select 'sys0' as system_id")
    finally:
        con.close()


@pytest.fixture
def snapshot(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_SNAPSHOT_STORAGE_VERSION", raising=False)
    warehouse = tmp_path / "tsrate.duckdb"
    _live(warehouse)
    return publish(warehouse, "run-a", parquet=False).path


def test_the_snapshot_is_written_in_a_format_duckdb_1_reads(snapshot, tmp_path, monkeypatch):
    assert SNAPSHOT_STORAGE_VERSION == "v1.0.0"
    assert _storage_format(snapshot) == STORAGE_FORMAT_V1_0
    assert _storage_format(snapshot) in READABLE_BY_DUCKDB_1
    # the live warehouse (DuckDB 2.x default) is outside that range: the setting matters
    assert _storage_format(tmp_path / "tsrate.duckdb") not in READABLE_BY_DUCKDB_1
    monkeypatch.setenv("TSRATE_SNAPSHOT_STORAGE_VERSION", "v0.0.1-nonsense")
    with pytest.raises(TsrateError, match="TSRATE_SNAPSHOT_STORAGE_VERSION"):
        publish(tmp_path / "tsrate.duckdb", "run-a", parquet=False)
    assert _storage_format(snapshot) == STORAGE_FORMAT_V1_0  # the old snapshot stays


CLIENT = textwrap.dedent(
    """
    import json, sys
    import duckdb

    con = duckdb.connect(sys.argv[1], read_only=True)
    rows = con.execute("select system_id, score::double from marts.ratings order by system_id").fetchall()
    comment = con.execute(
        "select comment from duckdb_columns() where schema_name = 'marts' "
        "and table_name = 'ratings' and column_name = 'score'"
    ).fetchone()[0]
    runs = con.execute("select run_id from published_runs").fetchall()
    print(json.dumps({"version": duckdb.__version__, "rows": rows, "comment": comment,
                      "runs": runs}))
    """
)


def test_a_duckdb_1_client_opens_the_snapshot_and_reads_a_mart_and_its_comment(snapshot):
    python = os.environ.get("TSRATE_DUCKDB1_PYTHON")
    if not python:
        reason = (
            "TSRATE_DUCKDB1_PYTHON is not set: .ci/run installs the newest duckdb<2 wheel "
            "in its own venv and sets it"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    done = subprocess.run(
        [python, "-c", CLIENT, str(snapshot)],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["version"].startswith("1."), seen["version"]
    assert seen["rows"] == [["sys0", 0.0], ["sys1", 0.25], ["sys2", 0.5]]
    assert seen["comment"] == "Mean score (higher is better)."
    assert seen["runs"] == [["run-a"]]
