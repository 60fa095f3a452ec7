"""``tsrate query``: one read-only SQL statement against the published snapshot (or the live
warehouse), on a connection that cannot touch anything else.

Guarantees, in the order they are applied:

1. **One read statement.** The text is parsed with DuckDB's own parser
   (``duckdb.extract_statements``); exactly one statement of type ``SELECT`` is accepted.
   That covers ``select``, ``with ... select``, ``from t``, ``values``, ``describe``,
   ``show``, ``summarize`` and set operations; everything else (``copy``, ``export``,
   ``attach``, ``set``, ``pragma``, ``call``, ``install``/``load``, DDL, DML, transactions,
   two statements, nothing at all) is refused before a database is opened.
2. **A sealed connection.** The file is opened ``read_only`` with the settings of
   :data:`SEALED_SETTINGS` given at connect time, so they hold before any user SQL runs:
   ``enable_external_access=false`` (no file, URL or extension access: ``read_text``,
   ``read_csv``, ``glob``, ``read_parquet``, replacement scans of paths all fail),
   extension auto-install and auto-load off, and ``lock_configuration=true`` (no ``SET``
   or ``RESET`` can undo the above or raise the memory limit).
3. **Bounded output and time.** At most ``limit`` rows are fetched (default
   :data:`DEFAULT_LIMIT`; the result says when more exist) and the query is interrupted
   after ``timeout`` seconds (default :data:`DEFAULT_TIMEOUT`; DuckDB's ``interrupt()``
   from a timer thread).
4. **Never in a writer's way.** The published snapshot is replaced by an atomic rename, so
   reading it never blocks a run. The live warehouse (``live=True``) is read only while
   holding the *shared* side of the writer lock file (:func:`tsrate.platform.locking.lock_path`):
   while a run or another writer holds the lock, the query is refused at once; while the
   query holds it, a writer cannot start (it fails within half a second, or waits with a
   lock timeout)
   rather than failing half-way because DuckDB found a reader on its file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import math
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from tsrate import TsrateError
from tsrate.platform.locking import lock_path

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: DuckDB's own file lock remains
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pandas loads only when a query returns rows (0.3 s before a refusal)
    import pandas as pd

#: Rows printed unless ``--limit`` says otherwise.
DEFAULT_LIMIT = 1000
#: Seconds a query may run unless ``--timeout`` says otherwise.
DEFAULT_TIMEOUT = 60.0
#: Settings every query connection is opened with (before any user SQL runs).
SEALED_SETTINGS = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_persistent_secrets": False,
    "lock_configuration": True,
}


@dataclasses.dataclass(frozen=True)
class QueryResult:
    """The first ``limit`` rows of a query; ``truncated``: more rows exist."""

    frame: pd.DataFrame
    truncated: bool
    limit: int
    source: Path


def read_statement(sql: str) -> str:
    """The one ``SELECT``-type statement of ``sql``; raise :class:`TsrateError` otherwise."""
    hint = (
        "tsrate query runs one read-only statement: select, with ... select, from, values, "
        "describe, show or summarize"
    )
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise TsrateError(f"the SQL does not parse: {_first_line(exc)} (hint: {hint})") from None
    if not statements:
        raise TsrateError(f"no SQL statement given; {hint}")
    if len(statements) > 1:
        raise TsrateError(f"{len(statements)} statements given; {hint}")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        kind = str(statement.type).rsplit(".", 1)[-1]
        said = statement.query.split(None, 1)[0].upper() if statement.query.split() else ""
        if kind == "LOAD" and said in ("INSTALL", "FORCE"):
            kind = "INSTALL"  # DuckDB files INSTALL under LOAD; name what the user wrote
        raise TsrateError(f"{kind} statements are refused; {hint}")
    return statement.query


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


#: What to do when no DuckDB file is at the path a command reads.
MISSING_HINT = (
    "finish a `tsrate run` first (it writes the warehouse and publishes the snapshot), or "
    "set TSRATE_WAREHOUSE (or the command's --snapshot) to an existing DuckDB file"
)


def missing_database(path: Path) -> TsrateError:
    """The error for a path with no DuckDB file: a folder names the file to give instead,
    a missing path what writes one; each with its hint (``error.hint``)."""
    if path.is_dir():
        error = TsrateError(f"{path} is a folder, not a DuckDB database file")
        error.hint = f"name the database file, e.g. {path / 'tsrate.duckdb'}"
    else:
        error = TsrateError(f"no DuckDB database at {path}")
        error.hint = MISSING_HINT
    return error


def open_sealed(path: Path, memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """``path`` opened read-only with :data:`SEALED_SETTINGS` (and tsrate's memory limit)."""
    from tsrate.platform.warehouse import duckdb_settings

    path = Path(path)
    if not path.is_file():
        raise missing_database(path)
    config: dict[str, object] = {**duckdb_settings(), **SEALED_SETTINGS}
    if memory_limit:
        config["memory_limit"] = memory_limit
    try:
        return duckdb.connect(str(path), read_only=True, config=config)
    except duckdb.Error as exc:
        message = _first_line(exc)
        if "lock" in message.lower():
            raise TsrateError(
                f"{path} is open for writing by another program (DuckDB: {message}); "
                "query the published snapshot instead"
            ) from None
        raise TsrateError(
            f"{path} cannot be opened as a DuckDB database (DuckDB: {message}); is it a "
            "tsrate warehouse or snapshot, written by this DuckDB version or an older one?"
        ) from None


@contextlib.contextmanager
def live_reader(
    warehouse: Path,
    reader: str = "a --live query",
    advice: str = "Query the published snapshot (drop --live), or wait for the writer to finish",
) -> Iterator[None]:
    """Hold the shared side of the writer lock of ``warehouse``; refuse while a writer holds it
    (the error names the ``reader`` that would get in the writer's way, then ``advice``)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    path = lock_path(warehouse)
    if not path.parent.is_dir():
        raise TsrateError(f"no warehouse at {warehouse}: run `tsrate run` first")
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            from tsrate.platform.locking import lock_holder

            raise TsrateError(
                f"the live warehouse {warehouse} is being written by {lock_holder(fd)}; "
                f"{reader} would get in its way. {advice}"
            ) from None
        yield
    finally:
        os.close(fd)  # releases the shared lock


#: The schemas only the live warehouse has (the snapshot holds marts, seeds, published_runs).
LIVE_ONLY_SCHEMAS = ("raw", "staging", "intermediate")
#: The tables only the published snapshot has (publish writes them; the live warehouse has none).
SNAPSHOT_ONLY_TABLES = ("published_runs",)
#: DuckDB's words for a table it cannot find (the name as the query spelt it).
MISSING_TABLE = re.compile(r"Table with name (?P<name>[^ ]+) does not exist", flags=re.I)
#: The query that lists what a database holds, as the error of an unknown table suggests it.
LIST_TABLES = "select schema_name, table_name from duckdb_tables() order by all"


def failure_text(exc: duckdb.Error, live: bool = False) -> str:
    """DuckDB's error on one line with its own suggestions ("Did you mean ...", candidate
    columns), and for an unknown table where to look: ``--live`` for the live-only schemas,
    no ``--live`` for a table only the snapshot has (:data:`SNAPSHOT_ONLY_TABLES`), else the
    query that lists the tables."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    suggestions = ("Did you mean", "Candidate bindings")
    text = "; ".join([lines[0], *(line for line in lines[1:] if line.startswith(suggestions))])
    if "file system operations are disabled" in text:
        return (
            f"{text} (hint: tsrate query reads only the database file; to read files, "
            "write the tables out with tsrate export DIR and use your own DuckDB session)"
        )
    if not isinstance(exc, duckdb.CatalogException):
        return text
    missing = [schema for schema in LIVE_ONLY_SCHEMAS if f'schema "{schema}" does not' in text]
    if missing and not live:
        return (
            f"{text} (hint: {', '.join(LIVE_ONLY_SCHEMAS)} are in the live warehouse only: add "
            "--live; the published snapshot holds marts, seeds and published_runs)"
        )
    table = MISSING_TABLE.search(text)
    name = table.group("name").strip('"').lower() if table else ""
    if live and name in SNAPSHOT_ONLY_TABLES:
        return (
            f"{text} (hint: {name} is in the published snapshot only, which tsrate query reads "
            "without --live: drop --live)"
        )
    return f'{text} (hint: list the tables with tsrate query "{LIST_TABLES}"{" --live" * live})'


