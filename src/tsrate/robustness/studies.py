"""Studies as stored entities: ``raw.studies``, and the study every run and import belongs to.

A study is what decides the forecasts' inputs and targets: its tickers with their company
metadata (company name, industry, ``biased_offset``), the period, the window shape
(``context_length`` n, ``horizon`` d, ``stride``, ``perturbation_phase``), the perturbations
and the settings that change forecasts (``random_seed``, ``arima_order``). Its **systems are
not part of it**: systems join a study (a run forecasts some, an import adds one) and stay in
it until withdrawn (``tsrate withdraw``, :mod:`tsrate.robustness.withdrawals`), so the marts
of a study rate every system that has complete forecasts for it.

The id is the first 16 hex digits of the SHA-256 of :func:`study_definition` as canonical
JSON (sorted keys, no spaces; tickers and perturbations sorted), so the same definition
always gets the same id, whichever run or import meets it first. A name is given at
registration (``default`` for the study of ``dbt_project.yml``'s vars with the companies
seed, else ``study-<first 8 digits of the id>``).

:func:`ensure_studies` is called at the writing edges (a run's start, an import, a build):
it creates ``raw.studies`` and ``raw.study_imports``, adds ``study_id`` to ``raw.runs`` when a
warehouse from an older release lacks it, and assigns every run without a study the study of
its stored definition (``raw.runs.study``) with the companies seed's metadata, so nothing of
an older warehouse is lost.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import textwrap
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.platform.raw_schema import STUDIES_DDL

if TYPE_CHECKING:
    import pandas as pd


COMPANY_FIELDS = ("company_name", "industry", "biased_offset")


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _offset(value: Any) -> float | None:
    text = _text(value)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def company_rows(study: Study, companies: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The study's tickers (sorted) with their metadata from ``companies`` (None: unknown)."""
    by_ticker: dict[str, Mapping[str, Any]] = {}
    if companies is not None and len(companies):
        for row in companies.to_dict("records"):
            by_ticker[str(row.get("ticker", "")).strip().upper()] = row
    rows = []
    for ticker in sorted(study.tickers):
        row = by_ticker.get(ticker, {})
        rows.append(
            {
                "ticker": ticker,
                "company_name": _text(row.get("company_name")),
                "industry": _text(row.get("industry")),
                "biased_offset": _offset(row.get("biased_offset")),
            }
        )
    return rows


def study_definition(study: Study, companies: pd.DataFrame | None) -> dict[str, Any]:
    """What defines the study (never its systems), as a JSON-ready dict."""
    return {
        "tickers": sorted(study.tickers),
        "companies": company_rows(study, companies),
        "start": study.start.isoformat(),
        "end": study.end.isoformat(),
        "context_length": study.context_length,
        "horizon": study.horizon,
        "stride": study.stride,
        "perturbation_phase": study.perturbation_phase,
        "perturbations": sorted(study.perturbations),
        "random_seed": study.seed,
        "arima_order": list(study.arima_order),
    }


def canonical_json(definition: Mapping[str, Any]) -> str:
    return json.dumps(definition, sort_keys=True, separators=(",", ":"))


def study_id_of(definition: Mapping[str, Any]) -> str:
    """16 hex digits of the SHA-256 of the canonical JSON of ``definition``."""
    return hashlib.sha256(canonical_json(definition).encode()).hexdigest()[:16]


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_columns() where schema_name = 'raw' "
            "and table_name = ? and column_name = ?",
            [table, column],
        ).fetchone()[0]
    )


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'raw' and table_name = ?",
            [table],
        ).fetchone()[0]
    )


def _default_name(definition: Mapping[str, Any], study_id: str) -> str:
    """``default`` for the vars' study with the companies seed, else ``study-<id8>``."""
    from tsrate.config import load_companies

    try:
        default = Study.from_vars()
        if study_id_of(study_definition(default, load_companies())) == study_id:
            return "default"
    except (TsrateError, OSError, KeyError, ValueError):
        pass
    return f"study-{study_id[:8]}"


def _free_default_name(
    con: duckdb.DuckDBPyConnection, definition: Mapping[str, Any], study_id: str
) -> str:
    """:func:`_default_name`, or ``study-<id8>`` when another study has that name."""
    name = _default_name(definition, study_id)
    if con.execute("select 1 from raw.studies where study_name = ?", [name]).fetchone():
        name = f"study-{study_id[:8]}"
    return name


