"""Publish the marts of a successful run as a read-only snapshot for readers and BI tools.

The live warehouse has one writer at a time (DuckDB's rule), so dashboards must not read it.
After each successful build the marts and seeds are copied into a new DuckDB file, which
then replaces ``published/tsrate.duckdb`` by an atomic rename: a reader sees the previous
snapshot or the new one, never a half-built state, and never blocks a run. Table and
column descriptions (dbt persist_docs comments) travel with the tables.

The same tables are written as Parquet for BI tools that read files
(``published/parquet/<schema>/<table>.parquet``). ``published/parquet`` is a symbolic link
to one finished folder per publication under ``published/parquet-runs/`` (named by the run
id; ``<run id>.<n>`` when the run is published again); it is swapped by
an atomic rename of a new link, so a reader sees every file of one run. The previous
publication's folder is kept for readers still in it; older ones are removed.

Readable by DuckDB 1.x: the snapshot is written with DuckDB's storage compatibility version
:data:`SNAPSHOT_STORAGE_VERSION` (``v1.0.0``, storage format 64), which every DuckDB client
from 1.0 on opens (the 1.x CLI, Python, JDBC and ODBC drivers that BI tools bundle, and
2.x). DuckDB 2.x's own default format (69) is refused by 1.x clients ("can only read
64-68"). Override with ``TSRATE_SNAPSHOT_STORAGE_VERSION`` (e.g. ``latest``) when every
reader is 2.x.

Crash safety: everything is written under temporary names first (``*.partial``); a kill at
any point leaves the previous snapshot and Parquet untouched, and the next publish removes
the leftovers. A swap that fails (a real folder where the link should be, an error renaming
the DuckDB file) removes the new files at once and points the link back: the previous
publication stays, whole. ``tsrate run`` and ``tsrate build`` refuse such a folder before they
start (:func:`tsrate.platform.published_paths.check_parquet_link`). The two swaps (Parquet link, then DuckDB file) are two renames: a
kill exactly between them leaves Parquet one run ahead of the DuckDB file until the next
publish. Callers hold the warehouse writer lock (:mod:`tsrate.platform.locking`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb

from tsrate import TsrateError
from tsrate.platform.published_paths import (  # light: a run's pre-flight check imports them
    PARQUET_LINK,
    parquet_path,
    published_path,
)
from tsrate.platform.stages import pause_point
from tsrate.platform.warehouse import duckdb_settings
from tsrate.suites import unbuilt_suite_marts  # the registry: a leaf module

PUBLISHED_SCHEMAS = ("marts", "seeds")
PARQUET_VERSIONS = "parquet-runs"
#: DuckDB storage compatibility version of the published snapshot: readable from DuckDB 1.0 on.
SNAPSHOT_STORAGE_VERSION = "v1.0.0"


@dataclasses.dataclass(frozen=True)
class PublishResult:
    path: Path
    run_id: str
    row_counts: dict[str, int]
    parquet_path: Path | None = None


#: The descriptions of ``published_runs``' columns, stored as DuckDB column comments.
PUBLISHED_RUNS_COLUMNS = {
    "run_id": "The run (or suite run) whose marts this publication holds; the newest row is "
    "the one the snapshot holds now.",
    "published_at": "When it was published (UTC).",
    "study": "The run's study (tickers, period, window, perturbations, systems) as JSON; null "
    "for a suite publication.",
    "row_counts": "Rows of every table copied, as JSON (schema.table -> rows).",
    "parquet_path": "Its Parquet folder, relative to the snapshot's folder; null: not exported.",
    "systems": "The run's own systems, imported ones included (the study's list leaves those "
    "out); an earlier import that the publication still rates is not among them: "
    "systems_rated lists what the snapshot rates. Null for a suite publication and in rows "
    "of snapshots published before it.",
    "study_id": "The run's study id (marts.ratings.study_id; `tsrate studies` lists it); "
    "null for a suite publication and in rows of snapshots published before it.",
    "study_name": "The study's name as `tsrate studies` shows it: `default` (the vars' study) "
    "or `study-` and its id's first 8 characters; null as study_id.",
    "systems_rated": "The systems this publication's marts rate (marts.ratings has rows of "
    "them for run_id), sorted: the run's own and those rated from earlier runs of the study "
    "(an import stays rated after later runs); what a dashboard shows. Null for a suite "
    "publication and in rows of snapshots published before it.",
    "withdrawn": "The systems withdrawn from the study (`tsrate withdraw`) and left out of "
    "these marts, as JSON: system id -> {withdrawn_at, reason}, as `tsrate studies` "
    "lists them; {} none. Null for a suite publication and in rows of snapshots published "
    "before it.",
}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def published_run_ids(snapshot: Path) -> set[str]:
    """The runs (and suite runs) ``snapshot`` records a publication of; none without a
    readable snapshot."""
    if not Path(snapshot).exists():
        return set()
    try:
        with duckdb.connect(str(snapshot), read_only=True) as con:
            return {row[0] for row in con.execute("select run_id from published_runs").fetchall()}
    except duckdb.Error:  # unreadable: nothing to reconcile with (publish says what is wrong)
        return set()


def remove_leftovers(target: Path) -> list[Path]:
    """Delete ``*.partial`` files and folders of publishes that were killed; return them."""
    removed = []
    versions = target.parent / PARQUET_VERSIONS
    candidates = [*target.parent.glob(f".{target.name}.*.partial")]
    candidates += [*target.parent.glob(f".{PARQUET_LINK}.*.partial")]
    if versions.is_dir():
        candidates += [*versions.glob(".*.partial")]
    for path in candidates:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def publish(
    warehouse: Path,
    run_id: str,
    target: Path | None = None,
    parquet: bool = True,
    before_swap: Callable[[], None] | None = None,
    beside: Callable[[Path], Callable[[], None]] | None = None,
) -> PublishResult:
    """Copy marts and seeds of the live ``warehouse`` into a snapshot swapped in atomically.

    With ``parquet`` the same tables land as Parquet under ``published/parquet`` too.
    ``before_swap`` is called once everything is written and nothing swapped in yet (the
    warehouse is no longer read): when it raises, what was written is removed and the
    previous snapshot stays (``tsrate run`` waits there for the build's data tests).
    ``beside`` is called with the new snapshot's temporary path once its tables are written
    (it may read the file, read-only, e.g. to render the report while the Parquet files are
    written); the function it returns is called when the file is about to be renamed, and
    must return once nothing reads it any more.
    """
    warehouse = Path(warehouse)
    target = Path(target or published_path(warehouse))
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target)
    staging = target.with_name(f".{target.name}.{run_id}.partial")
    versions = target.parent / PARQUET_VERSIONS
    # the run id, unless it was published before (a folder there, or one recorded)
    folder = _version_name(versions, run_id, _recorded_folders(target))
    version = versions / folder
    parquet_staging = versions / f".{run_id}.partial"
    done_beside: Callable[[], None] | None = None
    try:
        con = duckdb.connect(str(staging), config=snapshot_settings())
    except duckdb.InvalidInputException as exc:
        raise TsrateError(
            f"cannot write the snapshot: {str(exc).splitlines()[0]} (check "
            "TSRATE_SNAPSHOT_STORAGE_VERSION, e.g. v1.0.0 or latest)"
        ) from None
    try:
        # one transaction for the whole snapshot: each statement on its own would be its own
        # commit (a WAL write and sync per table, per comment), and the file is a temporary
        # one that nobody reads before the rename
        con.execute("begin")
        counts = _copy_tables(con, warehouse)
        study, systems, study_id, study_name = _run_study(con, run_id)
        rated = withdrawn = None
        if study is not None:  # a core run's publication (a suite run has no study)
            rated = _rated_systems(con, run_id)
            published = {run_id, *published_run_ids(target)}
            withdrawn = _withdrawn(con, study_id, published, rated or [])
        con.execute("detach live")
        con.execute(
            "create table published_runs (run_id varchar, published_at timestamp, "
            "study json, row_counts json, parquet_path varchar, systems varchar[], "
            "study_id varchar, study_name varchar, systems_rated varchar[], withdrawn json)"
        )
        if target.exists():
            con.execute(f"attach {_literal(target)} as previous (read_only)")
            # by name: older snapshots lack parquet_path (before the Parquet export) and
            # systems (before imported systems were recorded here), study_id and study_name
            # (before the study was named here), systems_rated and withdrawn: null in their rows
            con.execute("insert into published_runs by name select * from previous.published_runs")
            con.execute("detach previous")
        con.execute(
            "insert into published_runs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                study,
                json.dumps(counts),
                f"{PARQUET_VERSIONS}/{folder}" if parquet else None,
                systems,
                study_id,
                study_name,
                rated,
                withdrawn,
            ],
        )
        con.execute(
            "comment on table published_runs is 'One row per publication of this snapshot: "
            "the run whose marts it holds, when, its study, row counts, its Parquet folder "
            "(relative to the snapshot folder; null: not exported), its systems, its study id and "
            "study name, the systems it rates and those withdrawn from its study.'"
        )
        for column, text in PUBLISHED_RUNS_COLUMNS.items():  # a BI tool shows them too
            con.execute(f"comment on column published_runs.{column} is {_literal(text)}")
        con.execute("commit")
        con.execute("checkpoint")
        if beside is not None:  # read-only from here on, as the reader beside us
            con.close()
            con = duckdb.connect(str(staging), read_only=True)
            done_beside = beside(staging)
        if parquet:
            shutil.rmtree(version, ignore_errors=True)  # a half-swapped earlier try of this run
            write_parquet(con, parquet_staging)
            os.replace(parquet_staging, version)
    except BaseException:
        con.close()
        if done_beside is not None:
            done_beside()
        staging.unlink(missing_ok=True)
        shutil.rmtree(parquet_staging, ignore_errors=True)
        raise
    con.close()
    try:
        if done_beside is not None:
            done_beside()
        if before_swap is not None:
            before_swap()
    except BaseException:
        staging.unlink(missing_ok=True)
        shutil.rmtree(version, ignore_errors=True)
        raise
    pause_point("publish")  # test hook: everything written, nothing swapped in yet
    link, destination = parquet_path(target), Path(PARQUET_VERSIONS) / folder
    before = os.readlink(link) if link.is_symlink() else None
    try:
        if parquet:
            _swap_link(link, destination, run_id)
        os.replace(staging, target)  # atomic on one filesystem: readers see old or new
    except BaseException:
        staging.unlink(missing_ok=True)
        if parquet:
            _undo_swap(link, before, destination, run_id)
        raise
    if parquet:
        _prune_versions(versions, keep={folder, *_previous_run(target, folder)})
    return PublishResult(target, run_id, counts, parquet_path(target) if parquet else None)


def study_change(snapshot: Path) -> str | None:
    """One line when the snapshot's newest publication holds another study than the core
    publication before it (suite publications between them skipped: they leave the core
    marts as they were): which study it holds now, which it held, and how to bring that one
    back. A core publication is told from a suite's by its ``study`` (a core run's, never
    null; a suite run has none). A core one before the newest that names no study (published
    before ``study_id`` was recorded) is still the one replaced: the line says its study is
    not recorded rather than claim a change or none. None when the study is the same, on a
    first publication, when the newest is a suite's or names no study."""
    if not Path(snapshot).exists():
        return None
    try:
        with duckdb.connect(str(snapshot), read_only=True) as con:
            newest = con.execute(
                "select study is null from published_runs "
                "order by published_at desc nulls last limit 1"
            ).fetchone()
            rows = con.execute(  # the two newest core publications (a suite's has no study)
                "select study_id, study_name from published_runs where study is not null "
                "order by published_at desc nulls last limit 2"
            ).fetchall()
    except duckdb.Error:  # an older snapshot without study ids, or not readable now
        return None
    if newest is None or newest[0]:
        return None
    if len(rows) < 2 or not rows[0][0] or rows[0][0] == rows[1][0]:
        return None
    now = rows[0][1] or rows[0][0]
    if not rows[1][0]:
        return (
            f"the snapshot now holds study {now}; the study it held is not recorded (published "
            "by an older release): tsrate studies lists the studies, tsrate build --study NAME "
            "brings one back"
        )
    before = rows[1][1] or rows[1][0]
    return (
        f"the snapshot now holds study {now} (it held {before}): tsrate query, the report "
        f"and BI tools show {now}; to bring {before} back: tsrate build --study {before}"
    )


