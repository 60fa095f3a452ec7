"""Warehouse I/O: opening the live DuckDB file and transactional writes into its raw tables.

Raw tables are the only tables Python writes; dbt builds everything else from them. Their
definitions and creation live in :mod:`tsrate.platform.raw_schema`, called at the writing
edges (here: :func:`store_prices` and :func:`close_interrupted_runs`), not in :func:`connect`.
Every write is one transaction, so a failure (or a kill) leaves the previous state intact.
DuckDB allows one read-write process at a time: open, write, close — never hold the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import re
from collections.abc import Collection, Iterator
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.platform.published_paths import published_path
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.sources import DEFAULT_MAX_GAP_DAYS


def duckdb_settings() -> dict[str, str]:
    """DuckDB settings of every connection tsrate opens itself (dbt's come from profiles.yml).

    ``memory_limit``: ``TSRATE_DUCKDB_MEMORY_LIMIT``, default 4GB, as in profiles.yml. DuckDB's
    own default is 80 % of RAM, and its buffer pool grows to it on big copies: publishing 100
    tickers x 10 years peaked at 10 GB without a limit. Beyond the limit DuckDB spills to a
    temporary folder beside the database file.
    """
    return {"memory_limit": os.environ.get("TSRATE_DUCKDB_MEMORY_LIMIT") or "4GB"}


#: The holder's process id in DuckDB's "Could not set lock ... (PID 123)" message
_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")


def in_use_message(path: str | Path, duckdb_message: str) -> str:
    """The one line for a warehouse whose lock another process holds, from DuckDB's
    ``Could not set lock`` message (its PID kept); ``path``: the file, or '' when neither
    DuckDB's words nor the caller name one (then "the warehouse file"). DuckDB lets no
    process in beside one that writes, nor write beside one that reads: the holder may be a
    tsrate run or a reader (a BI tool, a notebook) opened on the live file, where it belongs
    on the published snapshot."""
    found = _LOCK_HOLDER.search(duckdb_message)
    holder = f"another process (PID {found.group(1)})" if found else "another process"
    if str(path) not in ("", "."):  # Path("") reads "."
        warehouse, snapshot = f"the warehouse {path}", f"{published_path(Path(path))} "
    else:  # DuckDB's words named no file, and the caller knew none
        warehouse = "the warehouse file"
        override = os.environ.get("TSRATE_PUBLISHED")
        snapshot = f"{override} " if override else "(published/ beside the warehouse) "
    return (
        f"{warehouse} is in use by {holder}: a tsrate command writing it, or a "
        "reader opened on the live file (DuckDB lets no process write while another has it "
        f"open); wait for it to finish (hint: readers should open the published snapshot "
        f"{snapshot}read-only, or use `tsrate query`)"
    )


@contextlib.contextmanager
def connect(path: str | Path, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse and always close it (the writing edges create the raw tables:
    :func:`tsrate.platform.raw_schema.create_raw_tables`)."""
    path = Path(path)
    if read_only and not path.exists():
        raise TsrateError(f"no warehouse at {path}: run `tsrate run` (or `tsrate ingest`) first")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=duckdb_settings())
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise TsrateError(in_use_message(path, str(exc))) from exc
        raise
    try:
        yield con
    finally:
        con.close()


#: ids of the connections inside a :func:`transaction` now (DuckDB does not nest them)
_IN_TRANSACTION: set[int] = set()


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All-or-nothing: commit on success, roll back on any exception. Inside another
    ``transaction`` of the same connection it joins that one (DuckDB has no nested
    transactions): the outer one commits or rolls back everything, e.g. an import's
    registration with its record and its run's status."""
    if id(con) in _IN_TRANSACTION:
        yield con
        return
    con.execute("begin transaction")
    _IN_TRANSACTION.add(id(con))
    try:
        try:
            yield con
        except BaseException:
            con.execute("rollback")
            raise
        con.execute("commit")
    finally:
        _IN_TRANSACTION.discard(id(con))


#: Two closes of one (ticker, date) closer than this, relative, are the same value (float noise).
SAME_CLOSE_RELATIVE = 1e-12


@dataclasses.dataclass(frozen=True)
class PriceChanges:
    """What storing a price file does to one ticker's stored history.

    ``added``: dates not stored before; ``unchanged``: stored dates the file repeats with the
    same close; ``changed``: stored dates the file gives another close; ``removed``: stored
    dates the file lacks (only ``replace`` removes them); ``stored``: rows after the write.
    """

    ticker: str
    added: int
    unchanged: int
    changed: int
    removed: int
    stored: int


