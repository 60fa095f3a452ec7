"""The bodies of the commands that read the warehouse or serve it: ``systems``, ``studies``,
``runs``, ``status``, ``query``, ``report``, ``docs``, ``export``, ``serve``.

Their options are defined in :mod:`tsrate.commands.reading_parsers`; each body imports what it needs
when it runs (``tsrate systems`` must start in under 2 s).
"""

from __future__ import annotations

import argparse
import sys

from tsrate import TsrateError


def cmd_systems(args: argparse.Namespace) -> int:
    from tsrate.commands.systems_listing import system_lines
    from tsrate.config import Study
    from tsrate.systems.registered import exported
    from tsrate.systems.registry import system_infos

    # one read of the live file: the registered language models (register-llm) join the
    # seed's systems; the imported and withdrawn systems are listed after them
    live = _live_systems()
    with exported(live[0] if live is not None else []):
        if args.show_prompt:
            return _show_prompt(args.show_prompt, Study.from_vars())
        infos = system_infos(Study.from_vars())
    width = max(len(i.system_id) for i in infos)
    for info in infos:  # each line within SYSTEMS_WIDTH: a long reason goes on below
        available = info.availability.available
        mark = "available  " if available else "unavailable"
        head = (
            f"{info.system_id:<{width}}  {mark}  [{' '.join(info.accepted_perturbations)}]  "
            f"{info.display_name}:"
        )
        for line in system_lines(head, info.availability.reason, available):
            print(line)
    _print_live_systems(live)
    return 0


def _live_systems() -> tuple[list, list[str], list[str]] | None:
    """(registered language models, imported systems' lines, withdrawals' lines) of the
    live warehouse, read once as a live reader (the shared side of the writer lock, so a
    writer starting meanwhile waits instead of failing on the open file); all empty without
    a warehouse; None while another process writes it."""
    from tsrate.config import warehouse_path
    from tsrate.platform.query import live_reader
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.studies import imported_system_lines, withdrawal_lines
    from tsrate.systems.registered import registrations

    if not warehouse_path().exists():
        return [], [], []
    try:
        with live_reader(warehouse_path()):
            with connect(warehouse_path(), read_only=True) as con:
                return registrations(con), imported_system_lines(con), withdrawal_lines(con)
    except TsrateError:
        return None


def _print_live_systems(live: tuple[list, list[str], list[str]] | None) -> None:
    """The imported systems of the live warehouse, then the systems withdrawn from a study;
    while another process writes it, a note instead (the list above stands: it comes from
    the seed and this machine)."""
    from tsrate.commands.systems_listing import wrapped

    if live is None:
        note = (
            "imported systems and registered language models: not listed while another "
            "process writes the warehouse; "
            "rerun `tsrate systems` when it finishes"
        )
        print("\n".join(wrapped(note)))
        return
    _, lines, withdrawn = live
    if lines:
        print("imported systems (rated in their study's marts once built):")
        for line in lines:  # an import's source may be a long path
            print("\n".join(wrapped(line, "  ")))
    if withdrawn:
        print("withdrawn from a study (left out of its marts: `tsrate withdraw`):")
        for line in withdrawn:
            print(f"  {line}")


def cmd_studies(args: argparse.Namespace) -> int:
    """List the studies: a read under the shared side of the writer lock (as ``query
    --live``), so a listing neither waits for nor shows up as a writer. Only a warehouse of
    an earlier release, whose runs have no study yet, is written: under the writer lock, its
    runs get their studies first (:func:`tsrate.robustness.studies.ensure_studies`)."""
    from tsrate.config import warehouse_path
    from tsrate.platform.locking import writer_lock
    from tsrate.platform.query import live_reader
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.studies import describe_studies, studies_stored

    warehouse = warehouse_path()
    if not warehouse.exists():
        print(f"no study yet: no warehouse at {warehouse}; `tsrate run` defines one")
        return 0
    reader = "`tsrate studies` (it reads the live warehouse)"
    with live_reader(warehouse, reader=reader, advice="Rerun it when the writer finishes"):
        with connect(warehouse, read_only=True) as con:
            lines = describe_studies(con) if studies_stored(con) else None
    if lines is None:  # an earlier release's warehouse: its studies are written first
        with writer_lock(warehouse), connect(warehouse) as con:
            lines = describe_studies(con)
    for line in lines:
        print(line)
    return 0


