"""Withdrawing a system from a study (``tsrate withdraw``): a mistaken import, or a system
that should no longer be rated beside the others, leaves the study's marts.

Nothing is deleted: the withdrawal is a row of ``raw.study_withdrawals`` (study, system,
when, reason), and ``int_run_partitions_selected`` leaves out the system's partitions from
the study's runs started before its newest withdrawal there. A later run or import that
forecasts the system brings it back, with its stored forecasts: an import of it (an
imported system), or a ``tsrate run`` naming it or an import that forecasts the study's
baselines (a system tsrate forecasts itself).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Collection
from pathlib import Path

import duckdb

from tsrate import TsrateError
from tsrate.robustness.studies import COMPLETE, ensure_studies, resolve_study, withdrawn_systems


@dataclasses.dataclass(frozen=True)
class Withdrawal:
    """What ``tsrate withdraw`` did: the study (id and name), the system, when; ``recorded``
    is False when the system was already withdrawn (then nothing was written)."""

    study_id: str
    study_name: str
    system_id: str
    withdrawn_at: dt.datetime
    recorded: bool
    origin: str  # how the study was chosen: "--study X" or "the newest run"


def study_systems(con: duckdb.DuckDBPyConnection, study_id: str) -> list[str]:
    """The systems with forecasts in a run of ``study_id`` whose forecasts are complete, and
    those imported into it (``raw.study_imports``, as ``tsrate systems`` lists them): an
    import recorded under a run that did not finish (stopped by an earlier release between
    its record and its run's ``forecasted``) holds the system's stored forecasts there too."""
    rows = con.execute(
        f"""
        select p.system_id
        from raw.runs r join raw.run_partitions rp using (run_id)
        join raw.forecast_partitions p using (partition_key)
        where r.study_id = $study and r.status in {COMPLETE!r}
        union
        select system_id from raw.study_imports where study_id = $study
        order by system_id
        """,
        {"study": study_id},
    ).fetchall()
    return [row[0] for row in rows]


def systems_held(
    con: duckdb.DuckDBPyConnection, run_id: str, published: Collection[str] = ()
) -> list[str]:
    """The systems whose partitions a build of ``run_id`` for its study reads before the
    withdrawals leave some out: those of the run and of its study's runs with complete
    forecasts started no later than it (``int_run_partitions_selected``'s candidates).
    ``published``: as for :func:`built_run`."""
    from tsrate.platform.warehouse import reconciled_status_sql

    status = reconciled_status_sql(published, "r")
    rows = con.execute(
        f"""
        with chosen as (select study_id, started_at from raw.runs where run_id = $run)
        select distinct p.system_id
        from raw.runs r join chosen using (study_id) join raw.run_partitions rp using (run_id)
        join raw.forecast_partitions p using (partition_key)
        where r.run_id = $run or ({status} in {COMPLETE!r} and r.started_at <= chosen.started_at)
        order by p.system_id
        """,
        {"run": run_id},
    ).fetchall()
    return [row[0] for row in rows]


def built_run(
    con: duckdb.DuckDBPyConnection, study_id: str | None, published: Collection[str] = ()
) -> str | None:
    """The run ``tsrate build`` builds: the newest buildable run of ``study_id`` (``--study``),
    else the newest buildable run; None when there is none (the build says why).
    ``published``: the snapshot's run ids, where a run stopped after its publication is not
    marked succeeded yet (the build marks it so first, then builds it:
    :func:`tsrate.platform.warehouse.reconciled_status_sql`)."""
    from tsrate.platform.warehouse import buildable_run
    from tsrate.robustness.studies import newest_complete_run

    try:
        if study_id:
            return newest_complete_run(con, study_id, published)
        return buildable_run(con, published)[0]
    except TsrateError:
        return None


def rated_and_out(
    con: duckdb.DuckDBPyConnection,
    study_id: str,
    run_id: str,
    published: Collection[str] = (),
    withdrawn: Collection[str] | None = None,
) -> tuple[list[str], set[str]]:
    """(the systems a build of ``run_id`` reads for ``study_id``, those of them withdrawn);
    ``run_id`` is the study's newest buildable run (:func:`built_run`), whose build the
    listing (:func:`~tsrate.robustness.studies.withdrawn_systems`) describes. ``withdrawn``:
    the study's withdrawn system ids from that listing when the caller has read it already
    (None: read it here)."""
    held = systems_held(con, run_id, published)
    if withdrawn is None:
        listing = withdrawn_systems(con, published)
        withdrawn = [row["system_id"] for row in listing if row["study_id"] == study_id]
    return held, set(withdrawn) & set(held)


def check_build_rates(
    con: duckdb.DuckDBPyConnection, study: str | None, published: Collection[str] = ()
) -> None:
    """Refuse, in one line with a hint, a ``tsrate build`` (``--study``: that study's) whose
    every system is withdrawn: its marts and report would be empty. A study ends so when its
    newer runs cannot be built (a build that failed after a withdrawal): the build falls
    back to an older run whose systems are all out. Reads only, before the build marks the
    runs stopped after their publication succeeded: ``published``, the snapshot's run ids,
    makes it judge the run the build will build (:func:`built_run`)."""
    from tsrate.robustness.studies import studies_stored

    if not studies_stored(con):
        return  # an earlier release's warehouse: nothing withdrawn yet
    run_id = built_run(con, resolve_study(con, study), published)
    if run_id is None:
        return
    study_id, name = con.execute(
        "select r.study_id, s.study_name from raw.runs r join raw.studies s using (study_id) "
        "where r.run_id = ?",
        [run_id],
    ).fetchone()
    held, out = rated_and_out(con, study_id, run_id, published)
    if held and not [s for s in held if s not in out]:
        raise _refuse(
            f"the build of study {name} ({study_id}), run {run_id}, would rate no system: "
            f"every one is withdrawn ({', '.join(sorted(out))})",
            "rate a system in the study with `tsrate run` or `tsrate import` (a newer run "
            "brings it back); `tsrate runs` shows why newer runs cannot build",
        )


def _known_systems(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every system id this warehouse has forecasts or an import of."""
    rows = con.execute(
        "select system_id from raw.forecast_partitions union "
        "select system_id from raw.study_imports union "
        "select system_id from raw.imported_systems"
    ).fetchall()
    return {row[0] for row in rows}


def _default_study(con: duckdb.DuckDBPyConnection, published: Collection[str] = ()) -> str:
    """The study of the run ``tsrate build`` builds by default (the newest buildable run;
    ``published``: as for :func:`built_run`)."""
    from tsrate.platform.warehouse import buildable_run

    run_id, _ = buildable_run(con, published)
    row = con.execute("select study_id from raw.runs where run_id = ?", [run_id]).fetchone()
    return str(row[0])


def _refuse(message: str, hint: str) -> TsrateError:
    error = TsrateError(message)
    error.hint = hint
    return error


def withdraw_system(
    con: duckdb.DuckDBPyConnection,
    system_id: str,
    study: str | None = None,
    reason: str | None = None,
    published: Collection[str] = (),
) -> Withdrawal:
    """Withdraw ``system_id`` from the study named ``study`` (name, id or id prefix; None: the
    study of the newest buildable run, as ``tsrate build`` picks it). Refuses in one line,
    writing nothing: an unknown study or system, a system without forecasts in the study,
    the study's last system not withdrawn in what its build reads (:func:`built_run`, the
    runs before it): that build would rate nothing. ``published``: as for :func:`built_run`
    (a run stopped after its publication is the run the build builds).
    Call under the writer lock (it writes)."""
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.robustness.study import did_you_mean

    create_raw_tables(con)  # a writing edge: raw.study_withdrawals, raw.study_imports ...
    ensure_studies(con)
    study_id = resolve_study(con, study) if study is not None else _default_study(con, published)
    name = con.execute(
        "select study_name from raw.studies where study_id = ?", [study_id]
    ).fetchone()[0]
    systems = study_systems(con, study_id)
    label = f"study {name} ({study_id})"
    if system_id not in systems:
        listed = ", ".join(systems) or "none yet"
        if system_id in _known_systems(con):
            raise _refuse(
                f"system {system_id!r} has no forecasts in {label}; its systems: {listed}",
                "`tsrate studies` lists each study's systems; name the study with --study",
            )
        raise _refuse(
            f"unknown system {system_id!r}{did_you_mean(system_id, systems)}; the systems "
            f"of {label}: {listed}",
            "`tsrate studies` lists each study's systems",
        )
    origin = f"--study {study}" if study is not None else "the newest run"
    out = {
        row["system_id"]: row
        for row in withdrawn_systems(con, published)
        if row["study_id"] == study_id
    }
    if system_id in out:
        return Withdrawal(study_id, name, system_id, out[system_id]["withdrawn_at"], False, origin)
    # what the study's build reads: its newest buildable run, and the runs before it
    held, held_out = systems, set(out)
    run_id = built_run(con, study_id, published)
    if run_id is not None:
        held, held_out = rated_and_out(con, study_id, run_id, published, withdrawn=out)
    if not [s for s in held if s != system_id and s not in held_out]:
        # one system still builds (its marts say it has nothing to compare with); none would
        # publish empty marts and an empty report over the last good snapshot
        others = f", the others withdrawn ({', '.join(sorted(held_out))})" if held_out else ""
        raise _refuse(
            f"{system_id!r} is the last system rated in {label}{others}: withdrawing it "
            "would leave the study nothing to rate",
            "rate another system in the study first with `tsrate run` or `tsrate import`; "
            "`tsrate build --study` builds another study",
        )
    (withdrawn_at,) = con.execute(
        "insert into raw.study_withdrawals values (?, ?, now()::timestamp, ?) "
        "returning withdrawn_at",
        [study_id, system_id, reason],
    ).fetchone()
    return Withdrawal(study_id, name, system_id, withdrawn_at, True, origin)


def brought_back_note(con: duckdb.DuckDBPyConnection, run_id: str, system_id: str) -> str:
    """One line when the run ``run_id`` (an import, not finished yet) brings ``system_id``
    back into its study's marts: withdrawn there before the run started, and held by no
    other run of the study with complete forecasts started since (the listing's rule,
    :func:`~tsrate.robustness.studies.withdrawn_systems`); else ''."""
    present = con.execute(
        "select count(*) from duckdb_tables() where schema_name = 'raw' "
        "and table_name = 'study_withdrawals'"
    ).fetchone()[0]
    if not present:
        return ""  # an earlier release's warehouse: nothing withdrawn yet
    row = con.execute(
        f"""
        with this as (select study_id, started_at from raw.runs where run_id = $run),
        newest as (
            select w.study_id, max(w.withdrawn_at) as withdrawn_at,
                   arg_max(w.reason, w.withdrawn_at) as reason
            from raw.study_withdrawals w join this using (study_id)
            where w.system_id = $system and w.withdrawn_at <= this.started_at
            group by w.study_id
        )
        select coalesce(s.study_name, n.study_id), n.withdrawn_at, n.reason
        from newest n left join raw.studies s using (study_id)
        where not exists (
            select 1 from raw.runs r join raw.run_partitions rp using (run_id)
            join raw.forecast_partitions p using (partition_key)
            where r.study_id = n.study_id and r.run_id <> $run and p.system_id = $system
            and r.status in {COMPLETE!r} and r.started_at >= n.withdrawn_at
        )
        """,
        {"run": run_id, "system": system_id},
    ).fetchone()
    if row is None:
        return ""
    study, when, reason = row
    why = f" ({reason})" if reason else ""
    return (
        f"{system_id} was withdrawn from study {study} at {when:%Y-%m-%d %H:%M}{why}: this "
        f"import brings it back into the study's marts (hint: `tsrate withdraw {system_id} "
        f"--study {study}` takes it out again)"
    )


def bring_back_ways(con: duckdb.DuckDBPyConnection, system_id: str) -> str:
    """What brings ``system_id`` back once withdrawn, as the withdraw line lists it: an
    import of it for an imported system; a run naming it or an import's baselines for a
    system tsrate forecasts itself (an import of such an id is refused)."""
    imported = con.execute(
        "select count(*) from raw.study_imports where system_id = ?", [system_id]
    ).fetchone()[0]
    if imported:
        return "an import of it"
    return "`tsrate run` naming it, an import that forecasts the study's baselines"


def published_rates(snapshot: Path, study_id: str, system_id: str) -> bool:
    """Whether the published snapshot's ratings rate ``system_id`` in ``study_id`` (False
    without a readable snapshot): what a withdrawal recorded without a build leaves shown."""
    from tsrate.platform.publish import snapshot_rows

    rows = snapshot_rows(  # None: no snapshot, an older one without the column, unreadable
        snapshot,
        "select count(*) from marts.ratings where study_id = ? and system_id = ?",
        [study_id, system_id],
    )
    return bool(rows and rows[0][0])