def _run_study(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple:
    """The study (JSON), systems, study id and study name of ``run_id`` in the attached
    ``live`` warehouse: all None for a suite run (not in raw.runs); each of the last three
    None where the warehouse lacks its column (raw.runs.systems, raw.runs.study_id,
    raw.studies)."""
    present = {
        (table, column)
        for table, column in con.execute(
            "select table_name, column_name from duckdb_columns() where database_name = 'live' "
            "and schema_name = 'raw' and table_name in ('runs', 'studies')"
        ).fetchall()
    }
    systems = "r.systems" if ("runs", "systems") in present else "null::varchar[]"
    if ("runs", "study_id") not in present:
        named, studies = "null::varchar, null::varchar", ""
    elif ("studies", "study_name") not in present:
        named, studies = "r.study_id, null::varchar", ""
    else:
        named, studies = "r.study_id, s.study_name", "left join live.raw.studies s using (study_id)"
    row = con.execute(
        f"select r.study, {systems}, {named} from live.raw.runs r {studies} where r.run_id = ?",
        [run_id],
    ).fetchone()
    return tuple(row) if row else (None, None, None, None)


def _rated_systems(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str] | None:
    """The systems the copied marts.ratings has rows of for ``run_id`` (sorted): what the
    snapshot rates, imported systems rated from earlier runs of the study included; None
    without the mart (or its run_id and system_id columns)."""
    (keys,) = con.execute(
        "select count(*) from duckdb_columns() where database_name = current_database() "
        "and schema_name = 'marts' and table_name = 'ratings' "
        "and column_name in ('run_id', 'system_id')"
    ).fetchone()
    if keys < 2:
        return None
    rows = con.execute(
        "select distinct system_id from marts.ratings where run_id = ? order by 1", [run_id]
    ).fetchall()
    return [row[0] for row in rows]


def _withdrawn(
    con: duckdb.DuckDBPyConnection, study_id: str | None, published: set[str], rated: list[str]
) -> str:
    """The systems withdrawn from ``study_id`` and left out of its marts, read from the
    attached ``live`` warehouse as ``tsrate studies`` reads them
    (:func:`tsrate.robustness.studies.withdrawn_systems`), as JSON: system id ->
    ``{"withdrawn_at": "YYYY-MM-DD HH:MM:SS", "reason": ...}``. ``published``: the runs
    published in the snapshot, this one included. A system the marts still rate
    (``rated``: a single-run view shows a run's own systems) is not left out: not listed."""
    from tsrate.robustness.studies import withdrawn_systems

    here = con.execute("select current_database()").fetchone()[0]
    con.execute("use live")  # withdrawn_systems reads raw.* of the default database
    try:
        rows = withdrawn_systems(con, published)
    finally:
        con.execute(f"use {_quote(here)}")
    return json.dumps(
        {
            row["system_id"]: {
                "withdrawn_at": f"{row['withdrawn_at']:%Y-%m-%d %H:%M:%S}",
                "reason": row["reason"],
            }
            for row in rows
            if row["study_id"] == study_id and row["system_id"] not in rated
        }
    )


def snapshot_rows(snapshot: Path, sql: str, params: list | None = None) -> list[tuple] | None:
    """The rows of ``sql`` on the published ``snapshot``, opened read-only; None when there is
    no snapshot or it cannot be read (an older release's without the columns asked for)."""
    if not Path(snapshot).exists():
        return None
    try:
        with duckdb.connect(str(snapshot), read_only=True) as con:
            return con.execute(sql, params or []).fetchall()
    except duckdb.Error:
        return None


def snapshot_settings() -> dict[str, str]:
    """Connection settings of the snapshot being written: tsrate's, plus the storage
    compatibility version (``TSRATE_SNAPSHOT_STORAGE_VERSION``, default
    :data:`SNAPSHOT_STORAGE_VERSION`)."""
    version = os.environ.get("TSRATE_SNAPSHOT_STORAGE_VERSION") or SNAPSHOT_STORAGE_VERSION
    return {**duckdb_settings(), "storage_compatibility_version": version}


def _copy_tables(con: duckdb.DuckDBPyConnection, warehouse: Path) -> dict[str, int]:
    """Copy marts and seeds (with their comments) from ``warehouse`` attached as ``live``."""
    con.execute(f"attach {_literal(warehouse)} as live (read_only)")
    relations = con.execute(
        "select schema_name, table_name, comment from duckdb_tables() "
        "where database_name = 'live' and schema_name in (select unnest($schemas)) "
        "union all "
        "select schema_name, view_name, comment from duckdb_views() "
        "where database_name = 'live' and schema_name in (select unnest($schemas)) "
        "order by 1, 2",
        {"schemas": list(PUBLISHED_SCHEMAS)},
    ).fetchall()
    # marts of a suite that never succeeded are empty leftovers: leave them out
    unbuilt = unbuilt_suite_marts(con)
    relations = [r for r in relations if not (r[0] == "marts" and r[1] in unbuilt)]
    if not any(schema == "marts" for schema, _, _ in relations):
        raise TsrateError(f"{warehouse} holds no marts to publish; run `tsrate build` first")
    column_comments: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, name, column, text in con.execute(  # one catalog query, not one per table
        "select schema_name, table_name, column_name, comment from duckdb_columns() "
        "where database_name = 'live' and schema_name in (select unnest($schemas)) "
        "and comment is not null order by schema_name, table_name, column_index",
        {"schemas": list(PUBLISHED_SCHEMAS)},
    ).fetchall():
        column_comments.setdefault((schema, name), []).append((column, _tidy(text)))
    counts: dict[str, int] = {}
    for schema, name, comment in relations:
        qualified = f"{_quote(schema)}.{_quote(name)}"
        con.execute(f"create schema if not exists {_quote(schema)}")
        # the copy returns its row count (a count(*) of the new table would read it again)
        copied = con.execute(f"create table {qualified} as select * from live.{qualified}")
        counts[f"{schema}.{name}"] = copied.fetchone()[0]
        comment = _tidy(comment)
        if comment:
            con.execute(f"comment on table {qualified} is {_literal(comment)}")
        for column, column_comment in column_comments.get((schema, name), []):
            con.execute(
                f"comment on column {qualified}.{_quote(column)} is {_literal(column_comment)}"
            )
    return counts


def write_parquet(con: duckdb.DuckDBPyConnection, folder: Path) -> list[Path]:
    """Write every published table of ``con`` to ``folder/<schema>/<table>.parquet``.

    Also ``published_runs.parquet`` and ``manifest.json`` (tables, row counts, descriptions,
    and a data dictionary: every column's type and description). Each Parquet file carries
    its table's description and its columns' (JSON) as key-value metadata, keys
    ``description`` and ``column_descriptions``.
    """
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tables = con.execute(
        "select schema_name, table_name, comment from duckdb_tables() "
        "where database_name = current_database() order by 1, 2"
    ).fetchall()
    described_columns: dict[tuple[str, str], dict[str, dict]] = {}
    for schema, name, column, kind, text in con.execute(  # one catalog query for all tables
        "select schema_name, table_name, column_name, data_type, comment from duckdb_columns() "
        "where database_name = current_database() order by schema_name, table_name, column_index"
    ).fetchall():
        described_columns.setdefault((schema, name), {})[column] = {
            "type": kind,
            "description": _tidy(text),
        }
    written = []
    manifest = {}
    for schema, name, comment in tables:
        comment = _tidy(comment)  # an older snapshot's may end with a newline
        relative = Path(name + ".parquet") if schema == "main" else Path(schema, name + ".parquet")
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        columns = described_columns.get((schema, name), {})
        # the descriptions travel inside the file too (Parquet key-value metadata):
        # `description` (the table's) and `column_descriptions` (JSON: column -> text)
        described = {c: v["description"] for c, v in columns.items() if v["description"]}
        metadata = (
            f"description: {_literal(comment or '')}, "
            f"column_descriptions: {_literal(json.dumps(described, sort_keys=True))}"
        )
        rows = con.execute(  # the copy returns the rows it wrote
            f"copy {_quote(schema)}.{_quote(name)} to {_literal(path)} "
            f"(format parquet, kv_metadata {{{metadata}}})"
        ).fetchone()[0]
        manifest[str(relative)] = {"rows": rows, "description": comment, "columns": columns}
        written.append(path)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return written


def _swap_link(link: Path, destination: Path, run_id: str) -> None:
    """Point ``link`` at ``destination`` by renaming a new link over it (atomic)."""
    if link.exists() and not link.is_symlink():
        raise TsrateError(
            f"{link} is a real folder, not the link tsrate swaps; move it away and publish again"
        )
    temporary = link.with_name(f".{link.name}.{run_id}.partial")
    temporary.unlink(missing_ok=True)
    os.symlink(destination, temporary, target_is_directory=True)
    os.replace(temporary, link)


def _undo_swap(link: Path, before: str | None, destination: Path, run_id: str) -> None:
    """After a failed swap: point ``link`` back where it pointed (``before``; no link when
    None) and remove the new Parquet folder ``destination`` (relative to the link's folder)
    unless the link still leads there."""
    link.with_name(f".{link.name}.{run_id}.partial").unlink(missing_ok=True)
    if link.is_symlink() and os.readlink(link) == str(destination):  # swapped: undo it
        with contextlib.suppress(OSError):
            if before is None:
                link.unlink()
            else:
                _swap_link(link, Path(before), run_id)
    if not (link.is_symlink() and os.readlink(link) == str(destination)):
        shutil.rmtree(link.parent / destination, ignore_errors=True)


def _version_name(versions: Path, run_id: str, recorded: set[str] = frozenset()) -> str:
    """The Parquet folder of a publication of ``run_id`` under ``versions``: the run id, or
    ``<run id>.<n>`` when a folder of that name is there already (the run is published again,
    e.g. by ``tsrate build`` after ``tsrate run``: readers may be in the earlier folder, which
    must not be rewritten under them) or an earlier publication recorded it (``recorded``:
    its folder may have been deleted since; two publications must not share one path)."""
    name, n = run_id, 1
    while (versions / name).exists() or name in recorded:
        n += 1
        name = f"{run_id}.{n}"
    return name


def _recorded_folders(target: Path) -> set[str]:
    """The Parquet folders (names under ``parquet-runs``) of every publication ``target``
    records; none without a readable snapshot (publish then replaces it)."""
    if not target.exists():
        return set()
    try:
        with duckdb.connect(str(target), read_only=True) as con:
            rows = con.execute(
                "select parquet_path from published_runs where parquet_path is not null"
            ).fetchall()
    except duckdb.Error:
        return set()
    return {Path(row[0]).name for row in rows}


def _previous_run(target: Path, folder: str) -> list[str]:
    """The Parquet folder of the publication before the one in ``folder`` in ``target``
    (kept for readers still in it)."""
    con = duckdb.connect(str(target), read_only=True)
    try:
        row = con.execute(
            "select parquet_path from published_runs where parquet_path is not null "
            "and parquet_path <> ? order by published_at desc limit 1",
            [f"{PARQUET_VERSIONS}/{folder}"],
        ).fetchone()
    finally:
        con.close()
    return [Path(row[0]).name] if row else []


def _prune_versions(versions: Path, keep: set[str]) -> None:
    for folder in versions.iterdir():
        if folder.is_dir() and not folder.name.startswith(".") and folder.name not in keep:
            shutil.rmtree(folder, ignore_errors=True)


def _is_export(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier export (which may be replaced): a ``manifest.json``
    as :func:`write_parquet` writes it (every entry a Parquet file with its row count, the
    published runs among them), not merely any file of that name."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and "published_runs.parquet" in manifest
        and all(
            str(name).endswith(".parquet") and isinstance(entry, dict) and "rows" in entry
            for name, entry in manifest.items()
        )
    )


def export_parquet(snapshot: Path, destination: Path) -> list[Path]:
    """Write the tables of a published ``snapshot`` as Parquet into ``destination`` (for BI).

    Reads the snapshot read-only (never blocks a run). The folder is written beside
    ``destination`` under a temporary name and renamed into place; a previous export there
    (a folder holding ``manifest.json``) is replaced, anything else is refused.
    """
    snapshot, destination = Path(snapshot), Path(destination)
    if not snapshot.exists():
        raise TsrateError(f"no published snapshot at {snapshot} yet: finish a `tsrate run` first")
    if destination.exists() and not _is_export(destination):
        raise TsrateError(
            f"{destination} exists and is not an earlier tsrate export; choose a new folder"
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = destination.with_name(f".{destination.name}.partial")
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        written = write_parquet(con, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        con.close()
    if destination.exists():
        old = destination.with_name(f".{destination.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(destination, old)
        os.replace(staging, destination)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, destination)
    return [destination / path.relative_to(staging) for path in written]


def _tidy(comment: str | None) -> str | None:
    """A comment without trailing whitespace (YAML block scalars end descriptions with a
    newline, which a query tool prints as a literal ``\\n``)."""
    return comment.rstrip() if comment is not None else None


def _literal(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"
