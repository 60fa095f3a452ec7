"""Whether an import would switch the warehouse to another study: ``tsrate
import-predictions --manifest`` (the manifest's study) or ``tsrate import`` (its study flags').

An import rates its study and publishes it: a study this warehouse never ran (a typo in the
export folder or in a flag, another warehouse's export) would forecast that study's baselines
(minutes) and publish it over the study the snapshot holds. :func:`check_study_switch`
refuses such an import up front, naming both studies, unless the user opts in
(``--switch-study``); then it says first what the import will compute and publish. An import
of the study the warehouse holds, or of any study it has a run of, is imported as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.robustness.blackbox.validation import shortened
from tsrate.robustness.companies import study_companies
from tsrate.robustness.studies import (
    canonical_json,
    current_study_id,
    study_definition,
    study_name,
)


def _has_run_studies(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_columns() where schema_name = 'raw' "
            "and table_name = 'runs' and column_name = 'study_id'"
        ).fetchone()[0]
    )


def published_study_id(snapshot: Path) -> str | None:
    """The study of the snapshot's newest core publication (None: no readable snapshot, or
    one of an earlier release without study ids)."""
    from tsrate.platform.publish import snapshot_rows

    rows = snapshot_rows(
        snapshot,
        "select study_id from published_runs where study_id is not null "
        "order by published_at desc nulls last limit 1",
    )
    return str(rows[0][0]) if rows else None


def _held_study(con: duckdb.DuckDBPyConnection, snapshot: Path) -> str | None:
    """The study the warehouse holds: the published one, else that of the newest run with
    complete forecasts (the run a build would take; a run that failed or stopped before
    them holds nothing)."""
    return published_study_id(snapshot) or current_study_id(con)


def _describe(tickers: list[str], start: object, end: object) -> str:
    count = f"{len(tickers)} ticker{'s' if len(tickers) != 1 else ''}"
    return f"{count} {shortened(sorted(tickers))}; {start} to {end}"


#: Where the import's study comes from: how the refusal names it, and what to check first.
ORIGINS = {
    "manifest": (
        "the manifest's study",
        "check the --manifest folder: `tsrate export-inputs` exports this warehouse's study",
    ),
    "flags": (
        "the study of the flags",
        "check the study flags (--tickers, --start, --end, ...; without them: the vars' "
        "study): `tsrate studies` lists this warehouse's studies",
    ),
}


def check_study_switch(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    snapshot: Path,
    *,
    switch: bool,
    with_baselines: bool,
    build: bool,
    origin: str = "manifest",
) -> str:
    """'' when the import's ``study`` (its manifest's or its study flags', ``origin``) is the
    study the warehouse holds (``snapshot``'s, else the newest run's with complete
    forecasts), has a run here, or the warehouse holds none yet. Otherwise a one-line
    :class:`TsrateError` naming both studies as ``tsrate studies`` does (name and id), or
    with ``switch`` the line to print first: what the import will compute
    (``with_baselines``) and publish (``build``)."""
    if not _has_run_studies(con):
        return ""
    name, study_id = study_name(con, study, study_companies(con))
    ran = con.execute("select count(*) from raw.runs where study_id = ?", [study_id]).fetchone()
    held = _held_study(con, snapshot)
    if ran[0] or held is None or held == study_id:
        return ""
    row = con.execute(
        "select study_name, tickers, study_start, study_end from raw.studies where study_id = ?",
        [held],
    ).fetchone()
    held_name, held_text = (row[0], _describe(list(row[1]), row[2], row[3])) if row else (held, "")
    described = _describe(list(study.tickers), study.start, study.end)
    label, check = ORIGINS[origin]
    theirs = f"{label} {name} ({study_id}; {described})"
    ours = f"study {held_name} ({held}; {held_text})" if held_text else f"study {held_name}"
    work = (
        f"forecast its baselines ({', '.join(study.systems)} on {described.split(';')[0]} × "
        f"{len(study.perturbations)} perturbations: minutes) beside the file"
        if with_baselines and study.systems
        else "store the file's forecasts alone (--no-baselines)"
    )
    then = (
        f"publish it in place of {held_name} (tsrate build --study {held_name} brings that back)"
        if build
        else f"the snapshot keeps {held_name} (--no-build)"
    )
    if not switch:
        error = TsrateError(
            f"{theirs} is not this warehouse's {ours} and has no run here"
            f"{_metadata_only(con, study, held)}: this import would {work}; {then}"
        )
        error.hint = f"{check}; --switch-study rates and publishes that study here"
        raise error
    return (
        f"--switch-study: {theirs} is new to this warehouse (it holds {ours}): this import "
        f"will {work}; {then}"
    )


def _metadata_only(con: duckdb.DuckDBPyConnection, study: Study, held: str) -> str:
    """When ``study`` and the ``held`` one are the same but for their companies' metadata
    (stored since the held one ran, e.g. by an ingest of a file with company columns):
    which tickers and fields differ, as a clause of the refusal; '' otherwise."""
    row = con.execute("select definition from raw.studies where study_id = ?", [held]).fetchone()
    if row is None:
        return ""
    old = json.loads(row[0])
    new = json.loads(canonical_json(study_definition(study, study_companies(con))))
    if {k: v for k, v in old.items() if k != "companies"} != {
        k: v for k, v in new.items() if k != "companies"
    }:
        return ""
    before = {c["ticker"]: c for c in old.get("companies") or []}
    after = {c["ticker"]: c for c in new.get("companies") or []}
    changed = []
    for ticker in sorted(set(before) | set(after)):
        was, now = before.get(ticker, {}), after.get(ticker, {})
        fields = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
        if fields:
            changed.append(f"{ticker} ({', '.join(fields)})")
    if not changed:
        return ""
    shown = "; ".join(changed[:3]) + (" ..." if len(changed) > 3 else "")
    return (
        f"; the two differ only in the companies' metadata, stored since that study ran (an "
        f"ingest of a price file with company columns replaces it): {shown}"
    )
