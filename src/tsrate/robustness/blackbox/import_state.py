"""Whether an import is rated yet, as ``tsrate systems`` says it beside the import's line.

An import stores its forecasts, then records itself (its registration, ``raw.study_imports``
and its run's status ``forecasted``, in one transaction:
:func:`tsrate.robustness.blackbox.predictions.import_forecasts`), then builds and publishes
the study. Stopped (Ctrl-C, a kill) or failed after the record, it is whole but not rated:

* ``forecasted``: no build of it finished (``--no-build``, or its build was stopped);
  ``tsrate build --study`` rates it;
* ``publish_failed``: built, not published; ``tsrate build --study`` publishes it;
* ``build_failed``: its build failed; ``tsrate build`` skips such a run, so importing the
  file again (its stored forecasts are reused) rates it once the cause is fixed;
* ``interrupted`` (or ``running``, ``failed``): the import stopped between its record and its
  run's ``forecasted``, which an earlier release did not write together; importing the file
  again rates it.

An import is rated once a run of its study started no earlier than it has succeeded (its
own, or a later run whose build reads it: ``int_run_partitions_selected``). Each state
names the way back too: ``tsrate withdraw SYSTEM --study STUDY`` takes the import out of its
study in any of them (:func:`tsrate.robustness.withdrawals.study_systems` counts it).
"""

from __future__ import annotations

import dataclasses

import duckdb


@dataclasses.dataclass(frozen=True)
class ImportState:
    """Why an import is not rated yet: ``note`` for its own line of ``tsrate systems``,
    ``short`` for the line naming another study it is imported into."""

    note: str
    short: str


def _state(system_id: str, study_id: str, status: str | None) -> ImportState:
    undo = f"`tsrate withdraw {system_id} --study {study_id}` takes it out"
    again = "import the file again to rate it (its stored forecasts are reused)"
    if status == "forecasted":
        return ImportState(
            "stored, not rated yet: no build of it finished (imported with --no-build, or its "
            f"build was stopped): `tsrate build --study {study_id}` rates it, or {undo}",
            "not rated yet",
        )
    if status == "publish_failed":
        return ImportState(
            "built, not published: its publish failed (`tsrate runs` says why): "
            f"`tsrate build --study {study_id}` rates and publishes it, or {undo}",
            "not published yet",
        )
    if status == "build_failed":
        return ImportState(
            f"not rated: its build failed (`tsrate runs` says why): {again} once fixed, or {undo}",
            "not rated: build failed",
        )
    return ImportState(
        f"not rated: the import stopped before it finished (run {status or 'missing'}): "
        f"{again}, or {undo}",
        "not rated: import stopped",
    )


def unrated_imports(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], ImportState]:
    """Per (system, study): the state of the system's newest import into the study (as
    :func:`tsrate.robustness.studies.imported_systems` orders them) when it is not rated
    yet; a rated one is left out. Reads only (call it where ``raw.study_imports`` and
    ``raw.runs`` exist)."""
    rows = con.execute(
        """
        with newest as (
            select i.system_id, i.study_id, i.run_id
            from raw.study_imports i
            qualify row_number() over (
                partition by i.system_id, i.study_id order by i.imported_at desc, i.run_id desc
            ) = 1
        )
        select n.system_id, n.study_id, r.status
        from newest n left join raw.runs r using (run_id)
        where r.run_id is null or not exists (
            select 1 from raw.runs b
            where b.study_id = n.study_id and b.status = 'succeeded'
            and b.started_at >= r.started_at
        )
        """
    ).fetchall()
    return {(system, study): _state(system, study, status) for system, study, status in rows}