def run_query(
    path: Path,
    sql: str,
    limit: int = DEFAULT_LIMIT,
    timeout: float | None = DEFAULT_TIMEOUT,
    live_file: bool = False,
) -> QueryResult:
    """Check ``sql`` (:func:`read_statement`) and run it on ``path`` opened sealed
    (``live_file``: the live warehouse, which an error's hint names)."""
    if limit < 1:
        raise TsrateError(f"--limit must be 1 or more, got {limit}")
    if timeout is not None and timeout <= 0:
        raise TsrateError(
            f"--timeout must be more than 0 seconds, got {timeout:g} (hint: --timeout 0: no limit)"
        )
    statement = read_statement(sql)
    con = open_sealed(path)
    timer = threading.Timer(timeout, con.interrupt) if timeout else None
    try:
        if timer:
            timer.daemon = True
            timer.start()
        try:
            relation = con.sql(statement)
            frame = relation.limit(limit + 1).df()
            frame = _whole_numbers(_days(frame, relation.types), relation.types)
            frame = _nested(frame, relation.types)
        except duckdb.InterruptException:
            raise TsrateError(
                f"the query was stopped after {timeout:g} s; narrow it, or allow more time "
                "with --timeout SECONDS"
            ) from None
        except duckdb.Error as exc:
            raise TsrateError(f"query failed: {failure_text(exc, live_file)}") from None
    finally:
        if timer:
            timer.cancel()
        con.close()
    truncated = len(frame) > limit
    return QueryResult(frame.head(limit), truncated, limit, Path(path))