def describe_price_changes(changes: dict[str, PriceChanges], replace: bool = False) -> str:
    """One line: totals of added / unchanged / replaced / removed rows, and the tickers."""
    total = {
        key: sum(getattr(c, key) for c in changes.values())
        for key in ("added", "unchanged", "changed", "removed")
    }
    parts = [f"{total['added']:,} new rows", f"{total['unchanged']:,} already stored"]
    if replace:
        parts += [f"{total['changed']:,} replaced", f"{total['removed']:,} removed"]
    tickers = ", ".join(sorted(changes))
    return f"{'; '.join(parts)} for {len(changes)} ticker(s) ({tickers})"


class PriceHistoryConflict(TsrateError):
    """A price file that would change or shrink stored history without ``replace``."""


def store_prices(
    con: duckdb.DuckDBPyConnection,
    prices: pd.DataFrame,
    source: str,
    replace: bool = False,
    max_gap_days: int = DEFAULT_MAX_GAP_DAYS,
) -> dict[str, PriceChanges]:
    """Store validated ``prices`` (``ticker, price_date, close``) in one transaction.

    Default (merge): each ticker's new dates are added and overlapping dates must repeat
    the stored close (relative difference at most :data:`SAME_CLOSE_RELATIVE`); a changed
    close, or new dates more than ``max_gap_days`` away from the stored history (a hole in
    the merged series), raises :class:`PriceHistoryConflict` naming the counts, and nothing
    is written. ``replace``: the file becomes the whole stored history of each of its
    tickers (changed closes replaced, stored dates it lacks removed). Tickers not in
    ``prices`` are untouched either way. Returns the :class:`PriceChanges` per ticker.
    """
    create_raw_tables(con)  # ingest is a writing edge: the first write to a new warehouse
    frame = prices[["ticker", "price_date", "close"]].copy()
    frame["price_date"] = pd.to_datetime(frame["price_date"]).dt.date
    frame["source"] = source
    frame["loaded_at"] = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with transaction(con):
        con.register("incoming_prices", frame)
        try:
            changes = _price_changes(con)
            if not replace:
                _refuse_conflicts(con, changes, source, max_gap_days)
                con.execute(
                    "insert into raw.prices select i.ticker, i.price_date, i.close, i.source, "
                    "i.loaded_at from incoming_prices i anti join raw.prices p "
                    "on p.ticker = i.ticker and p.price_date = i.price_date"
                )
            else:
                con.execute(
                    "delete from raw.prices where ticker in "
                    "(select distinct ticker from incoming_prices)"
                )
                con.execute(
                    "insert into raw.prices select ticker, price_date, close, source, loaded_at "
                    "from incoming_prices"
                )
        finally:
            con.unregister("incoming_prices")
    result = {}
    for ticker, (added, unchanged, changed, removed, incoming, before) in changes.items():
        stored = incoming if replace else before + added
        result[ticker] = PriceChanges(
            ticker, added, unchanged, changed, removed if replace else 0, stored
        )
    return result


def _price_changes(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, ...]]:
    """Per incoming ticker: added, unchanged, changed, removed-by-replace, incoming, stored."""
    rows = con.execute(
        """
        with incoming as (select ticker, price_date, close from incoming_prices),
        stored as (
            select ticker, price_date, close from raw.prices
            where ticker in (select distinct ticker from incoming)
        ),
        paired as (
            select coalesce(i.ticker, s.ticker) as ticker, i.close as new_close,
                   s.close as old_close
            from incoming i full outer join stored s
              on i.ticker = s.ticker and i.price_date = s.price_date
        )
        select ticker,
            count(*) filter (where old_close is null) as added,
            count(*) filter (where new_close is not null and old_close is not null
                and abs(new_close - old_close) <= $tol * greatest(abs(new_close), abs(old_close)))
                as unchanged,
            count(*) filter (where new_close is not null and old_close is not null
                and abs(new_close - old_close) > $tol * greatest(abs(new_close), abs(old_close)))
                as changed,
            count(*) filter (where new_close is null) as removed,
            count(new_close) as incoming,
            count(old_close) as stored
        from paired group by ticker order by ticker
        """,
        {"tol": SAME_CLOSE_RELATIVE},
    ).fetchall()
    return {row[0]: tuple(int(v) for v in row[1:]) for row in rows}