def _show_prompt(system_id: str, study) -> int:  # noqa: ANN001 - tsrate.config.Study
    from tsrate.config import load_companies
    from tsrate.systems.llm_prompts import describe_messages, sample_batch
    from tsrate.systems.registry import create_system, load_systems_seed

    seed = load_systems_seed().set_index("system_id")
    prompted = _prompted_systems(seed, study, load_companies())
    listed = f"the systems with a prompt are {', '.join(prompted) or 'none here'}"
    if system_id not in seed.index:
        from tsrate.commands.usage import did_you_mean

        error = TsrateError(f"unknown system {system_id!r}{did_you_mean(system_id, prompted)}")
        error.hint = f"`tsrate systems` lists every system; {listed}"
        raise error
    if system_id not in prompted:
        error = TsrateError(f"system {system_id!r} is not a language model: it has no prompt")
        error.hint = listed
        raise error
    implementation = seed.loc[system_id, "implementation"]
    system = create_system(implementation, study, load_companies())
    batch = sample_batch(study.context_length, study.horizon)
    print(f"# {system_id}: prompt for a sample window of {study.context_length} values")
    print(describe_messages(system.prompts(batch)[0]))
    return 0


def _prompted_systems(seed, study, companies) -> list[str]:  # noqa: ANN001 - frames, Study
    """The seed's systems that send a prompt (a language model's ``prompts``), in seed order;
    one that cannot be built here is left out."""
    from tsrate.systems.registry import create_system

    prompted = []
    for system_id, implementation in seed["implementation"].items():
        try:
            system = create_system(implementation, study, companies) if implementation else None
        except TsrateError:
            continue
        if hasattr(system, "prompts"):
            prompted.append(system_id)
    return prompted


def cmd_runs(args: argparse.Namespace) -> int:
    import contextlib

    from tsrate.config import warehouse_path
    from tsrate.platform import locking
    from tsrate.platform.locking import describe_holder, writer_status
    from tsrate.platform.query import format_result, live_reader, query

    warehouse = warehouse_path()
    writer = writer_status(warehouse)
    if writer is not None:  # raw.runs cannot be read beside it: the published runs instead
        from tsrate.platform.publish import published_path

        held = (
            f"a writer holds the warehouse: {describe_holder(writer)}; raw.runs cannot be "
            "read beside it"
        )
        if not published_path(warehouse).exists():  # nothing to list: a busy warehouse, 2
            raise TsrateError(
                f"{held}, and no run is published yet: rerun when it finishes "
                "(`tsrate status` follows it)"
            )
        print(
            f"{held}, so these are the published runs (failed and unpublished runs show once "
            "it finishes; `tsrate status` follows it)",
            file=sys.stderr,
        )
        result = query(published_runs_sql(published_path(warehouse)), limit=args.limit)
        print(format_result(result))
        return 0
    busy = live_reader(
        warehouse,
        reader="`tsrate runs` (it reads raw.runs there)",
        advice="Rerun it when the writer finishes; the writer prints its own progress, and "
        '`tsrate query "from published_runs"` lists the published runs meanwhile',
    )
    with busy if warehouse.exists() else contextlib.nullcontext():  # else: query says so
        # the lock's shared side is held: no writer is alive, so a run left unfinished was
        # stopped, and its status says so (the next run or build reconciles it)
        from tsrate.platform.publish import published_path

        status = "status"
        if locking.fcntl is not None:  # else: no lock to tell a live writer by
            from tsrate.platform.publish import published_run_ids
            from tsrate.platform.warehouse import listed_status_sql

            status = listed_status_sql(published_run_ids(published_path(warehouse)))
        rated = rated_by_publication(published_path(warehouse))
        result = query(
            f"select run_id, {status} as status, started_at, finished_at, tickers, systems, "
            f"{rated['column']} as rated, study_start, study_end from raw.runs{rated['join']} "
            "order by started_at desc",
            live=True,
            limit=args.limit,
        )
    print(format_result(result))
    return 0


def _literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


#: ``rated``: what a publication rates where it differs from the run's own ``systems`` (an
#: earlier import of the study it still rates, a withdrawn system it leaves out); else null
RATED_WHERE_DIFFERENT = (
    "case when list_sort({rated}) is distinct from list_sort({own}) then {rated} end"
)


def rated_by_publication(snapshot) -> dict[str, str]:  # noqa: ANN001 - a Path
    """``tsrate runs``' ``rated`` column on ``raw.runs``: the ``column`` expression and the
    ``join`` that brings in each published run's ``published_runs.systems_rated`` (its
    newest publication's), read from ``snapshot``; a null column without a snapshot, or one
    published before systems_rated."""
    from tsrate.platform.publish import snapshot_rows

    rows = snapshot_rows(
        snapshot,
        "select run_id, systems_rated from published_runs where systems_rated is not null "
        "qualify row_number() over (partition by run_id order by published_at desc) = 1",
    )
    if not rows:
        return {"column": "cast(null as varchar[])", "join": ""}
    values = ", ".join(
        f"({_literal(run_id)}, [{', '.join(_literal(s) for s in systems)}]::varchar[])"
        for run_id, systems in rows
    )
    join = f" left join (values {values}) as publication(run_id, systems_rated) using (run_id)"
    column = RATED_WHERE_DIFFERENT.format(rated="publication.systems_rated", own="systems")
    return {"column": column, "join": join}


