"""The end of every suite run, and the one report command.

:func:`finish_suite` builds the suite's dbt models (``tag:<suite>``) for one suite run,
records the run ``succeeded`` (or ``build_failed``, and re-raises), publishes the live marts
into the published snapshot with :func:`tsrate.platform.publish.publish` (the same atomic rename as
the core; ``published_runs`` gets a row whose ``run_id`` is the suite run id and whose
``study`` is null) and writes the suite's report from that snapshot.

The snapshot holds the marts of a suite only once the suite has a ``succeeded`` run
(:func:`tsrate.suites.unbuilt_suite_marts`): a warehouse whose suite never ran publishes no empty
``<prefix>_*`` marts. Every publish (core or suite) copies the live marts, so the core's
publish keeps the latest suite results and a suite's publish keeps the core's.

``tsrate suite <name> report`` (:func:`add_report_action`) rewrites a suite's report from
the snapshot: the suite's ``report`` module exposes ``write_report(snapshot, output)``.

``tsrate suite <name> build [SUITE_RUN_ID]``
(:func:`tsrate.suites.commandline.add_build_action`) runs
:func:`finish_suite` for a stored suite run (default: the newest one ready to build), the
end a ``--no-build`` run left out; such a run's last line says so (:func:`run_message`).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from tsrate import TsrateError
from tsrate.suites import Suite, get_suite


def report_path(warehouse: Path, suite: str) -> Path:
    """``<warehouse folder>/reports/<suite>.html``, the default report of a suite."""
    return Path(warehouse).parent / "reports" / f"{suite}.html"


def write_suite_report(suite: Suite | str, snapshot: Path, output: Path) -> Path:
    """Write ``suite``'s HTML report from the published ``snapshot`` into ``output``."""
    suite = get_suite(suite) if isinstance(suite, str) else suite
    snapshot = Path(snapshot)
    if not snapshot.exists():
        raise TsrateError(
            f"no published snapshot at {snapshot}: finish a `tsrate suite {suite.name} run` first"
        )
    check_published(snapshot, suite)
    module = importlib.import_module(suite.report_module)
    return module.write_report(snapshot, Path(output))


def check_published(published: Path, suite: Suite) -> None:
    """A one-line :class:`TsrateError` when the snapshot holds no ``marts.<prefix>_*``
    table of ``suite`` at all (the suite was never run and built there), before the report
    would call it an older snapshot or print an empty page."""
    from tsrate.platform.warehouse import connect

    with connect(published, read_only=True) as con:
        found = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'marts' "
            "and starts_with(table_name, ?)",
            [f"{suite.prefix}_"],
        ).fetchone()[0]
    if not found:
        raise TsrateError(
            f"no {suite.name} suite run published in {published}: run `tsrate suite "
            f"{suite.name} run`"
        )


def finish_suite(
    suite: Suite | str,
    suite_run_id: str,
    warehouse: str | Path,
    on_line: Callable[[str], None],
    target_path: str | None = None,
    report: Path | None = None,
) -> Path:
    """Build, record, publish and report one suite run (see the module docstring); return
    the report's path. The caller holds the warehouse writer lock."""
    from tsrate.platform import dbt_runner as dbt
    from tsrate.platform.publish import publish, published_path
    from tsrate.platform.warehouse import connect
    from tsrate.suites.lifecycle import finish_suite_run

    suite = get_suite(suite) if isinstance(suite, str) else suite
    warehouse = Path(warehouse)
    try:
        # the core's build (tsrate.platform.dbt_child): models, seeds and unit tests by dbt,
        # then every data test of the selection in one DuckDB connection (dbt ran each as a
        # node of its own: 125 tests took seconds), only its summary on screen (every line
        # with `tsrate --verbose`) and dbt's full log in logs/
        log_file = dbt.new_log_file(dbt.log_folder(warehouse), f"dbt-build-{suite_run_id}")
        dbt.run_dbt(
            ["tsrate-build", "--select", f"tag:{suite.dbt_tag}"],  # indirect selection cautious
            None,
            str(warehouse),
            on_line,
            target_path,
            env_vars={suite.run_env: suite_run_id},  # not --vars: keeps dbt's partial parse
            log_file=log_file,
            verbose=dbt.verbose_default(),
        )
        if not dbt.verbose_default():
            (on_line or print)(f"full dbt log: {log_file}")
    except TsrateError:
        with connect(warehouse) as con:
            finish_suite_run(con, suite_run_id, "build_failed")
        raise
    with connect(warehouse) as con:
        finish_suite_run(con, suite_run_id, "succeeded")
    result = publish(warehouse, suite_run_id)
    on_line(f"published {suite.name} suite run {suite_run_id} to {result.path}")
    output = report or report_path(warehouse, suite.name)
    return write_suite_report(suite, published_path(warehouse), output)


