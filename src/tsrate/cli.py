"""The ``tsrate`` command line (its commands, for a user: :data:`DESCRIPTION`).

This module is the entry point: ``build_parser`` (the top level; each command group adds
its own commands and options) and ``main`` (one error line, ``--debug``, the writer lock,
signals). The commands live in :mod:`tsrate.commands`, by group: ``pipeline`` (the commands
that write the warehouse), ``reading`` (the ones that read or serve it) and ``suite``, each
group's options in its ``*_parsers`` module. Each body imports what it needs when it runs,
so ``tsrate --help`` and ``tsrate systems`` start light.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator

from tsrate import TsrateError
from tsrate.commands.pipeline_parsers import add_pipeline_commands
from tsrate.commands.reading_parsers import add_reading_commands
from tsrate.commands.register_parsers import add_register_commands
from tsrate.commands.suite_parsers import add_suite_commands
from tsrate.commands.usage import (
    OneLineParser,
    check_warehouse_setting,
    path_error_line,
    refuse_without_warehouse,
    require_inputs,
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
  tsrate register-llm ID     rate your OpenAI-compatible LLM under its own id
  tsrate withdraw SYSTEM     take a system out of its study's marts (kept)
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

#: The OSError numbers of a full disk or an exhausted quota: the machine's state, not a bug
#: (one line naming it, exit 2; stdout, which may be what is full, is not flushed again).
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)

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
    add_pipeline_commands(sub)  # run, ingest, import, ..., build: they write the warehouse
    add_reading_commands(sub)  # systems, studies, ..., docs: they read or serve it
    add_register_commands(sub)  # register-llm: a language model under its own id
    add_suite_commands(sub)
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
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return (  # a full disk (or `> /dev/full`) is the machine's state, not a bug
            f"out of disk space: {exc.strerror or one_line(exc)} (hint: free space where "
            "tsrate writes (the warehouse's folder, the output file or pipe) and run it again)",
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

                refuse_without_warehouse(args)  # before the lock: it leaves a file behind

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
        # a command that knows what its stop leaves (an import stopped in its build) notes it
        kept = getattr(exc, "__notes__", None) or [
            "nothing half-written is kept (the next run marks an unfinished run interrupted "
            "and reuses its stored forecasts)"
        ]
        print(f"tsrate: stopped by {signame}; {kept[-1]}", file=sys.stderr)
        return 128 + (signal.SIGTERM if signame == "SIGTERM" else signal.SIGINT)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        if debug:
            traceback.print_exc()
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            # stdout may be what is full: the interpreter's last flush must not fail again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
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