def query(
    sql: str,
    live: bool = False,
    limit: int = DEFAULT_LIMIT,
    timeout: float | None = DEFAULT_TIMEOUT,
    warehouse: Path | None = None,
) -> QueryResult:
    """Run ``sql`` on the published snapshot, or with ``live`` on the live warehouse."""
    read_statement(sql)  # refuse before touching any file (or importing pandas)
    from tsrate.config import warehouse_path
    from tsrate.platform.publish import published_path

    warehouse = Path(warehouse or warehouse_path())
    if not live:
        snapshot = published_path(warehouse)
        if not snapshot.exists():
            from tsrate.platform.locking import describe_holder, writer_status

            writer = writer_status(warehouse)
            if writer is not None:  # --live would be refused beside a writer: say so instead
                raise TsrateError(
                    f"no published snapshot at {snapshot} yet, and the warehouse is being "
                    f"written by {describe_holder(writer)}: query again once it has published "
                    "(`tsrate status` shows its progress)"
                )
            raise TsrateError(
                f"no published snapshot at {snapshot} yet: finish a `tsrate run`, or query the "
                "live warehouse with --live"
            )
        return run_query(snapshot, sql, limit, timeout)
    if not warehouse.exists():
        raise TsrateError(
            f"no warehouse at {warehouse}: run `tsrate run` (or `tsrate ingest`) first"
        )
    with live_reader(warehouse):
        return run_query(warehouse, sql, limit, timeout, live_file=True)


def _days(frame: pd.DataFrame, types: list) -> pd.DataFrame:
    """``frame`` with its DATE columns as ``datetime.date`` values (2022-01-03 in every
    format), not the midnight timestamps pandas makes of them."""
    dates = [position for position, kind in enumerate(types) if str(kind) == "DATE"]
    if not dates:
        return frame
    frame = frame.copy()
    for position in dates:  # by position: names may repeat
        column = frame.iloc[:, position]
        if column.dtype.kind == "M":  # datetime64 (else: already dates, or all null)
            frame.isetitem(position, column.dt.date.where(column.notna(), None))
    return frame


#: DuckDB's nested types, which DuckDB's ``.df()`` hands over as numpy arrays and dicts.
NESTED_TYPES = ("list", "array", "struct", "map")