def study_name(
    con: duckdb.DuckDBPyConnection, study: Study, companies: pd.DataFrame | None
) -> tuple[str, str]:
    """(name, id) of ``study`` as ``tsrate studies`` shows it: its stored name, or for a study
    this warehouse has not stored yet the name :func:`register_study` would give it."""
    definition = study_definition(study, companies)
    study_id = study_id_of(definition)
    if not _has_table(con, "studies"):
        return _default_name(definition, study_id), study_id
    known = con.execute(
        "select study_name from raw.studies where study_id = ?", [study_id]
    ).fetchone()
    return (known[0] if known else _free_default_name(con, definition, study_id)), study_id


def register_study(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    companies: pd.DataFrame | None,
    name: str | None = None,
    companies_source: str = "seeds/companies.csv",
) -> str:
    """The id of ``study`` with ``companies``' metadata, stored in ``raw.studies`` if new.

    ``name``: give the study this name (refused when another study has it); a known study
    keeps its name unless ``name`` is given.
    """
    con.execute(STUDIES_DDL)
    definition = study_definition(study, companies)
    study_id = study_id_of(definition)
    if name is not None:
        taken = con.execute(
            "select study_id from raw.studies where study_name = ? and study_id <> ?",
            [name, study_id],
        ).fetchone()
        if taken:
            raise TsrateError(
                f"study name {name!r} is taken by study {taken[0]} (another definition); "
                "pick another --study-name, see `tsrate studies`"
            )
    known = con.execute(
        "select study_name from raw.studies where study_id = ?", [study_id]
    ).fetchone()
    if known:
        if name is not None and name != known[0]:
            con.execute(
                "update raw.studies set study_name = ? where study_id = ?", [name, study_id]
            )
        return study_id
    name = name or _free_default_name(con, definition, study_id)
    con.execute(
        "insert into raw.studies values ($id, $name, $definition, $tickers, $start, $end, "
        "$n, $d, $stride, $phase, $perturbations, $companies, $source, now()::timestamp)",
        {
            "id": study_id,
            "name": name,
            "definition": canonical_json(definition),
            "tickers": definition["tickers"],
            "start": study.start,
            "end": study.end,
            "n": study.context_length,
            "d": study.horizon,
            "stride": study.stride,
            "phase": study.perturbation_phase,
            "perturbations": definition["perturbations"],
            "companies": json.dumps(definition["companies"]),
            "source": companies_source,
        },
    )
    return study_id


