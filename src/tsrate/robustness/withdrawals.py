"""Withdrawing a system from a study (``tsrate withdraw``): a mistaken import, or a system
that should no longer be rated beside the others, leaves the study's marts.

Nothing is deleted: the withdrawal is a row of ``raw.study_withdrawals`` (study, system,
when, reason), and ``int_run_partitions_selected`` leaves out the system's partitions from
the study's runs started before its newest withdrawal there. A later run or import that
forecasts the system (a ``tsrate run`` naming it, an import of it, or an import that
forecasts the study's baselines) brings it back, with its stored forecasts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

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
    """The systems with forecasts in a run of ``study_id`` whose forecasts are complete."""
    rows = con.execute(
        f"""
        select distinct p.system_id
        from raw.runs r join raw.run_partitions rp using (run_id)
        join raw.forecast_partitions p using (partition_key)
        where r.study_id = ? and r.status in {COMPLETE!r}
        order by p.system_id
        """,
        [study_id],
    ).fetchall()
    return [row[0] for row in rows]


def _known_systems(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every system id this warehouse has forecasts or an import of."""
    rows = con.execute(
        "select system_id from raw.forecast_partitions union "
        "select system_id from raw.study_imports union "
        "select system_id from raw.imported_systems"
    ).fetchall()
    return {row[0] for row in rows}


def _default_study(con: duckdb.DuckDBPyConnection) -> str:
    """The study of the run ``tsrate build`` builds by default (the newest buildable run)."""
    from tsrate.platform.warehouse import buildable_run

    run_id, _ = buildable_run(con)
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
) -> Withdrawal:
    """Withdraw ``system_id`` from the study named ``study`` (name, id or id prefix; None: the
    study of the newest buildable run, as ``tsrate build`` picks it). Refuses in one line,
    writing nothing: an unknown study or system, a system without forecasts in the study,
    the study's last system not withdrawn (its build would rate nothing).
    Call under the writer lock (it writes)."""
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.robustness.study import did_you_mean

    create_raw_tables(con)  # a writing edge: raw.study_withdrawals, raw.study_imports ...
    ensure_studies(con)
    study_id = resolve_study(con, study) if study is not None else _default_study(con)
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
    out = {row["system_id"]: row for row in withdrawn_systems(con) if row["study_id"] == study_id}
    if system_id in out:
        return Withdrawal(study_id, name, system_id, out[system_id]["withdrawn_at"], False, origin)
    if not [s for s in systems if s != system_id and s not in out]:
        # one system still builds (its marts say it has nothing to compare with); none would
        # publish empty marts and an empty report over the last good snapshot
        others = f", the others withdrawn ({', '.join(sorted(out))})" if out else ""
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