def add_report_action(subparsers: argparse._SubParsersAction, suite: Suite) -> None:
    """``tsrate suite <name> report [--snapshot FILE] [--output FILE]``."""
    parser = subparsers.add_parser(
        "report", help=f"write the {suite.name} HTML report from the published snapshot"
    )
    parser.add_argument(
        "--snapshot",
        help="published DuckDB file to read (default: warehouse/published/tsrate.duckdb)",
    )
    parser.add_argument(
        "--output", help=f"HTML file (default: warehouse/reports/{suite.name}.html)"
    )

    def report_from_args(args: argparse.Namespace) -> int:
        from tsrate.config import warehouse_path
        from tsrate.platform.publish import published_path

        warehouse = warehouse_path()
        snapshot = Path(args.snapshot) if args.snapshot else published_path(warehouse)
        output = Path(args.output) if args.output else report_path(warehouse, suite.name)
        print(f"{suite.name} report written to {write_suite_report(suite, snapshot, output)}")
        return 0

    parser.set_defaults(func=report_from_args)


#: statuses of a suite run :func:`finish_suite` may build besides the suite's ready status:
#: a rebuild, and a retry after a failed build
REBUILDABLE = ("succeeded", "build_failed")


def buildable_run(warehouse: Path, suite: Suite, suite_run_id: str | None = None) -> str:
    """``suite_run_id`` (default: the newest suite run of ``suite`` with every answer or
    model stored) after checking that it can be built: a suite run of ``suite`` in its
    ready status, ``succeeded`` or ``build_failed``; else a one-line TsrateError."""
    from tsrate.platform.warehouse import connect

    statuses = (suite.ready_status, *REBUILDABLE)
    if not Path(warehouse).exists():
        raise TsrateError(
            f"no warehouse at {warehouse}, so no stored {suite.name} suite run to build: run "
            f"`tsrate suite {suite.name} run` first"
        )
    with connect(warehouse, read_only=True) as con:
        exists = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'raw' "
            "and table_name = 'suite_runs'"
        ).fetchone()[0]
        rows = (
            con.execute(
                "select suite_run_id, status from raw.suite_runs where suite = ? "
                "order by started_at desc, suite_run_id desc",
                [suite.name],
            ).fetchall()
            if exists
            else []
        )
    if suite_run_id is None:
        for name, status in rows:
            if status in statuses:
                return name
        raise TsrateError(
            f"no stored {suite.name} suite run to build in {warehouse}: run "
            f"`tsrate suite {suite.name} run` first"
        )
    status = dict(rows).get(suite_run_id)
    if status is None:
        raise TsrateError(
            f"no {suite.name} suite run {suite_run_id!r} in {warehouse}: see `tsrate query "
            f'--live "select suite_run_id, status from raw.suite_runs where suite = '
            f"'{suite.name}'\"`"
        )
    if status not in statuses:
        raise TsrateError(
            f"{suite.name} suite run {suite_run_id} is {status!r}, not ready to build (needs "
            f"{' / '.join(statuses)}): rerun `tsrate suite {suite.name} run`, which resumes it"
        )
    return suite_run_id