def ensure_studies(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Create the study tables, add ``raw.runs.study_id`` when missing, and assign every run
    without a study the study of its stored definition (companies from the seed).

    Returns the (run_id, study_id) pairs assigned now (empty once migrated).
    """
    con.execute(STUDIES_DDL)
    if not _has_table(con, "runs"):
        return []
    if not _has_column(con, "runs", "study_id"):
        con.execute("alter table raw.runs add column study_id varchar")
    orphans = con.execute(
        "select run_id, study from raw.runs where study_id is null order by started_at, run_id"
    ).fetchall()
    if not orphans:
        return []
    from tsrate.config import load_companies

    companies = load_companies()
    assigned = []
    for run_id, text in orphans:
        study = Study.from_json(text)
        study_id = register_study(con, study, companies)
        con.execute("update raw.runs set study_id = ? where run_id = ?", [study_id, run_id])
        assigned.append((run_id, study_id))
    return assigned


def attach_run(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    study: Study,
    companies: pd.DataFrame | None,
    name: str | None = None,
    companies_source: str = "seeds/companies.csv",
) -> str:
    """Register the run's study and set ``raw.runs.study_id`` of ``run_id``; its id.

    Call :func:`ensure_studies` before inserting the run (not here: it would assign the
    new run, still without a study, the seed's companies)."""
    study_id = register_study(con, study, companies, name, companies_source)
    con.execute("update raw.runs set study_id = ? where run_id = ?", [study_id, run_id])
    return study_id


def record_import(
    con: duckdb.DuckDBPyConnection, run_id: str, system_id: str, source: str, file_sha256: str
) -> str:
    """Record an import (its run's study, the system, the file); the study id."""
    ensure_studies(con)
    row = con.execute("select study_id from raw.runs where run_id = ?", [run_id]).fetchone()
    if row is None or row[0] is None:
        raise TsrateError(f"run {run_id!r} has no study; see `tsrate runs`")
    con.execute(
        "insert into raw.study_imports values (?, ?, ?, ?, ?, now()::timestamp) "
        "on conflict do nothing",
        [run_id, row[0], system_id, source, file_sha256],
    )
    return str(row[0])


def replaced_import_note(con: duckdb.DuckDBPyConnection, run_id: str, system_id: str) -> str:
    """One line when the import of ``run_id`` (recorded) replaces an earlier import of
    ``system_id`` into the same study from another file (the marts rate a study's newest run
    per system): the earlier file and time, and how to keep and compare both; else ''."""
    row = con.execute(
        """
        select e.source, e.file_sha256, e.imported_at, coalesce(s.study_name, e.study_id)
        from raw.study_imports i
        join raw.study_imports e
          on e.study_id = i.study_id and e.system_id = i.system_id and e.run_id <> i.run_id
        left join raw.studies s on s.study_id = i.study_id
        where i.run_id = ? and i.system_id = ? and e.file_sha256 <> i.file_sha256
        order by e.imported_at desc, e.run_id desc limit 1
        """,
        [run_id, system_id],
    ).fetchone()
    if row is None:
        return ""
    source, sha, when, study = row
    return (
        f"{system_id} was imported into study {study} before, from {Path(source).name} "
        f"(sha256 {sha[:12]}) at {when:%Y-%m-%d %H:%M}: this import replaces it, and the "
        f"marts now rate the new forecasts only (hint: to keep both, import the earlier file "
        f"again under another id, e.g. --system {system_id}_v1, and compare the two with the "
        "head-to-head query in docs/ratings.md, Choosing between two systems)"
    )


def resolve_study(con: duckdb.DuckDBPyConnection, study: str | None) -> str | None:
    """The id of the study named ``study`` (a name, an id or an id prefix of 4+ digits);
    None for None. Raises a one-line :class:`TsrateError` naming the known studies."""
    if study is None:
        return None
    rows = con.execute("select study_id, study_name from raw.studies").fetchall()
    exact = [sid for sid, name in rows if study in (sid, name)]
    prefix = [sid for sid, _ in rows if len(study) >= 4 and sid.startswith(study)]
    found = exact or prefix
    if len(found) == 1:
        return found[0]
    known = ", ".join(name for _, name in sorted(rows, key=lambda r: r[1])) or "none yet"
    if found:
        raise TsrateError(f"study {study!r} is ambiguous (ids {found}); give more of the id")
    raise TsrateError(f"no study {study!r}; known studies: {known} (see `tsrate studies`)")


def current_study_id(con: duckdb.DuckDBPyConnection, study: str | None = None) -> str | None:
    """The id (as ``tsrate studies`` shows it) of the study :func:`current_study` returns:
    the study named ``study``, else the study of the newest run with complete forecasts;
    None when that run has no study yet (a warehouse of an earlier release). Reads only."""
    if study is not None:
        return resolve_study(con, study)
    if not (_has_table(con, "runs") and _has_column(con, "runs", "study_id")):
        return None
    row = con.execute(
        f"select study_id from raw.runs where status in {COMPLETE!r} "
        "order by started_at desc, run_id desc limit 1"
    ).fetchone()
    return None if row is None else row[0]


#: run statuses whose forecasts are complete (as tsrate.robustness.build_run.FORECASTED)
COMPLETE = ("forecasted", "succeeded", "build_failed", "publish_failed")


def studies_stored(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether :func:`ensure_studies` would write nothing: the study tables exist and every
    run has its study (a warehouse of an earlier release has not). Reads only."""
    if not (_has_table(con, "studies") and _has_table(con, "runs")):
        return False
    if not _has_column(con, "runs", "study_id"):
        return False
    return not con.execute("select count(*) from raw.runs where study_id is null").fetchone()[0]


def list_studies(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Each study with its systems (from runs with complete forecasts, less the systems each
    run skipped) and last update.

    Reads only where the studies are stored (:func:`studies_stored`): a read-only connection
    will do; otherwise :func:`ensure_studies` first, which writes."""
    if not studies_stored(con):
        ensure_studies(con)
    # a run lists every system of its study, the ones it skipped (no weights, no endpoint) too
    skipped = (
        "select run_id, system_id from raw.run_skipped_systems"
        if _has_table(con, "run_skipped_systems")
        else "select null::varchar as run_id, null::varchar as system_id where false"
    )
    rows = con.execute(
        f"""
        with skipped as ({skipped}),
        named as (
            select run_id, study_id, unnest(systems) as system_id
            from raw.runs where status in {COMPLETE!r}
        ),
        forecast as (
            select study_id, list_sort(list(distinct system_id)) as systems
            from named anti join skipped using (run_id, system_id)
            where system_id is not null
            group by study_id
        )
        select s.study_id, s.study_name, s.tickers, s.study_start, s.study_end,
               s.context_length, s.horizon, s.stride, s.perturbations,
               count(r.run_id) as n_runs,
               max(coalesce(r.finished_at, r.started_at)) as last_update,
               any_value(f.systems) as systems
        from raw.studies s left join raw.runs r using (study_id)
        left join forecast f using (study_id)
        group by all order by last_update desc nulls last, s.study_name
        """
    ).fetchall()
    keys = (
        "study_id", "study_name", "tickers", "start", "end", "context_length", "horizon",
        "stride", "perturbations", "n_runs", "last_update", "systems",
    )  # fmt: skip
    return [dict(zip(keys, row, strict=True)) for row in rows]


#: the widest line of ``tsrate studies``
LISTING_WIDTH = 100


def listing_lines(text: str, indent: str = "") -> list[str]:
    """``text`` wrapped to :data:`LISTING_WIDTH` characters at its spaces, the first line
    indented by ``indent``, the next ones by four more. A word longer than the room (a long
    study name, to be copied whole into ``--study``) stays whole on a line of its own, past
    the width, as ``tsrate systems`` keeps a long path."""
    return textwrap.wrap(
        text,
        LISTING_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + "    ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def describe_studies(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The lines of ``tsrate studies``, each within :data:`LISTING_WIDTH` characters (but a
    word longer than that, alone on its line): per
    study its name, id, runs and last update, then (indented by two) its tickers and window,
    then its systems (the withdrawn ones named as such), each wrapped as
    :func:`listing_lines` does; each withdrawn system then on a line of its own with the
    withdrawal's time and reason."""
    lines = []
    withdrawn: dict[str, list[dict[str, Any]]] = {}
    for row in withdrawn_systems(con):
        withdrawn.setdefault(row["study_id"], []).append(row)
    for s in list_studies(con):
        when = s["last_update"].strftime("%Y-%m-%d %H:%M") if s["last_update"] else "never"
        rows = withdrawn.get(s["study_id"], [])
        out = [row["system_id"] for row in rows]
        systems = ", ".join(x for x in s["systems"] or [] if x not in out)
        systems = systems or ("none" if out else "no complete run")
        runs = f"{s['n_runs']} run{'' if s['n_runs'] == 1 else 's'}, last {when}"
        lines += listing_lines(f"{s['study_name']}  {s['study_id']}  {runs}")
        lines += listing_lines(
            f"{len(s['tickers'])} tickers ({' '.join(s['tickers'])}) {s['start']}..{s['end']} "
            f"n={s['context_length']} d={s['horizon']} stride={s['stride']} "
            f"[{' '.join(s['perturbations'])}]",
            "  ",
        )
        lines += listing_lines(
            f"systems: {systems}" + (f"  withdrawn: {', '.join(out)}" if out else ""), "  "
        )
        lines += [withdrawal_line(f"  withdrawn {row['system_id']}", row) for row in rows]
    return lines or ["no study yet: `tsrate run` defines one"]


def withdrawn_systems(
    con: duckdb.DuckDBPyConnection, published: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Each system withdrawn from a study (``tsrate withdraw``) and still out of the marts
    ``tsrate build --study`` makes of it (the rule of ``int_run_partitions_selected``): no
    run of the study with complete forecasts holding it, started at or after its newest
    withdrawal there and no later than the run that build builds (the study's newest run
    whose marts can be built: a newer run whose build failed brings nothing back). Sorted
    by study, system; each with the study's name and the newest withdrawal's time and
    reason.

    Reads only (a read-only connection will do): none before the first withdrawal.
    ``published``: the snapshot's run ids, where a run stopped after its publication is not
    marked succeeded yet (:func:`tsrate.platform.warehouse.reconciled_status_sql`)."""
    from tsrate.platform.warehouse import BUILDABLE_STATUSES, reconciled_status_sql

    if not all(
        _has_table(con, t)
        for t in ("study_withdrawals", "runs", "run_partitions", "forecast_partitions")
    ) or not _has_column(con, "runs", "study_id"):
        return []
    rows = con.execute(
        f"""
        with newest as (
            select study_id, system_id, max(withdrawn_at) as withdrawn_at,
                   arg_max(reason, withdrawn_at) as reason
            from raw.study_withdrawals group by study_id, system_id
        ),
        built as (  -- per study, the run its build builds
            select study_id, started_at from raw.runs
            where {reconciled_status_sql(published)} in {BUILDABLE_STATUSES!r}
            qualify row_number() over (
                partition by study_id order by started_at desc, run_id desc
            ) = 1
        ),
        held as (
            select r.study_id, p.system_id, max(r.started_at) as last_started
            from raw.runs r join built b using (study_id)
            join raw.run_partitions rp using (run_id)
            join raw.forecast_partitions p using (partition_key)
            where {reconciled_status_sql(published, "r")} in {COMPLETE!r}
            and r.started_at <= b.started_at
            group by r.study_id, p.system_id
        )
        select n.study_id, n.system_id, n.withdrawn_at, n.reason, s.study_name
        from newest n left join held h using (study_id, system_id)
        left join raw.studies s using (study_id)
        where h.last_started is null or h.last_started < n.withdrawn_at
        order by n.study_id, n.system_id
        """
    ).fetchall()
    keys = ("study_id", "system_id", "withdrawn_at", "reason", "study_name")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def withdrawal_line(head: str, row: Mapping[str, Any], width: int = 99) -> str:
    """``head`` with the withdrawal's time and, when one was given, its reason (on one line,
    shortened with ``...`` to keep the line within ``width`` characters)."""
    line = f"{head} {row['withdrawn_at']:%Y-%m-%d %H:%M}"
    reason = " ".join(str(row.get("reason") or "").split())
    if not reason:
        return line
    room = width - len(line) - 2
    if len(reason) > room:
        reason = reason[: max(room - 3, 0)].rstrip() + "..."
    return f"{line}: {reason}"


def imported_systems(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Each imported system with its origin (file, study, run, when), newest import first.

    Reads only (a read-only connection will do): nothing before the first recorded import."""
    if not (_has_table(con, "study_imports") and _has_table(con, "studies")):
        return []
    rows = con.execute(
        """
        select i.system_id, i.source, i.file_sha256, i.run_id, i.study_id, s.study_name,
               i.imported_at
        from raw.study_imports i left join raw.studies s using (study_id)
        order by i.imported_at desc, i.run_id desc
        """
    ).fetchall()
    keys = ("system_id", "source", "file_sha256", "run_id", "study_id", "study_name", "imported_at")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def study_of_newest_run(con: duckdb.DuckDBPyConnection) -> str | None:
    """The study of the newest run with complete forecasts (None without one)."""
    ensure_studies(con)
    row = con.execute(
        f"select study_id from raw.runs where status in {COMPLETE!r} "
        "order by started_at desc, run_id desc limit 1"
    ).fetchone()
    return None if row is None else str(row[0])


def newest_complete_run(
    con: duckdb.DuckDBPyConnection, study_id: str, published: Collection[str] = ()
) -> str:
    """The newest run of ``study_id`` with status forecasted, succeeded or publish_failed
    (what ``tsrate build`` builds: tsrate.platform.warehouse.BUILDABLE_STATUSES), or a
    one-line :class:`TsrateError` with a hint. ``published``: as for
    :func:`tsrate.platform.warehouse.buildable_run`."""
    from tsrate.platform.warehouse import reconciled_status_sql

    row = con.execute(
        f"select run_id from raw.runs where study_id = ? and {reconciled_status_sql(published)} "
        "in ('forecasted', 'succeeded', 'publish_failed') order by started_at desc, run_id desc "
        "limit 1",
        [study_id],
    ).fetchone()
    if row is None:
        raise TsrateError(
            f"study {study_id} has no run with complete forecasts: `tsrate run` with its "
            "options forecasts it (see `tsrate studies`)"
        )
    return str(row[0])


def imported_system_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Lines per imported system for ``tsrate systems``: its newest import, then one short
    line (at most :data:`ALSO_WIDTH` characters) for each other study it is imported into
    (its newest import there): an id is rated in every study it was imported into. An
    import withdrawn from its study (``tsrate withdraw``) says so; one not rated yet (no build
    of it finished) says why and what rates it (:mod:`tsrate.robustness.blackbox.import_state`)."""
    from tsrate.robustness.blackbox.import_state import unrated_imports

    lines, seen = [], set()
    withdrawn = {(w["study_id"], w["system_id"]): w for w in withdrawn_systems(con)}
    stored = _has_table(con, "runs") and _has_table(con, "study_imports")
    unrated = unrated_imports(con) if stored else {}
    for row in imported_systems(con):
        key = (row["system_id"], row["study_id"])
        if key in seen:
            continue
        out = withdrawn.get((row["study_id"], row["system_id"]))
        gone = "" if out is None else f"; withdrawn {out['withdrawn_at']:%Y-%m-%d %H:%M}"
        state = unrated.get(key) if out is None else None
        when = row["imported_at"].strftime("%Y-%m-%d %H:%M")
        if any(system == row["system_id"] for system, _ in seen):
            head = f"  also in study {row['study_name']} ({row['study_id']}) from "
            tail = f", {when}{gone}" + (f", {state.short}" if state else "")
            name = Path(str(row["source"])).name
            room = max(ALSO_WIDTH - 2 - len(head) - len(tail), 8)
            name = name if len(name) <= room else name[: room - 1] + "…"
            fixed = head + name + tail
            at = next(i for i, line in enumerate(lines) if line.startswith(row["system_id"] + "  "))
            ends = at + 1
            while ends < len(lines) and lines[ends].startswith("  also in study "):
                ends += 1
            lines.insert(ends, fixed)
        else:
            lines.append(
                f"{row['system_id']}  imported from {row['source']} (sha256 "
                f"{row['file_sha256'][:12]}) into study {row['study_name']} ({row['study_id']}), "
                f"run {row['run_id']}, {when}"
            )
            if out is not None:
                lines[-1] += f"{gone} (`tsrate withdraw`)"
            elif state is not None:
                lines[-1] += f"; {state.note}"
        seen.add(key)
    return lines


#: Longest line of ``tsrate systems`` naming another study an imported id is in (printed
#: indented by two).
ALSO_WIDTH = 100


def withdrawal_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """One line per system withdrawn from a study and still out of its marts, for ``tsrate
    systems``, printed indented by two: the study, when, and the reason given (none:
    nothing more)."""
    return [
        withdrawal_line(f"{row['system_id']}  from study {row['study_name']}", row, width=97)
        for row in withdrawn_systems(con)
    ]


def stored_company_rows(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """raw.company_metadata's newest non-empty values per ticker (no pandas)."""
    exists = con.execute(
        "select count(*) from duckdb_tables() where schema_name = 'raw' "
        "and table_name = 'company_metadata'"
    ).fetchone()[0]
    if not exists:
        return []
    columns = ("company_name", "industry", "biased_offset")
    rows = con.execute(
        "select ticker, "
        + ", ".join(f"arg_max({c}, loaded_at) filter (where {c} is not null)" for c in columns)
        + " from raw.company_metadata group by ticker"
    ).fetchall()
    return [dict(zip(("ticker", *columns), row, strict=True)) for row in rows]


def current_study(con: duckdb.DuckDBPyConnection, study: str | None = None) -> Study | None:
    """The study named ``study`` (name or id), else the study of the newest run with complete
    forecasts, as its newest such run defined it (with that run's systems); None when the
    warehouse has no such run. Reads only (a read-only connection will do)."""
    if not _has_table(con, "runs"):
        if study is not None:
            raise TsrateError(f"no study {study!r}: no run yet; `tsrate run` defines one")
        return None
    if study is not None:
        if not (_has_column(con, "runs", "study_id") and _has_table(con, "studies")):
            raise TsrateError(
                f"no study {study!r}: this warehouse has no studies yet (`tsrate studies` "
                "assigns its runs theirs)"
            )
        study_id = resolve_study(con, study)
        row = con.execute(
            f"select study from raw.runs where study_id = ? and status in {COMPLETE!r} "
            "order by started_at desc, run_id desc limit 1",
            [study_id],
        ).fetchone()
        if row is None:
            raise TsrateError(f"study {study!r} has no run with complete forecasts yet")
    else:
        row = con.execute(
            f"select study from raw.runs where status in {COMPLETE!r} "
            "order by started_at desc, run_id desc limit 1"
        ).fetchone()
    if row is None:
        return None
    found = Study.from_json(row[0])
    imported = set()
    if _has_table(con, "study_imports"):  # an import run lists its imported system too
        imported = {r[0] for r in con.execute("select system_id from raw.study_imports").fetchall()}
    return dataclasses.replace(found, systems=tuple(s for s in found.systems if s not in imported))