def _nested(frame: pd.DataFrame, types: list) -> pd.DataFrame:
    """``frame`` with its LIST, ARRAY, STRUCT and MAP columns as plain Python lists and dicts
    (:func:`_plain`): a DATE inside them a ``datetime.date`` (pandas makes the dates of a
    ``DATE[]`` midnight timestamps), NULL ``None``."""
    nested = [i for i, kind in enumerate(types) if getattr(kind, "id", None) in NESTED_TYPES]
    if not nested:
        return frame
    frame = frame.copy()
    for position in nested:  # by position: names may repeat
        kind = types[position]
        column = frame.iloc[:, position].astype(object)
        frame.isetitem(position, column.map(lambda value, kind=kind: _plain(value, kind)))
    return frame


def _plain(value: object, kind: object) -> object:
    """``value`` of DuckDB type ``kind`` as plain Python, guided by the type: a list or array
    as a list, a struct or map as a dict, a DATE as a ``datetime.date``, NULL as ``None``."""
    kind_id = getattr(kind, "id", None)
    if kind_id in NESTED_TYPES:
        if isinstance(value, dict):
            children = dict(kind.children)
            if kind_id == "map":
                return {key: _plain(item, children["value"]) for key, item in value.items()}
            return {key: _plain(item, children.get(key)) for key, item in value.items()}
        if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
            value = value.tolist()  # a masked array's NULLs become None
        if isinstance(value, list | tuple):
            child = dict(kind.children)["child"]
            return [_plain(item, child) for item in value]
        return None  # NULL (pandas' <NA>)
    if kind_id == "date":
        if isinstance(value, dt.datetime):
            return value.date()
        if hasattr(value, "astype") and type(value).__name__ == "datetime64":
            import pandas as pd  # loaded by DuckDB's .df() already

            return None if pd.isna(value) else pd.Timestamp(value).date()
    return value


def _whole_numbers(frame: pd.DataFrame, types: list) -> pd.DataFrame:
    """``frame`` with its 128-bit integer columns (DuckDB's ``sum`` of integers is HUGEINT,
    which pandas receives as float64: 33048.0) as whole numbers again, where every value
    fits 64 bits (nullable ``Int64``: NULL stays missing)."""
    wide = [i for i, kind in enumerate(types) if str(kind) in ("HUGEINT", "UHUGEINT")]
    if not wide:
        return frame
    import pandas as pd  # loaded by DuckDB's .df() already

    frame = frame.copy()
    for position in wide:  # by position: names may repeat
        column = frame.iloc[:, position]
        values = pd.to_numeric(column, errors="coerce")
        known = values.dropna()
        if len(known) == len(column.dropna()) and (known.abs() < 2**63).all():
            frame.isetitem(position, values.round().astype("Int64"))
    return frame