def run_message(suite: str, suite_run_id: str, built: bool, query: str) -> str:
    """The last line of ``tsrate suite <suite> run``: with a build, a query of the marts
    (``query``) that now describe the run; without (``--no-build``), that the marts and
    report still show the last build and the command that builds this run."""
    if built:
        return f'suite run {suite_run_id} done. Try: tsrate query "{query}"'
    return (
        f"suite run {suite_run_id} stored, not built (--no-build): the marts, `tsrate query` "
        f"and the report still show the last build. Build this run with: tsrate suite {suite} "
        f"build {suite_run_id}"
    )


def run_and_publish(
    suite: str,
    work: Callable[[str], str],
    warehouse: str | None,
    lock_timeout: float,
    build: bool,
    target_path: str | None,
) -> str:
    """The body every suite flow shares: under the warehouse writer lock, ``work(warehouse)``
    stores a suite run and returns its id; with ``build``, :func:`finish_suite` builds,
    publishes and reports it. Logs to the flow run's logger (``tsrate.run`` when the flow
    runs in-process). Returns the suite run id."""
    import time

    from tsrate.config import warehouse_path
    from tsrate.platform.locking import warehouse_writer
    from tsrate.platform.progress import phase, run_logger

    log = run_logger().info

    warehouse = warehouse or str(warehouse_path())
    started = time.perf_counter()
    with warehouse_writer(warehouse, lock_timeout, log):
        with phase(f"{suite} suite", log):  # each phase, as `tsrate status` shows it
            suite_run_id = work(warehouse)
        if build:
            with phase(f"{suite} suite: build, publish, report", log):
                report = finish_suite(suite, suite_run_id, warehouse, log, target_path)
            log(f"published; report: {report}")
    log(f"{suite} suite finished in {time.perf_counter() - started:.1f}s")
    return suite_run_id


def write_html(output: Path, text: str) -> Path:
    """Write a report atomically (temporary file, then rename): a reader never sees half."""
    from tsrate.html.page import write_page

    return write_page(output, text)


def read_marts(snapshot: Path, queries: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Run each named query on ``snapshot`` (read-only) and return the frames by name."""
    from tsrate.platform.warehouse import connect

    with connect(snapshot, read_only=True) as con:
        return {name: con.execute(sql).df() for name, sql in queries.items()}


def check_snapshot(path: Path, required: dict[str, tuple[str, ...]], rebuild: str) -> None:
    """Raise a one-line :class:`TsrateError` naming the first mart or column of ``required``
    that the snapshot at ``path`` lacks (one published by an older release) and ``rebuild``,
    the command that rebuilds the marts, instead of a raw query or lookup error."""
    from tsrate.platform.warehouse import connect

    with connect(path, read_only=True) as con:
        present: dict[str, set[str]] = {}
        for table, column in con.execute(
            "select table_name, column_name from duckdb_columns() where schema_name = 'marts'"
        ).fetchall():
            present.setdefault(table, set()).add(column)
    for table, columns in required.items():
        if table not in present:
            raise TsrateError(
                f"{path}: marts.{table} is not in this snapshot (published by an older tsrate "
                f"or before the suite was built): rebuild it with `{rebuild}`"
            )
        for column in columns:
            if column not in present[table]:
                raise TsrateError(
                    f"{path}: marts.{table} has no column {column} (published by an older "
                    f"tsrate): rebuild it with `{rebuild}`"
                )


def html_page(title: str, body: str, style: str = "") -> str:
    """Every suite report's envelope: the one page shell of :mod:`tsrate.html.page` (shared
    style, inlined chart libraries when ``body`` holds a chart); ``body`` brings its own
    ``<h1>``."""
    from tsrate.html.page import page

    return page(title=title, heading="", sections=[body], style=style)
