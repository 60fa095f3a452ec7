"""The run ``tsrate build`` describes: the newest with complete forecasts, or a named one.

Checked before dbt starts, so a build with nothing to describe is refused in one line with a
hint instead of making empty marts.
"""

from __future__ import annotations

from pathlib import Path

from tsrate import TsrateError

#: run statuses whose forecasts are complete (the build can describe them)
FORECASTED = ("forecasted", "succeeded", "build_failed", "publish_failed")


def run_to_build(warehouse: Path, run_id: str | None = None) -> str:
    """The run ``tsrate build`` will describe, or a one-line :class:`TsrateError` with a hint.

    ``run_id`` None: the newest run whose forecasts are complete with status ``forecasted``,
    ``succeeded`` or ``publish_failed`` (what the dbt var ``run_id: latest`` selects). A named run must exist
    and have complete forecasts (any status of :data:`FORECASTED`). Without such a run the
    build would make empty marts, so it is refused.
    """
    import duckdb

    warehouse = Path(warehouse)
    if not warehouse.exists():
        raise TsrateError(
            f"no warehouse at {warehouse}: nothing to build; `tsrate run` forecasts the study "
            "and builds the marts"
        )
    try:
        con = duckdb.connect(str(warehouse), read_only=True)
    except duckdb.Error as exc:
        raise TsrateError(f"cannot read the warehouse {warehouse}: {exc}") from exc
    try:
        has_runs = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'raw' and table_name = 'runs'"
        ).fetchone()[0]
        runs = (
            con.execute(
                "select run_id, status from raw.runs order by started_at desc, run_id desc"
            ).fetchall()
            if has_runs
            else []
        )
    finally:
        con.close()
    status = dict(runs)
    if run_id is not None:
        if run_id not in status:
            raise TsrateError(f"no run {run_id!r} in raw.runs; see `tsrate runs`")
        if status[run_id] not in FORECASTED:
            raise TsrateError(
                f"run {run_id!r} is {status[run_id]!r}: its forecasts are incomplete, so its "
                "marts would be empty or partial; finish it with `tsrate run` (finished "
                "partitions are reused) or pick another with --run-id (see `tsrate runs`)"
            )
        return run_id
    for candidate, candidate_status in runs:
        if candidate_status in ("forecasted", "succeeded", "publish_failed"):
            return candidate
    newest = f" (the newest, {runs[0][0]}, is {runs[0][1]!r})" if runs else ""
    raise TsrateError(
        f"no forecast run to build marts for in {warehouse}{newest}: `tsrate run` forecasts "
        "the study and builds, `tsrate import FILE --system ID` rates a model's predictions"
    )
