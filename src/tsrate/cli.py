"""The ``tsrate`` command line (its commands, for a user: :data:`DESCRIPTION`).

This module holds the parser (every command and option, in ``build_parser``) and ``main``
(one error line, ``--debug``, signals); the commands' bodies are in :mod:`tsrate.commands`
(``pipeline``: the commands that write the warehouse; ``reading``: the ones that read or
serve it). Each body imports what it needs when it runs, so ``tsrate --help`` and
``tsrate systems`` start light.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator

from tsrate import TsrateError
from tsrate.commands.pipeline import (
    cmd_build,
    cmd_export_inputs,
    cmd_import,
    cmd_ingest,
    cmd_run,
    cmd_show_input,
    cmd_train,
)
from tsrate.commands.reading import (
    cmd_docs,
    cmd_export,
    cmd_query,
    cmd_report,
    cmd_runs,
    cmd_serve,
    cmd_status,
    cmd_studies,
    cmd_systems,
)
from tsrate.commands.usage import (
    OneLineParser,
    check_warehouse_setting,
    path_error_line,
    require_inputs,
)


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more (a usage error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def wait_seconds(text: str) -> float:
    """An argparse type: ``--lock-timeout``'s seconds, 0 (do not wait) or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0:  # a negative wait (or nan) would silently mean "do not wait"
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def _add_study_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("study (defaults: vars in dbt_project.yml)")
    group.add_argument("--tickers", help="comma-separated tickers, e.g. KO,PEP,XOM,CVX")
    group.add_argument("--start", help="first day of the study period (YYYY-MM-DD)")
    group.add_argument("--end", help="last day of the study period (YYYY-MM-DD)")
    group.add_argument("--systems", help="comma-separated system ids (see `tsrate systems`)")
    group.add_argument("--perturbations", help="comma-separated perturbation ids, e.g. P0,P1,P2,P3")
    group.add_argument("--context-length", type=int, help="input window length n")
    group.add_argument("--horizon", type=int, help="forecast horizon d")
    group.add_argument("--stride", type=int, help="days between windows")
    group.add_argument("--phase", type=int, help="first perturbed position (then every n-th)")
    group.add_argument("--seed", type=int, help="random seed")


def _add_companies_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--companies",
        metavar="FILE",
        help="company metadata (CSV/Parquet: ticker,company_name,industry[,biased_offset]) "
        "for tickers outside seeds/companies.csv; a price file's own company_name/industry "
        "columns are read too",
    )


def _add_metadata_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metadata",
        nargs="+",
        action="extend",
        metavar="PATH|K=V",
        help="register the system (not a seed row) with the systems seed's columns: a "
        ".yaml/.json file and/or key=value pairs (display_name, modality, family, purpose, "
        "architecture, is_foundation_model, accepted_perturbations, description, "
        "paper_symbol, base_model); put the predictions FILE before this flag",
    )


class _SuiteParser(OneLineParser):
    """``tsrate suite <name>``: its actions (run, report, ...) are added the first time it
    parses or prints its help, so building the CLI imports no suite module (nor NumPy,
    pandas, DuckDB): every other command, and every error, starts in a fraction of a second."""

    suite_entry = None  # the tsrate.suites.Suite whose actions are not added yet

    def _add_actions(self) -> None:
        entry, self.suite_entry = self.suite_entry, None
        if entry is None:
            return
        from tsrate.suites.publishing import add_report_action

        actions = self.add_subparsers(
            dest="suite_action", metavar="ACTION", required=True, parser_class=OneLineParser
        )
        entry.register(actions)  # run, prompts, ...: each action sets its own func
        add_report_action(actions, entry)  # one report command: reads the published snapshot

    def parse_known_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 - argparse's
        self._add_actions()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_actions()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_actions()
        return super().format_help()


def _add_suite_commands(sub) -> None:
    """``tsrate suite <name> run``: one sub-command per suite registered in tsrate.suites
    (names and summaries from the registry; the suite's module is imported when used)."""
    from tsrate.suites import SUITES

    suite = sub.add_parser(
        "suite", help="run a suite: understanding, reasoning or interpretability"
    )
    names = suite.add_subparsers(
        dest="suite_name", metavar="NAME", required=True, parser_class=_SuiteParser
    )
    for entry in SUITES.values():
        names.add_parser(entry.name, help=entry.summary).suite_entry = entry


def _add_verbose_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,  # `tsrate --verbose run` and `tsrate run --verbose`
        help="show dbt's whole log live (else: a summary; the full log is in <warehouse>/logs)",
    )


