"""The bodies of the commands that write the warehouse: ``run``, ``ingest``, ``import`` /
``import-predictions``, ``withdraw``, ``export-inputs``, ``train``, ``show-input``, ``build``.

Their options are defined in :mod:`tsrate.commands.pipeline_parsers`; each body imports what it needs
when it runs (a command's start stays light).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable

from tsrate import TsrateError
from tsrate.commands import study_overrides

#: A command's body: the parsed arguments in, the exit status out.
Command = Callable[[argparse.Namespace], int]


def cmd_run(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform.locking import writer_lock
    from tsrate.platform.progress import log as run_log
    from tsrate.platform.published_paths import check_parquet_link, published_path
    from tsrate.robustness.study import require_valid_study

    rate = not getattr(args, "no_rate", False)
    if rate:  # pre-flight: what would stop the publish at the end, before anything is written
        check_parquet_link(published_path(warehouse_path()))
    source, path = args.source, None
    if args.file:
        source, path = "file", args.file
    overrides = study_overrides(args)
    if args.preset:  # a named study (tsrate.robustness.presets) under the flags; prices first
        from tsrate.robustness.presets import resolve_preset

        overrides = resolve_preset(
            args.preset, overrides, source, path, warehouse_path(), run_log.info
        )
    # every problem of the study, in about a second, before Prefect or any model is imported;
    # its warnings are lines of the run's log (stderr, time-stamped) like the rest of it
    companies = getattr(args, "companies", None)
    study = require_valid_study(
        overrides, source, path, warn=_log_warning, companies_path=companies
    )
    # then the writer lock, before Prefect and the flows are even imported: a busy
    # warehouse is reported at once (the flows take the same lock again, re-entrantly); a
    # wait for it is a time-stamped line of the run's log, like its progress lines
    with writer_lock(warehouse_path(), args.lock_timeout, run_log.info):
        _store_companies(path, companies)
        from tsrate.platform import dbt_runner as dbt

        # dbt's child imports dbt and parses (no database access) while this process
        # imports Prefect and the flows: on a rerun the forecasts take a fraction of a
        # second, so this is most of what stands before the build's first model
        if rate:
            dbt.prepare_build(warehouse_path(), args.select)
        try:
            from tsrate.platform.entrypoints import PIPELINE_FLOW, load_entrypoint
            from tsrate.platform.orchestration import run_flow
            from tsrate.robustness.forecast.distributed import resolve_dask_address
            from tsrate.robustness.forecast.workers import start_early

            # likewise the forecast workers' fork server imports torch, statsmodels and
            # the rest once, when this run will compute its forecasts here
            if args.workers != 1 and not resolve_dask_address(args.dask):
                start_early(study.systems, warehouse_path(), args.force)

            # orchestrated when a Prefect API is configured (or TSRATE_PREFECT=always, or
            # the Dask path), in this process as a plain function otherwise
            run_id = run_flow(
                load_entrypoint(PIPELINE_FLOW),
                needs_prefect=bool(resolve_dask_address(args.dask)),
                study=study,  # checked and typed once, here: the flows take it as it is
                source=source,
                path=path,
                force=args.force,
                workers=args.workers,
                lock_timeout=args.lock_timeout,
                rate=rate,
                select=args.select,
                dask_address=args.dask,
            )
        finally:
            dbt.discard_prepared()  # unused (a failure before the build): stop it now
    if rate:
        print(f'run {run_id} succeeded. Try: tsrate query "select * from marts.accuracy_scores"')
        _print_study_change(warehouse_path())
    else:
        print(
            f"run {run_id} forecasted (--no-rate: nothing rated or published); "
            "`tsrate build` rates it, or the next `tsrate run` reuses its forecasts"
        )
    _print_run_problems(run_id)
    return 0


def _log_warning(line: str) -> None:
    """A study check's ``warning: ...`` line as a WARNING of the run's log."""
    from tsrate.platform.progress import log as run_log

    run_log.warning(line.removeprefix("warning: "))


def _store_companies(price_file: str | None, companies: str | None) -> None:
    """Company metadata of a price file's columns and of --companies, stored for the study."""
    if not (price_file or companies):
        return
    from tsrate.config import warehouse_path
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.companies import store_file_companies

    with connect(warehouse_path()) as con:
        for line in store_file_companies(con, price_file, companies):
            print(line)