def _json_ready(value: object) -> object:
    """A nested value (:func:`_plain`) with its dates, times and numpy values as JSON can
    write them (pandas would write a date inside a list as a midnight timestamp)."""
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    if isinstance(value, dict):  # a MAP's keys too: JSON's keys are text (a date key failed)
        return {_json_key(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if hasattr(value, "tolist"):  # a numpy scalar
        return value.tolist()
    return value


def _json_key(key: object) -> object:
    """A MAP key as JSON can write it: a date as ``YYYY-MM-DD``, a number or text as it is."""
    if key is None or isinstance(key, str | int | float | bool):
        return key
    ready = _json_ready(key)
    return ready if isinstance(ready, str | int | float | bool) else str(ready)


def _nested_as_json(value: object) -> object:
    """A LIST (a numpy array from DuckDB) or a STRUCT (a dict) as JSON text, its dates as
    ``YYYY-MM-DD``; anything else as it is."""
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        value = value.tolist()
    if not isinstance(value, list | dict):
        return value

    def plain(item: object) -> object:  # what json cannot write itself
        if hasattr(item, "tolist"):  # a numpy array or scalar inside a struct
            return item.tolist()
        if isinstance(item, dt.date | dt.datetime | dt.time):
            return item.isoformat()
        return str(item)

    return json.dumps(_json_ready(value), default=plain, ensure_ascii=False)


#: significant digits of a number in the json format (what a double holds for certain)
JSON_DIGITS = 15


def _json_number(value: object) -> object:
    """A value of the json format with its floats, also inside a list or dict, to
    :data:`JSON_DIGITS` significant digits (0.1 as 0.1, 2.5e-15 as 2.5e-15: pandas' own
    writer counts decimal places instead, and printed 2.5e-15 as 0.000000000000002) and a
    NaN, an infinity or pandas' NA as null (JSON has no number for them)."""
    if isinstance(value, float):  # numpy's float64 too
        return float(f"{value:.{JSON_DIGITS}g}") if math.isfinite(value) else None
    if isinstance(value, list):
        return [_json_number(item) for item in value]
    if isinstance(value, dict):
        return {key: _json_number(item) for key, item in value.items()}
    if value is not None and type(value).__name__ == "NAType":  # pandas' NA
        return None
    return value


def _json_column(column: pd.Series) -> list:
    """One column's values for the json format (:func:`format_result`)."""
    if column.dtype.kind == "f":  # float32 and nullable Float64 too: NA as NaN, then null
        values = column.to_numpy(dtype="float64", na_value=float("nan")).tolist()
        return [_json_number(value) for value in values]
    if column.dtype.kind == "O":  # text, dates, times, lists, structs, maps, NULL as None
        return [_json_number(_json_ready(value)) for value in column]
    # whole numbers, booleans (nullable too), timestamps (ISO 8601 to the millisecond, UTC
    # as Z) and intervals (ISO 8601 durations) as pandas writes them
    return [
        row[0] for row in json.loads(column.to_frame().to_json(orient="values", date_format="iso"))
    ]


def truncation_note(result: QueryResult) -> str:
    """The line saying the output stopped at ``limit`` rows."""
    return (
        f"(first {result.limit} rows shown; the result has more: add a LIMIT or an "
        "aggregate, pass --limit N, or use `tsrate export` for whole tables)"
    )


def format_result(result: QueryResult, fmt: str = "table") -> str:
    """The rows as ``fmt``: ``table`` (aligned text, NULL empty, a last line when cut at
    ``limit``, a list or struct as JSON), ``csv`` (header row, NULL empty, a list or struct as
    JSON) or ``json`` (an array of objects, NULL as null, dates ISO 8601: a DATE, also inside a
    list or struct, as ``YYYY-MM-DD``; numbers to 15 significant digits). csv and json carry no
    note: the caller prints it elsewhere."""
    frame = result.frame
    if fmt == "csv":
        # a LIST or STRUCT as JSON text (pandas would write numpy's repr: ['a' 'b'])
        frame = frame.copy()
        for position, dtype in enumerate(frame.dtypes):  # by position: names may repeat
            if dtype.kind == "O":
                frame.isetitem(position, frame.iloc[:, position].map(_nested_as_json))
        return frame.to_csv(index=False, lineterminator="\n").rstrip("\n")
    if fmt == "json":
        # by position; a query's names are unique (DuckDB renames a repeat itself: a, a_1)
        columns = [_json_column(frame.iloc[:, position]) for position in range(frame.shape[1])]
        names = list(map(str, frame.columns))
        rows = [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
        # a BLOB (bytes), a UUID or another value JSON has no type for: as its text
        return json.dumps(rows, ensure_ascii=False, separators=(",", ":"), default=str)
    if fmt != "table":
        raise TsrateError(f"unknown format {fmt!r}: use table, csv or json")
    if frame.empty:
        return f"(no rows; columns: {', '.join(map(str, frame.columns))})"
    shown = frame.astype(object).where(frame.notna(), "")  # NULL, NaN, NaT, <NA> -> empty
    for position, dtype in enumerate(frame.dtypes):  # a LIST or STRUCT as JSON, as in csv
        if dtype.kind == "O":
            shown.isetitem(position, shown.iloc[:, position].map(_nested_as_json))
    # every column, every character: to_string wraps and cuts nothing (the display options
    # that would, display.max_columns and display.width, are only for a frame's repr)
    text = shown.to_string(index=False)
    if result.truncated:
        text += "\n" + truncation_note(result)
    return text