def _refuse_conflicts(
    con: duckdb.DuckDBPyConnection,
    changes: dict[str, tuple[int, ...]],
    source: str,
    max_gap_days: int,
) -> None:
    problems = []
    changed = {t: c for t, c in changes.items() if c[2]}
    if changed:
        first = con.execute(
            "select i.ticker, i.price_date, p.close, i.close from incoming_prices i "
            "join raw.prices p on p.ticker = i.ticker and p.price_date = i.price_date "
            "where abs(i.close - p.close) > $tol * greatest(abs(i.close), abs(p.close)) "
            "order by i.ticker, i.price_date limit 1",
            {"tol": SAME_CLOSE_RELATIVE},
        ).fetchone()
        listed = ", ".join(f"{t} {c[2]:,}" for t, c in changed.items())
        problems.append(
            f"{sum(c[2] for c in changed.values()):,} stored close(s) would be replaced by "
            f"different values ({listed}; first: {first[0]} {first[1]} stored {first[2]!r}, "
            f"file {first[3]!r})"
        )
    gaps = con.execute(
        """
        with i as (select ticker, min(price_date) lo, max(price_date) hi
                   from incoming_prices group by ticker),
        s as (select ticker, min(price_date) lo, max(price_date) hi
              from raw.prices where ticker in (select ticker from i) group by ticker)
        select i.ticker, greatest(date_diff('day', s.hi, i.lo), date_diff('day', i.hi, s.lo))
        from i join s using (ticker)
        where greatest(date_diff('day', s.hi, i.lo), date_diff('day', i.hi, s.lo)) > $gap
        order by 1
        """,
        {"gap": max_gap_days},
    ).fetchall()
    for ticker, days in gaps:
        problems.append(
            f"{ticker}: the file's dates are {days:,} days away from the stored history "
            f"(more than {max_gap_days}): merging would leave a hole in the series"
        )
    if not problems:
        return
    replace_counts = "; ".join(
        f"{t}: {c[2]:,} replaced, {c[3]:,} removed, {c[0]:,} added"
        for t, c in changes.items()
        if c[2] or c[3] or t in {g[0] for g in gaps}
    )
    raise PriceHistoryConflict(
        f"{source}: would change stored price history, nothing was stored: "
        f"{'; '.join(problems)}. To make the file the whole stored history of its tickers, "
        f"ingest again with --replace ({replace_counts})"
    )


def load_prices(
    con: duckdb.DuckDBPyConnection, tickers: list[str], start: dt.date, end: dt.date
) -> pd.DataFrame:
    """Stored closes of ``tickers`` between ``start`` and ``end`` (inclusive), long format."""
    stored = {row[0] for row in con.execute("select distinct ticker from raw.prices").fetchall()}
    unknown = sorted(set(tickers) - stored)
    if unknown:
        raise TsrateError(
            f"unknown ticker(s) {unknown}: not in raw.prices "
            f"(it holds {sorted(stored) or 'nothing yet'}); ingest them first with `tsrate ingest`"
        )
    return con.execute(
        "select ticker, price_date, close from raw.prices "
        "where ticker in (select unnest($tickers)) and price_date between $start and $end "
        "order by ticker, price_date",
        {"tickers": tickers, "start": start, "end": end},
    ).df()


# --- Run states (raw.runs.status) ---------------------------------------------------------
#: a run's life: running (forecasting) -> forecasted -> building -> publishing -> succeeded;
#: or failed / build_failed / publish_failed / interrupted (its process stopped mid-way; one
#: stopped after its snapshot was swapped in is succeeded: :func:`mark_published_runs_succeeded`).
#: ``forecasted`` is a finished state too (the nightly refresh stops there).
UNFINISHED_STATUSES = ("running", "building", "publishing")
#: runs whose forecasts are complete, so the marts can be built for them
BUILDABLE_STATUSES = ("forecasted", "succeeded", "publish_failed")


def set_run_status(
    con: duckdb.DuckDBPyConnection, run_id: str, status: str, message: str | None = None
) -> None:
    """Move a run to an in-progress state (``building``, ``publishing``); not finished yet."""
    con.execute(
        "update raw.runs set status = $status, message = $message where run_id = $run_id",
        {"status": status, "message": message, "run_id": run_id},
    )