def _print_run_problems(run_id: str) -> None:
    """Skipped systems, windows without a model forecast (also logged by the forecast flow)
    and systems rated from forecasts made on other prices (known once the run is built)."""
    import duckdb

    from tsrate.config import warehouse_path
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.forecast.summary import run_problems, source_change_line

    try:
        with connect(warehouse_path(), read_only=True) as con:
            problems = run_problems(con, run_id)
            other_prices = source_change_line(con, run_id)
    except (TsrateError, duckdb.Error) as exc:
        print(f"(could not read what run {run_id} skipped: {exc}; see the run's log)")
        return
    for line in problems:
        print(f"warning: {line}")
    if problems:
        print("details: staging.stg_run_skipped_systems, marts.forecast_failures_summary")
    if other_prices:
        print(f"warning: {other_prices}")


def cmd_ingest(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform.warehouse import connect, describe_price_changes, store_prices
    from tsrate.robustness.sources import load_skfolio_sp500, load_yfinance, read_price_file

    tickers = [t.strip().upper() for t in args.tickers.split(",")] if args.tickers else None
    if args.path:
        prices, label = read_price_file(args.path), args.path
    elif args.source == "yahoo":
        if not (tickers and args.start and args.end):
            raise TsrateError("--source yahoo needs --tickers, --start and --end")
        prices, label = load_yfinance(tickers, args.start, args.end), "yahoo"
    else:
        prices, label = load_skfolio_sp500(tickers), "skfolio"
    warehouse = warehouse_path()
    with connect(warehouse) as con:
        changes = store_prices(con, prices, str(label), replace=args.replace)
    verb = "replaced the stored history with" if args.replace else "stored"
    print(f"{verb} {describe_price_changes(changes, args.replace)} from {label} in {warehouse}")
    _store_companies(args.path, args.companies)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tsrate.config import Study, warehouse_path
    from tsrate.platform import dbt_runner as dbt
    from tsrate.platform.publish import publish
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.blackbox.predictions import import_forecasts, read_metadata
    from tsrate.robustness.forecast.execute import finish_run

    if not args.no_build:  # pre-flight: what would stop the publish at the end
        from tsrate.platform.published_paths import check_publish

        check_publish(warehouse_path())
    manifest = getattr(args, "manifest", None)
    metadata = read_metadata(args.metadata) if args.metadata else None
    study = None if manifest else Study.from_vars(study_overrides(args))
    warehouse = warehouse_path()
    with connect(warehouse) as con:
        if manifest:  # import-predictions: the exported study, checked
            from tsrate.robustness.blackbox.export import (
                manifest_path,
                read_manifest,
                study_from_manifest,
            )

            path = manifest_path(manifest)
            study = study_from_manifest(con, read_manifest(path), path)
        # a study this warehouse never ran, from the manifest or the study flags: refused
        # unless --switch-study, which says first what the import computes and publishes
        from tsrate.platform.published_paths import published_path
        from tsrate.robustness.blackbox.study_switch import check_study_switch

        switching = check_study_switch(
            con,
            study,
            published_path(warehouse),
            switch=args.switch_study,
            with_baselines=not args.no_baselines,
            build=not args.no_build,
            origin="manifest" if manifest else "flags",
        )
        if switching:
            print(switching, flush=True)
        summary = import_forecasts(
            con,
            args.path,
            args.system,
            study,
            baselines=not args.no_baselines,
            progress=lambda message: print(message, flush=True),
            metadata=metadata,
        )
    study_id = summary.study_id
    print(
        f"imported {summary.forecast_rows} forecasts of {args.system!r} as run {summary.run_id} "
        f"of study {study_id} ({summary.partitions} partitions, {summary.reused} already stored)"
    )
    if args.no_build:
        print(
            "stored only: the same command without --no-build reuses these forecasts and rates "
            "and publishes them (tsrate query, the report), as a build of the study does"
        )
        print(f"the marts are stale until you run: tsrate build --study {study_id}")
        return 0
    # a failed build or publish is recorded on the run, as `tsrate build` records it: left
    # `forecasted`, the next default build would take it again and fail the same way
    # a stop (Ctrl-C, SIGTERM) in the build or the publish leaves the import whole but not
    # rated: the stop line says so, and how to finish or undo it, instead of the generic one
    stopped = (
        f"the import is stored, not rated: run {summary.run_id} of study {study_id} "
        f"(tsrate build --study {study_id} rates it; tsrate withdraw {args.system} --study "
        f"{study_id} takes it out)"
    )
    try:
        dbt.build(run_id=summary.run_id, warehouse=warehouse, on_line=print)
    except dbt.DbtError as exc:
        with connect(warehouse) as con:
            finish_run(con, summary.run_id, "build_failed", str(exc)[-2000:])
        raise
    except KeyboardInterrupt as exc:
        exc.add_note(stopped)
        raise
    try:
        result = publish(warehouse, summary.run_id)
    except KeyboardInterrupt as exc:  # the run stays `forecasted`: a build rates it
        exc.add_note(stopped)
        raise
    except Exception as exc:
        with connect(warehouse) as con:
            finish_run(con, summary.run_id, "publish_failed", str(exc)[-2000:])
        raise
    with connect(warehouse) as con:
        finish_run(con, summary.run_id, "succeeded")
    from tsrate.robustness.report.render import write_report

    # the report reads the snapshot just published: left alone it would show the previous run
    report = write_report(result.path)
    print(f"run {summary.run_id} rated and published to {result.path}; report: {report.path}")
    _print_study_change(warehouse)
    return 0


def check_withdraw(args: argparse.Namespace, warehouse) -> None:  # noqa: ANN001 - a Path
    """What refuses ``tsrate withdraw`` before any work: no warehouse (the CLI runs this
    before the writer lock where there is none, so no lock file is left behind), and a
    publish that would fail at the end of its build."""
    if not warehouse.exists():
        error = TsrateError(f"no warehouse at {warehouse}: no study to withdraw a system from")
        error.hint = "`tsrate run` or `tsrate import` stores a study first; see `tsrate studies`"
        raise error
    if not args.no_build:
        from tsrate.platform.published_paths import check_parquet_link, published_path

        check_parquet_link(published_path(warehouse))  # the publish after the build


def cmd_withdraw(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform.published_paths import published_path
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.withdrawals import bring_back_ways, published_rates, withdraw_system

    warehouse = warehouse_path()
    check_withdraw(args, warehouse)
    with connect(warehouse) as con:  # under the writer lock (main)
        # a run stopped after its publication counts as the build below will count it
        published = _published_if_stopped(con, warehouse)
        done = withdraw_system(con, args.system, args.study, args.reason, published)
        ways = bring_back_ways(con, args.system)
    study = f"study {done.study_name} ({done.study_id}, {done.origin})"
    when = f"{done.withdrawn_at:%Y-%m-%d %H:%M:%S}"
    if not done.recorded:
        print(f"{args.system!r} is already withdrawn from {study} since {when}: nothing to do")
        return 0
    print(
        f"withdrew {args.system!r} from {study} at {when}: the study's marts leave out its "
        "forecasts from runs started before now; they stay stored (raw.forecasts)"
    )
    print(
        f"a later run or import that forecasts {args.system!r} brings it back ({ways}): "
        "withdraw it again then"
    )
    if args.no_build:
        if published_rates(published_path(warehouse), done.study_id, args.system):
            print(
                "the marts and report still show it until you run: "
                f"tsrate build --study {done.study_id}"
            )
        else:
            print(
                "the published marts and report do not rate it; the study's next build "
                f"leaves it out: tsrate build --study {done.study_id}"
            )
        return 0
    return cmd_build(argparse.Namespace(run_id=None, study=done.study_id, no_publish=False))


def _reads_live(command: str) -> Callable[[Command], Command]:
    """Run ``tsrate COMMAND``'s body under the shared side of the writer lock: while a run
    writes the live warehouse it is refused at once (not with DuckDB's lock error), and a
    writer starting meanwhile stops before it opens the file (not half-way)."""

    def decorate(body: Command) -> Command:
        @functools.wraps(body)
        def reading(args: argparse.Namespace) -> int:
            from tsrate.config import warehouse_path
            from tsrate.platform.query import live_reader

            with live_reader(
                warehouse_path(),
                reader=f"`tsrate {command}` (it reads the live warehouse)",
                advice="Rerun it when the writer finishes",
            ):
                return body(args)

        return reading

    return decorate


@_reads_live("export-inputs")
def cmd_export_inputs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tsrate.commands.usage import check_output_folder
    from tsrate.config import Study, warehouse_path
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.blackbox.export import check_export_folder, export_inputs

    check_output_folder(Path(args.folder))  # before the warehouse is read, and before any output
    check_export_folder(args.folder)
    overrides = study_overrides(args)
    flags = any(value is not None for value in overrides.values())
    if args.study and flags:
        raise TsrateError("--study names a stored study: give it or the study flags, not both")
    with connect(warehouse_path(), read_only=True) as con:
        study = study_id = None
        if not flags:  # the current study: --study NAME, else the newest run's
            from tsrate.robustness.studies import current_study, current_study_id

            study = current_study(con, args.study)
            if study is not None:
                study_id = current_study_id(con, args.study)
                origin = f"--study {args.study}" if args.study else "the newest run"
                named = f" (id {study_id})" if study_id else ""
                print(f"exporting the study of {origin}{named}")
        study = study or Study.from_vars(overrides)
        summary = export_inputs(con, study, args.folder, args.images, study_id)
    print(
        f"wrote {summary.input_rows} input values of {summary.windows} windows "
        f"x {len(study.perturbations)} perturbations ({summary.images} images) to "
        f"{summary.folder}; see {summary.folder}/manifest.json"
    )
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from tsrate.platform.entrypoints import TRAIN_VIT_FLOW, load_entrypoint
    from tsrate.platform.orchestration import run_flow

    paths = run_flow(
        load_entrypoint(TRAIN_VIT_FLOW),
        system=args.system,
        force=args.force,
        overrides=study_overrides(args),
        lock_timeout=args.lock_timeout,
    )
    for path in paths:
        print(f"checkpoint {path} (+ .json metadata), registered in raw.model_checkpoints")
    return 0


@_reads_live("show-input")
def cmd_show_input(args: argparse.Namespace) -> int:
    from tsrate.config import Study, load_companies, warehouse_path
    from tsrate.inputs.images import write_png
    from tsrate.platform.warehouse import connect
    from tsrate.systems.vit_num_spec import show_input

    study = Study.from_vars(study_overrides(args))
    with connect(warehouse_path(), read_only=True) as con:
        image = show_input(
            con, study, load_companies(), args.system, args.ticker, args.date, args.perturbation
        )
    output = args.output or (
        f"{args.system}-{args.ticker.upper()}-{args.date}-{args.perturbation}.png"
    )
    print(f"wrote {write_png(output, image)} ({image.shape[1]} x {image.shape[0]} RGB)")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform import dbt_runner as dbt

    warehouse = warehouse_path()
    check_build(args, warehouse)
    # dbt's child imports dbt and parses (no database access) while the run is chosen
    dbt.prepare_build(warehouse)
    try:
        return _build_run(args, warehouse)
    finally:
        dbt.discard_prepared()  # unused: no run could build


def check_build(args: argparse.Namespace, warehouse) -> None:  # noqa: ANN001 - a Path
    """What refuses ``tsrate build`` before any work, each in one line: a publish that would
    fail at the end, no warehouse, a named run without complete forecasts, a study whose
    every system is withdrawn (its marts would be empty; judged again under the lock after
    :func:`check_build_before_lock`, so a withdrawal landing while the build waited for the
    lock counts). Where there is no warehouse the CLI runs it before taking the writer lock
    (``without_warehouse``), so the refusal leaves no lock file behind."""
    from tsrate.robustness.build_run import run_to_build

    if not getattr(args, "no_publish", False):  # pre-flight: the publish at the end
        from tsrate.platform.published_paths import check_parquet_link, published_path

        check_parquet_link(published_path(warehouse))
    if not warehouse.exists() or args.run_id:
        # no warehouse, or a named run without complete forecasts: refuse in one line
        run_to_build(warehouse, args.run_id)
        return
    from tsrate.platform.warehouse import connect

    with connect(warehouse, read_only=True) as con:  # a study whose systems are all withdrawn
        _refuse_all_withdrawn(con, args, warehouse)


def check_build_before_lock(args: argparse.Namespace) -> None:
    """``tsrate build``'s refusal of a study whose every system is withdrawn, made before
    the writer lock is taken (it writes nothing, and a refused call leaves nothing in the
    lock file): on the live file opened read-only, as a live reader where a lock file is
    there (a writer starting meanwhile waits for it) and without making one where none is.
    While another process writes the file it cannot be read: the judgement is left to
    :func:`check_build`, which makes it again under the lock in any case."""
    from tsrate.config import warehouse_path

    warehouse = warehouse_path()
    if args.run_id or not warehouse.exists():
        return  # check_build's: a named run builds its own systems
    with _live_file_unless_written(warehouse) as con:
        if con is not None:
            _refuse_all_withdrawn(con, args, warehouse)


@contextlib.contextmanager
def _live_file_unless_written(warehouse):  # noqa: ANN001, ANN202 - a Path; a connection
    """The live file opened read-only, or None while another process writes it."""
    from tsrate.platform.locking import lock_path
    from tsrate.platform.query import live_reader
    from tsrate.platform.warehouse import connect

    with contextlib.ExitStack() as stack:
        try:
            if lock_path(warehouse).exists():  # else none is made for a read
                stack.enter_context(live_reader(warehouse))
            con = stack.enter_context(connect(warehouse, read_only=True))
        except TsrateError:  # held by a writer (the lock, or DuckDB's own on the file)
            con = None
        yield con


def _refuse_all_withdrawn(con, args: argparse.Namespace, warehouse) -> None:  # noqa: ANN001
    """:func:`tsrate.robustness.withdrawals.check_build_rates` on the run the build will
    build: a run stopped after its publication, which the build marks succeeded first, is
    judged so (the snapshot is read only when a run was left publishing)."""
    from tsrate.robustness.withdrawals import check_build_rates

    check_build_rates(con, getattr(args, "study", None), _published_if_stopped(con, warehouse))


def _published_if_stopped(con, warehouse) -> set[str]:  # noqa: ANN001 - a connection, a Path
    """The snapshot's run ids where some run was left ``publishing`` (the snapshot is read
    only then), else none: what a check made before the next build's reconciliation needs to
    judge the run that build will build (:func:`tsrate.platform.warehouse.buildable_run`)."""
    import duckdb

    from tsrate.platform.publish import published_path, published_run_ids

    try:
        left = con.execute("select 1 from raw.runs where status = 'publishing' limit 1")
    except duckdb.CatalogException:  # no run yet
        return set()
    return published_run_ids(published_path(warehouse)) if left.fetchone() else set()


def _build_run(args: argparse.Namespace, warehouse) -> int:  # noqa: ANN001 - a Path
    from tsrate.platform import dbt_runner as dbt
    from tsrate.platform.publish import published_path, published_run_ids
    from tsrate.platform.warehouse import (
        STOPPED_AFTER_PUBLICATION,
        buildable_run,
        close_interrupted_runs,
        connect,
        mark_published_runs_succeeded,
    )
    from tsrate.robustness.build_run import run_to_build
    from tsrate.robustness.forecast.execute import finish_run
    from tsrate.robustness.studies import ensure_studies, newest_complete_run, resolve_study

    published = published_run_ids(published_path(warehouse))
    with connect(warehouse) as con:  # under the writer lock (main)
        for run_id in mark_published_runs_succeeded(con, published):
            print(STOPPED_AFTER_PUBLICATION.format(run_id))
        for run_id, state in close_interrupted_runs(con):
            print(f"run {run_id} was stopped while {state}: marked interrupted")
        failure = None
        ensure_studies(con)
        study_id = resolve_study(con, getattr(args, "study", None))
        if args.run_id and study_id:
            raise TsrateError(
                "--run-id builds one run's own systems, --study a whole study: give one"
            )
        if args.run_id:
            run_id = args.run_id
        elif study_id:
            run_id, notes = newest_complete_run(con, study_id), []
        else:
            try:
                run_id, notes = buildable_run(con)
            except TsrateError as exc:
                failure, notes = str(exc), []
            for note in notes:
                print(f"skipping {note}")
    if failure is not None:
        # no run can build: say so with the study check's words, and why the newest failed
        try:
            run_to_build(warehouse)
        except TsrateError as exc:
            why = "" if failure.startswith("no run in raw.runs") else f"; {failure}"
            raise TsrateError(f"{exc}{why}") from None
        raise TsrateError(failure)
    scope = "run" if args.run_id else "study"
    print(f"building the marts of run {run_id}" + (" only" if args.run_id else " and its study"))
    try:
        dbt.build(run_id=run_id, on_line=print, study_id=study_id, scope=scope)
    except dbt.DbtError as exc:
        with connect(warehouse) as con:
            finish_run(con, run_id, "build_failed", str(exc)[-2000:])
        raise
    if getattr(args, "no_publish", False):
        print(
            "built the live marts (tsrate query --live); not published (--no-publish): the "
            "snapshot that tsrate query, tsrate report and BI tools read is unchanged"
        )
        return 0
    _publish_build(warehouse, run_id)
    return 0


def _publish_build(warehouse, run_id: str) -> None:  # noqa: ANN001 - a Path
    """Publish what the build left in the live marts, as ``tsrate run`` does after its build:
    the snapshot and Parquet that readers and BI tools see, then the report beside them; the
    run is ``succeeded`` (a nightly run left ``forecasted`` is rated now), or
    ``publish_failed`` when the publish fails (the previous snapshot stays)."""
    from tsrate.platform.progress import phase
    from tsrate.platform.publish import publish
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.forecast.execute import finish_run

    try:
        with phase("publish", print):
            result = publish(warehouse, run_id)
    except Exception as exc:  # stopped (Ctrl-C, SIGTERM): the run stays as it was
        with connect(warehouse) as con:
            finish_run(con, run_id, "publish_failed", str(exc)[-2000:])
        raise
    with connect(warehouse) as con:
        finish_run(con, run_id, "succeeded")
    from tsrate.robustness.report.render import write_report

    # the report reads the snapshot just published: left alone it would show the previous one
    with phase("report", print):
        report = write_report(result.path)
    print(
        f"run {run_id} built and published to {result.path} (tsrate query, BI tools: Parquet "
        f"{result.parquet_path}); report: {report.path}"
    )
    _print_study_change(warehouse)


def _print_study_change(warehouse) -> None:  # noqa: ANN001 - a Path
    """After a publication: one line when the snapshot now holds another study than before
    (:func:`tsrate.platform.publish.study_change`), so a run of a second study does not
    replace the first one's ratings silently."""
    from tsrate.platform.publish import published_path, study_change

    line = study_change(published_path(warehouse))
    if line:
        print(line)