def _add_lock_timeout(parser: argparse.ArgumentParser) -> None:
    """``--lock-timeout SECONDS``: how long a writing command waits for the writer lock."""
    parser.add_argument(
        "--lock-timeout",
        type=wait_seconds,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )


#: What ``tsrate --help`` says above the options: every command, for a user (the module's
#: docstring is for developers).
DESCRIPTION = """\
Rate time-series forecasting models for robustness and accuracy.
Guides: README.md and docs/ in the project.

the main job and the warehouse:
  tsrate run                 ingest if needed, forecast, build, publish, report
  tsrate ingest [FILE]       load prices (bundled sample, CSV/Parquet, Yahoo)
  tsrate build               rebuild the marts and publish them (as run does)
  tsrate runs                the recorded runs, newest first
  tsrate status              who writes the warehouse now, its phase and ETA
  tsrate studies             the stored studies, their systems, last update
  tsrate systems             every system, its availability and why
  tsrate docs                build the dbt docs site (models, columns, tests)
rating your own model:
  tsrate export-inputs DIR   write the study's exact inputs and a manifest
  tsrate import-predictions  import predictions made on those inputs, rate them
  tsrate import FILE         rate a model black-box from its predictions
  tsrate train               train (or reuse) the ViT-num-spec checkpoints
  tsrate show-input          the image a ViT-num-spec system got for a window
reading the results (the published snapshot):
  tsrate query SQL           one read-only SQL statement (table, csv or json)
  tsrate report              write the offline HTML rating report
  tsrate export DIR          write the marts and seeds as Parquet (BI tools)
scheduling and other suites:
  tsrate serve               the schedules: nightly refresh, weekly rating
  tsrate suite NAME run      understanding, reasoning or interpretability
  tsrate suite NAME build    build, publish a suite run stored with --no-build
"""