def published_runs_sql(snapshot) -> str:  # noqa: ANN001 - a Path
    """``tsrate runs`` while a writer holds the warehouse: the snapshot's publications, with
    the study's tickers and period where the publication is a core run's (null: a suite's),
    and the run's systems, imported ones included (``published_runs.systems``); from the
    study's list in rows or snapshots published before that column (imports left out)."""
    import duckdb

    study_systems = "cast(study->'$.systems' as varchar[])"
    try:
        with duckdb.connect(str(snapshot), read_only=True) as con:
            columns = {
                row[0]
                for row in con.execute(
                    "select column_name from duckdb_columns() where table_name = "
                    "'published_runs' and column_name in ('systems', 'systems_rated')"
                ).fetchall()
            }
    except duckdb.Error:  # the query says what is wrong with the snapshot
        columns = set()
    systems = f"coalesce(systems, {study_systems})" if "systems" in columns else study_systems
    rated = (
        RATED_WHERE_DIFFERENT.format(rated="systems_rated", own=systems)
        if "systems_rated" in columns
        else "null"
    )
    return (
        "select run_id, 'published' as status, "
        "date_trunc('second', published_at) as published_at, "
        "array_to_string(cast(study->'$.tickers' as varchar[]), ',') as tickers, "
        f"array_to_string({systems}, ',') as systems, "
        f"array_to_string({rated}, ',') as rated, "
        "cast(study->>'$.start' as date) as study_start, cast(study->>'$.end' as date) as study_end "
        "from published_runs order by published_at desc"
    )


def _ago(stamp: str | None) -> str:
    """`` (12s ago)`` for an ISO time stamp; empty when there is none or it cannot be read."""
    import datetime as dt

    from tsrate.platform.progress import duration

    try:
        then = dt.datetime.fromisoformat(stamp)  # type: ignore[arg-type]
        seconds = (dt.datetime.now(dt.UTC) - then).total_seconds()
    except (TypeError, ValueError):
        return ""
    return f" ({duration(seconds)} ago)"


def read_status() -> dict:
    """Where the warehouse and snapshot are, who writes the warehouse now and what it does,
    and the snapshot's newest publication: without opening the live warehouse (a run may
    hold it) and reading the snapshot read-only."""
    from tsrate.config import warehouse_path
    from tsrate.platform.locking import writer_status
    from tsrate.platform.publish import published_path

    warehouse = warehouse_path()
    snapshot = published_path(warehouse)
    status: dict = {
        "warehouse": str(warehouse),
        "warehouse_exists": warehouse.exists(),
        "writer": writer_status(warehouse),
        "snapshot": str(snapshot),
        "snapshot_exists": snapshot.exists(),
        "published_run_id": None,
        "published_at": None,
        "publications": 0,
        "snapshot_error": None,
    }
    if snapshot.exists():
        import duckdb

        try:
            with duckdb.connect(str(snapshot), read_only=True) as con:
                row = con.execute(
                    "select (select run_id from published_runs order by published_at desc "
                    "limit 1), max(published_at), count(*) from published_runs"
                ).fetchone()
        except duckdb.Error as exc:
            status["snapshot_error"] = str(exc).splitlines()[0]
        else:
            status["published_run_id"] = row[0]
            status["published_at"] = (
                row[1].isoformat(sep=" ", timespec="seconds") if row[1] else None
            )
            status["publications"] = int(row[2])
    return status