def close_interrupted_runs(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Mark every run left in an in-progress state ``interrupted``; return (run_id, state).

    Call it only while holding the warehouse writer lock: then no process that could be
    running one is alive (the lock dies with its holder), so these runs were stopped.
    """
    create_raw_tables(con)  # a run or build starts here, under the writer lock
    stale = con.execute(
        "select run_id, status from raw.runs where status in "
        f"({', '.join(repr(s) for s in UNFINISHED_STATUSES)}) order by started_at"
    ).fetchall()
    for run_id, status in stale:
        con.execute(
            "update raw.runs set status = 'interrupted', finished_at = now()::timestamp, "
            "message = $message where run_id = $run_id",
            {
                "run_id": run_id,
                "message": f"the process stopped while the run was {status} (killed or "
                "interrupted); its stored forecast partitions are reused by the next run",
            },
        )
    return [(run_id, status) for run_id, status in stale]


#: what the next run or build says of each run :func:`mark_published_runs_succeeded` marks
STOPPED_AFTER_PUBLICATION = (
    "run {} was stopped after its publication: marked succeeded (`tsrate report` writes its "
    "report if it is missing)"
)


def mark_published_runs_succeeded(
    con: duckdb.DuckDBPyConnection, published: Collection[str]
) -> list[str]:
    """Mark every run left ``publishing`` whose publication is in the snapshot ``succeeded``;
    return their ids. ``published``: the run ids of the snapshot's ``published_runs``.

    Such a run's process stopped after its snapshot was swapped in and before it wrote
    ``succeeded``: readers see its marts, so ``interrupted`` would say what did not happen.
    Call it, like :func:`close_interrupted_runs` and before it, under the writer lock.
    """
    create_raw_tables(con)
    stopped = [
        run_id
        for (run_id,) in con.execute(
            "select run_id from raw.runs where status = 'publishing' order by started_at"
        ).fetchall()
        if run_id in published
    ]
    for run_id in stopped:
        con.execute(
            "update raw.runs set status = 'succeeded', finished_at = now()::timestamp, "
            "message = $message where run_id = $run_id",
            {
                "run_id": run_id,
                "message": "published; the process stopped before it marked the run "
                "succeeded, so its report may be missing (`tsrate report` writes it)",
            },
        )
    return stopped


def _id_list_sql(run_ids: Collection[str]) -> str:
    """``run_ids`` as the items of a SQL ``in (...)`` list (quoted); empty for none."""
    return ", ".join("'" + run_id.replace("'", "''") + "'" for run_id in sorted(run_ids))


def reconciled_status_sql(published: Collection[str], alias: str = "") -> str:
    """The ``status`` column of ``raw.runs`` (of table ``alias``) as the next run or build
    leaves it: a run left ``publishing`` whose publication is in the snapshot is
    ``succeeded`` (:func:`mark_published_runs_succeeded`). Read-only: a check made before
    the writer lock judges the run the build will build. ``published``: the run ids of the
    snapshot's ``published_runs``."""
    prefix = f"{alias}." if alias else ""
    ids = _id_list_sql(published)
    if not ids:
        return f"{prefix}status"
    return (
        f"case when {prefix}status = 'publishing' and {prefix}run_id in ({ids}) "
        f"then 'succeeded' else {prefix}status end"
    )


def listed_status_sql(published: Collection[str]) -> str:
    """The ``status`` column of ``raw.runs`` as a listing shows it while no process holds the
    writer lock: a run left running, building or publishing is not running (the lock dies
    with its holder), so its status says it stopped and what the next run or build will mark
    it (:func:`mark_published_runs_succeeded`, :func:`close_interrupted_runs`), e.g.
    ``publishing (stopped; the next run or build marks it interrupted)``. Read-only: the
    listing changes nothing. ``published``: the run ids of the snapshot's ``published_runs``."""
    ids = _id_list_sql(published)
    after_publication = f"run_id in ({ids})" if ids else "false"
    unfinished = ", ".join(repr(s) for s in UNFINISHED_STATUSES)
    return (
        f"case when status = 'publishing' and {after_publication} then status || "
        "' (stopped after its publication; the next run or build marks it succeeded)' "
        f"when status in ({unfinished}) then status || "
        "' (stopped; the next run or build marks it interrupted)' else status end"
    )


def buildable_run(
    con: duckdb.DuckDBPyConnection, published: Collection[str] = ()
) -> tuple[str, list[str]]:
    """(the newest run whose marts can be built, notes on newer runs that cannot).
    ``published``: where runs stopped after their publication are not marked succeeded yet,
    the snapshot's run ids (:func:`reconciled_status_sql`).

    Raises :class:`TsrateError` naming the newest run and why it failed when none can build.
    """
    rows = con.execute(
        f"select run_id, {reconciled_status_sql(published)}, coalesce(message, '') "
        "from raw.runs order by started_at desc, run_id desc"
    ).fetchall()
    notes = []
    for run_id, status, message in rows:
        if status in BUILDABLE_STATUSES:
            return run_id, notes
        first = message.strip().splitlines()[0][:300] if message.strip() else "no message"
        notes.append(f"run {run_id} is {status}: {first}")
    if not rows:
        raise TsrateError("no run in raw.runs yet: start one with `tsrate run`")
    raise TsrateError(f"no run can be built: {notes[0]}; see `tsrate runs`")