#: Below the options of ``tsrate --help``.
EPILOG = (
    "`tsrate COMMAND --help` lists a command's options. Every failure is one line\n"
    "`tsrate: error: ...`; --debug anywhere (or TSRATE_DEBUG=1) adds the traceback."
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="tsrate",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on a failure, also print the Python traceback (allowed anywhere on the line)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="show dbt's whole log live (else: a summary)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run", help="run the study end to end: ingest if needed, forecast, build, publish, report"
    )
    _add_study_flags(run)
    run.add_argument(
        "--preset",
        choices=["paper"],
        help="a named study under the flags above: paper = the robustness paper's tickers, "
        "period, window, perturbations and systems (tsrate.robustness.presets)",
    )
    run.add_argument(
        "--source",
        default="auto",
        choices=["auto", "skfolio", "yahoo", "none"],
        help="price source; auto ingests the bundled sample when study tickers are missing",
    )
    run.add_argument("--file", help="ingest prices from this CSV/Parquet file first")
    _add_companies_flag(run)
    run.add_argument("--force", action="store_true", help="recompute finished forecast partitions")
    run.add_argument(
        "--workers",
        type=_positive_int,
        help="forecast processes, 1 or more (default: CPU count)",
    )
    run.add_argument(
        "--lock-timeout",
        type=wait_seconds,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )
    run.add_argument("--select", help="dbt selection to build (default: every model)")
    run.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="forecast on a Dask scheduler (tcp://host:8786; local[:N] for a local cluster); "
        "default: env TSRATE_DASK_ADDRESS or the dask_address var, else a local process pool",
    )
    _add_verbose_flag(run)
    run.set_defaults(func=cmd_run)

    ingest = sub.add_parser("ingest", help="load prices into raw.prices")
    ingest.add_argument(
        "path", nargs="?", metavar="FILE", help="CSV or Parquet file with columns ticker,date,close"
    )
    ingest.add_argument("--source", default="skfolio", choices=["skfolio", "yahoo"])
    ingest.add_argument("--tickers", help="comma-separated tickers (default: all of the source)")
    ingest.add_argument("--start", help="first date (Yahoo)")
    ingest.add_argument("--end", help="last date, inclusive (Yahoo)")
    ingest.add_argument(
        "--replace",
        action="store_true",
        help="make the file the whole stored history of its tickers: changed closes are "
        "replaced and stored dates it lacks removed (default: add new dates only, refuse changes)",
    )
    _add_companies_flag(ingest)
    _add_lock_timeout(ingest)
    ingest.set_defaults(func=cmd_ingest, writes_warehouse=True)
    ingest.set_defaults(input_files=("path",))  # checked before the lock is waited for

    imported = sub.add_parser(
        "import", help="rate a model black-box from a file of its predictions (CSV/Parquet)"
    )
    imported.add_argument(
        "path",
        metavar="FILE",
        help="columns ticker,window_end_date,perturbation_id,horizon_step,forecast "
        "[, q0.1 ... q0.9: optional quantiles, all nine or none]",
    )
    imported.add_argument(
        "--system",
        required=True,
        help="its system_id (a row of seeds/systems.csv, or registered with --metadata)",
    )
    _add_metadata_flag(imported)
    imported.add_argument(
        "--no-baselines",
        action="store_true",
        help="do not forecast the study's own systems into the same run",
    )
    imported.add_argument("--no-build", action="store_true", help="store only; build later")
    _add_study_flags(imported)
    _add_lock_timeout(imported)
    imported.set_defaults(func=cmd_import, writes_warehouse=True)
    imported.set_defaults(input_files=("path",))  # checked before the lock is waited for

    predictions = sub.add_parser(
        "import-predictions",
        help="import predictions made on `tsrate export-inputs` files, checked against its manifest",
    )
    predictions.add_argument(
        "path",
        metavar="FILE",
        help="columns ticker,window_end_date,perturbation_id,horizon_step,forecast "
        "[, q0.1 ... q0.9: optional quantiles, all nine or none]",
    )
    predictions.add_argument(
        "--system",
        required=True,
        help="its system_id (a row of seeds/systems.csv, or registered with --metadata)",
    )
    _add_metadata_flag(predictions)
    predictions.add_argument(
        "--manifest", required=True, help="the export folder (or its manifest.json)"
    )
    predictions.add_argument(
        "--no-baselines",
        action="store_true",
        help="do not forecast the study's own systems into the same run",
    )
    predictions.add_argument("--no-build", action="store_true", help="store only; build later")
    _add_lock_timeout(predictions)
    predictions.set_defaults(func=cmd_import, writes_warehouse=True)
    predictions.set_defaults(input_files=("path",))  # checked before the lock is waited for

    export_inputs = sub.add_parser(
        "export-inputs",
        help="write the study's exact model inputs (Parquet, optional PNGs) and a manifest",
    )
    export_inputs.add_argument("folder", metavar="DIR", help="a new (or empty) folder to write")
    export_inputs.add_argument(
        "--images",
        type=int,
        default=0,
        metavar="N",
        help="also write line-plot PNGs of the first N windows of each ticker x perturbation",
    )
    export_inputs.add_argument(
        "--study",
        help="a stored study (name or id, see `tsrate studies`); default without study "
        "flags: the study of the newest run",
    )
    _add_study_flags(export_inputs)
    export_inputs.set_defaults(func=cmd_export_inputs)

    train = sub.add_parser(
        "train", help="train (or reuse) the ViT-num-spec checkpoints and register them"
    )
    train.add_argument(
        "--system",
        default="all",
        choices=["vit_num_spec_precovid", "vit_num_spec_covid", "all"],
        help="variant to train (default: all)",
    )
    train.add_argument("--force", action="store_true", help="retrain even if a checkpoint exists")
    train.add_argument(
        "--lock-timeout",
        type=wait_seconds,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )
    _add_study_flags(train)
    train.set_defaults(func=cmd_train)  # the flow takes the writer lock to register

    show_input = sub.add_parser(
        "show-input",
        help="write the exact image a ViT-num-spec system received for one window (PNG)",
    )
    show_input.add_argument("--system", required=True, help="e.g. vit_num_spec_covid")
    show_input.add_argument("--ticker", required=True, help="a study ticker, e.g. MRK")
    show_input.add_argument("--date", required=True, help="the window's end date (YYYY-MM-DD)")
    show_input.add_argument("--perturbation", required=True, help="P0, P1, P2, P4, P5 or P6")
    show_input.add_argument(
        "--output", help="PNG to write (default: SYSTEM-TICKER-DATE-PERTURBATION.png here)"
    )
    _add_study_flags(show_input)
    show_input.set_defaults(func=cmd_show_input)

    build = sub.add_parser(
        "build",
        help="rebuild the dbt marts and publish them (the snapshot, Parquet and report that "
        "readers and BI tools see), as tsrate run does",
    )
    build.add_argument(
        "--run-id", help="describe this run's own systems only (the single-run view)"
    )
    build.add_argument(
        "--no-publish",
        action="store_true",
        help="rebuild the live marts only (tsrate query --live); the published snapshot, "
        "Parquet and report stay as they are",
    )
    build.add_argument(
        "--study",
        help="study to describe (name or id, see `tsrate studies`; default: the study of "
        "the newest run): every system with complete forecasts for it",
    )
    _add_verbose_flag(build)
    _add_lock_timeout(build)
    build.set_defaults(func=cmd_build, writes_warehouse=True)

    systems = sub.add_parser("systems", help="list systems and their availability")
    systems.add_argument(
        "--show-prompt",
        metavar="SYSTEM",
        help="print a language-model system's prompt, rendered for a sample window",
    )
    systems.set_defaults(func=cmd_systems)
    studies = sub.add_parser("studies", help="list studies with their systems and last update")
    studies.set_defaults(func=cmd_studies)  # a read (the shared side of the lock)
    runs = sub.add_parser("runs", help="list recorded runs")
    runs.add_argument("--limit", type=int, default=1000, help="rows to print (default 1000)")
    runs.set_defaults(func=cmd_runs)
    status = sub.add_parser(
        "status",
        help="who writes the warehouse now and what it is doing (phase, progress, ETA), and "
        "the snapshot's newest publication; never waits for or blocks a run",
    )
    status.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text (default) or JSON (for monitors and schedulers: writer is null when free)",
    )
    status.set_defaults(func=cmd_status)

    query = sub.add_parser(
        "query",
        help="run one read-only SQL statement against the published snapshot (marts, seeds)",
    )
    query.add_argument(
        "sql", metavar="SQL", help="one select / with / from / values / describe statement"
    )
    query.add_argument(
        "--live",
        action="store_true",
        help="query the live warehouse (raw, staging, ...) instead; refused while a run writes",
    )
    query.add_argument(
        "--limit", type=int, default=1000, help="rows to print at most (default 1000)"
    )
    query.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds before the query is stopped (default 60; 0: no limit)",
    )
    query.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="output: an aligned text table (NULL empty; default), CSV (NULL empty) or JSON "
        "(an array of objects, NULL as null); csv/json print the row-limit note on stderr",
    )
    query.set_defaults(func=cmd_query)

    export = sub.add_parser(
        "export", help="write the published marts and seeds as Parquet (BI tools), or fev's CSVs"
    )
    export.add_argument(
        "destination", metavar="DIR", help="folder to write (replaced if an earlier export)"
    )
    export.add_argument(
        "--format",
        choices=["parquet", "fev"],
        default="parquet",
        help="parquet: every mart and seed (default); fev: fev evaluation summaries, one CSV "
        "per error metric, that fev.leaderboard() reads",
    )
    export.set_defaults(func=cmd_export)

    serve = sub.add_parser(
        "serve", help="serve the scheduled deployments (nightly refresh, weekly full rating)"
    )
    serve.add_argument(
        "--dry-run", action="store_true", help="print the deployments and schedules, serve nothing"
    )
    serve.add_argument(
        "--nightly-rating",
        action="store_true",
        help="the nightly run rates too (build, publish, report); default: the var nightly_rating",
    )
    serve.set_defaults(func=cmd_serve)

    report = sub.add_parser(
        "report", help="write the offline HTML rating report from the published snapshot"
    )
    report.add_argument(
        "--snapshot", help="published snapshot to read (default: warehouse/published/tsrate.duckdb)"
    )
    report.add_argument(
        "--output",
        help="HTML file to write, its folder created (default: report.html by the snapshot)",
    )
    report.set_defaults(func=cmd_report)

    docs = sub.add_parser("docs", help="build the dbt docs site from the live warehouse")
    docs.add_argument("--output", help="folder for the site (default: warehouse/docs)")
    _add_lock_timeout(docs)
    # dbt opens the live file to read its catalog: as a writer would, so that a build
    # starting meanwhile is refused at once instead of failing half-way on DuckDB's lock
    docs.set_defaults(func=cmd_docs, writes_warehouse=True)
    _add_suite_commands(sub)
    return parser