def cmd_status(args: argparse.Namespace) -> int:
    import json

    status = read_status()
    if args.format == "json":
        print(json.dumps(status, indent=2))
        return 0
    warehouse = status["warehouse"]
    if not status["warehouse_exists"]:
        warehouse += " (none yet: `tsrate run` creates it)"
    lines = [("warehouse", warehouse)]
    writer = status["writer"]
    if writer is None:
        lines.append(("writer", "none: the warehouse is free"))
    else:
        lines.append(
            (
                "writer",
                f"{writer.get('command', '?')} (pid {writer.get('pid', '?')} on "
                f"{writer.get('host', '?')}, since {writer.get('since', '?')})"
                f"{_ago(writer.get('since'))}",
            )
        )
        if writer.get("activity"):
            lines.append(("now", f"{writer['activity']}{_ago(writer.get('updated'))}"))
    lines.append(("snapshot", status["snapshot"]))
    if status["snapshot_error"]:
        published = f"unreadable: {status['snapshot_error']}"
    elif status["published_run_id"] is None:
        published = "nothing yet: a successful `tsrate run` publishes its marts here"
    else:
        published = (
            f"run {status['published_run_id']} at {status['published_at']} UTC "
            f"({status['publications']} publication(s) in all)"
        )
    lines.append(("published", published))
    for name, value in lines:
        print(f"{name:<10} {value}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from tsrate.platform.query import format_result, query, truncation_note

    result = query(args.sql, live=args.live, limit=args.limit, timeout=args.timeout or None)
    print(format_result(result, args.format))
    if args.format != "table" and result.truncated:  # stdout stays machine-readable
        print(truncation_note(result), file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import errno
    import os
    from pathlib import Path

    from tsrate.commands.usage import check_output_folder
    from tsrate.config import warehouse_path
    from tsrate.platform.publish import published_path
    from tsrate.robustness.report.render import write_report

    snapshot = Path(args.snapshot) if args.snapshot else published_path(warehouse_path())
    output = report_output(args.output, snapshot)
    check_output_folder(output.parent)  # its folder is made (as --help says): refused first
    if output.is_dir():  # FOLDER/report.html a folder: refused before the charts are written
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(output))
    try:
        result = write_report(snapshot, output)
    except KeyboardInterrupt as exc:  # the stop line says what a stopped report leaves
        exc.add_note(
            f"no report was written: {output} and its charts folder are as they were "
            "(the warehouse is only read)"
        )
        raise
    print(
        f"report of run {result.run_id} written to {result.path} "
        f"({result.n_charts} charts, Vega-Lite specs also in {result.charts_dir})"
    )
    return 0


def report_output(given: str | None, snapshot):  # noqa: ANN001, ANN201 - Paths
    """The file ``tsrate report`` writes: ``--output`` (``given``), else ``TSRATE_REPORT``, else
    ``report.html`` beside the snapshot. A folder (one that exists, or a path ending in a
    separator) gets ``report.html`` inside it, as ``cp FILE FOLDER`` would; a file's folder
    is made when missing."""
    import os
    from pathlib import Path

    from tsrate.robustness.report.data import REPORT_NAME, default_report_path

    output = Path(given) if given else default_report_path(snapshot)
    text = str(given or os.environ.get("TSRATE_REPORT") or "")
    if output.is_dir() or text.endswith(("/", os.sep)):
        return output / REPORT_NAME
    return output


def cmd_docs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tsrate.commands.usage import check_output_folder
    from tsrate.platform import dbt_runner as dbt

    if args.output:  # before dbt, whose own failure here says only "exit 2"
        check_output_folder(Path(args.output))
    site = dbt.docs(target_path=Path(args.output) if args.output else None, on_line=print)
    print(f"open {site / 'static_index.html'} (one offline file) in a browser")
    return 0


def docs_without_warehouse(args: argparse.Namespace, warehouse) -> None:  # noqa: ANN001
    """``tsrate docs``'s refusal when there is no warehouse, which the CLI runs before taking
    the writer lock (so it leaves no lock file): the output folder first, as
    :func:`cmd_docs` checks it, then the missing warehouse."""
    from pathlib import Path

    from tsrate.commands.usage import check_output_folder
    from tsrate.platform.dbt_runner import check_docs_warehouse

    if args.output:
        check_output_folder(Path(args.output))
    check_docs_warehouse(warehouse)


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tsrate.commands.usage import check_output_folder
    from tsrate.config import warehouse_path
    from tsrate.platform.publish import export_parquet, published_path

    check_output_folder(Path(args.destination))  # before the snapshot is read
    snapshot = published_path(warehouse_path())
    if getattr(args, "format", "parquet") == "fev":
        from tsrate.robustness.fev_export import export_fev

        written = export_fev(snapshot, args.destination)
        print(f"wrote {len(written)} fev evaluation summaries of {snapshot} to {args.destination}")
        return 0
    written = export_parquet(snapshot, args.destination)
    print(f"wrote {len(written)} Parquet files of {snapshot} to {args.destination}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from tsrate.platform.serve import ScheduleConfig, build_deployments, schedule_lines, serve

    config = ScheduleConfig.from_vars()
    if args.nightly_rating:
        import dataclasses

        config = dataclasses.replace(config, nightly_rating=True)
    if args.dry_run:
        for line in schedule_lines(build_deployments(config)):
            print(line)
        return 0
    serve(config)
    return 0