def one_line(message: object) -> str:
    """``message`` on one line: its lines joined by '; ' (list bullets dropped)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    lines = [line[2:] if line.startswith("- ") else line for line in lines]
    if not lines:
        return ""
    head, rest = lines[0], lines[1:]
    if rest and head.endswith(":"):
        return f"{head} {'; '.join(rest)}"
    return "; ".join(lines)


def _error_line(exc: BaseException) -> tuple[str, int]:
    """The ``tsrate: error: ...`` line for a failure, and the exit status."""
    import duckdb

    hint = getattr(exc, "hint", None)
    if getattr(exc, "problems", None):  # the study check: one line, or one line a problem
        return f"{exc}{f' (hint: {hint})' if hint else ''}", 2
    if isinstance(exc, TsrateError):
        return f"{one_line(exc)}{f' (hint: {hint})' if hint else ''}", 2
    if isinstance(exc, duckdb.Error):
        return (
            f"DuckDB: {one_line(exc).split('; LINE ')[0]} (hint: is the file a DuckDB database "
            "written by this DuckDB version or an older one, and not open for writing elsewhere? "
            "--debug shows the traceback)",
            2,
        )
    if isinstance(exc, OSError) and exc.filename is not None:  # a path the OS refused
        return path_error_line(exc), 2
    detail = one_line(exc) or "no message"
    return (
        f"unexpected {type(exc).__name__}: {detail} (hint: rerun with --debug to see the "
        "traceback, and report it)",
        1,
    )


@contextlib.contextmanager
def _quiet_tracebacks(debug: bool) -> Iterator[None]:
    """Without ``--debug``, log records carry no traceback (Prefect logs every task and flow
    failure with one): the exception's type and message are appended to the line instead."""
    if debug:
        yield
        return
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs) -> logging.LogRecord:  # noqa: ANN002, ANN003
        record = previous(*args, **kwargs)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            try:
                text = record.getMessage()
            except Exception:  # noqa: BLE001 - a malformed log call keeps its raw message
                text = str(record.msg)
            summary = f"{type(exc).__name__}: {one_line(exc)}"
            if type(exc).__name__ not in text and one_line(exc) not in one_line(text):
                text = f"{text} ({summary})"
            record.msg, record.args = one_line(text), None
            record.exc_info, record.exc_text = None, None
        return record

    logging.setLogRecordFactory(factory)
    try:
        yield
    finally:
        logging.setLogRecordFactory(previous)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI. Every failure ends in one line ``tsrate: error: ...`` on stderr (exit 2 for
    an error the user can act on, 1 for an unexpected one); ``--debug`` (anywhere on the
    command line, or TSRATE_DEBUG=1) also prints the traceback."""
    # Offline by design: no usage pings from Prefect's local server or dbt.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("TSRATE_DEBUG", "") not in ("", "0")
    argv = [arg for arg in argv if arg != "--debug"]
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if getattr(args, "verbose", False):
        os.environ["TSRATE_VERBOSE"] = "1"  # dbt's whole log live (tsrate.platform.dbt_runner)
    _stop_on_sigterm()
    try:
        with _quiet_tracebacks(debug):
            check_warehouse_setting()
            require_inputs(args)
            if getattr(args, "writes_warehouse", False):  # `run` takes the lock itself
                from tsrate.config import warehouse_path
                from tsrate.platform.locking import writer_lock

                with writer_lock(warehouse_path(), getattr(args, "lock_timeout", 0.0) or 0.0):
                    return args.func(args)
            return args.func(args)
    except BrokenPipeError:
        # the reader went away (`tsrate query ... | head`): stop quietly, as Unix tools do;
        # stdout goes to /dev/null so the interpreter's last flush cannot complain again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as exc:
        signame = exc.args[0] if exc.args else "SIGINT"
        print(
            f"tsrate: stopped by {signame}; nothing half-written is kept (the next run marks "
            "an unfinished run interrupted and reuses its stored forecasts)",
            file=sys.stderr,
        )
        return 128 + (signal.SIGTERM if signame == "SIGTERM" else signal.SIGINT)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        if debug:
            traceback.print_exc()
        line, status = _error_line(exc)
        print(f"tsrate: error: {line}", file=sys.stderr)
        return status


def _stop_on_sigterm() -> None:
    """SIGTERM (schedulers, containers, `timeout`) stops a command like Ctrl-C: the work in
    progress unwinds (open transactions roll back, dbt and forecast workers are killed)."""

    def stop(signum: int, frame: object) -> None:  # noqa: ARG001 - signal handler signature
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, stop)


def entry() -> None:
    """The ``tsrate`` command: :func:`main`, then a quick exit. What a normal exit does
    first still runs (threads joined, atexit handlers: logging flushed, Prefect's
    services stopped; stdout and stderr flushed); only the interpreter's teardown of
    every imported module is skipped, about 0.5 s after a command that imported Prefect,
    pandas and DuckDB (measured: 0.59 s on a 2-core box). In-process callers (tests)
    call :func:`main` and get its exit status."""
    code = main()  # argparse's SystemExit (usage errors, --help) leaves the normal way
    threading_shutdown = getattr(threading, "_shutdown", None)
    if threading_shutdown is not None:
        threading_shutdown()  # what the interpreter does first: join non-daemon threads
    atexit._run_exitfuncs()  # logging.shutdown among them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader went away, or closed
            pass
    os._exit(code if isinstance(code, int) else int(code is not None))


if __name__ == "__main__":
    entry()
