"""The options of the commands that read the warehouse or serve it: ``systems``,
``studies``, ``runs``, ``status``, ``query``, ``export``, ``serve``, ``report``, ``docs``
(their bodies: :mod:`tsrate.commands.reading`)."""

from __future__ import annotations

from tsrate.commands.flags import add_lock_timeout, add_verbose_flag
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
    docs_without_warehouse,
)


def add_reading_commands(sub) -> None:  # noqa: ANN001 - argparse's subparsers action
    """Add the reading and serving commands to ``tsrate``'s sub-commands, in ``--help``'s order."""
    systems = sub.add_parser("systems", help="list systems and their availability")
    systems.add_argument(
        "--show-prompt",
        metavar="SYSTEM",
        help="print a language-model system's prompt, rendered for a sample window",
    )
    systems.set_defaults(func=cmd_systems)
    studies = sub.add_parser("studies", help="list studies with their systems and last update")
    studies.set_defaults(func=cmd_studies)  # a read (the shared side of the lock)
    runs = sub.add_parser(
        "runs",
        help="list recorded runs and what their publications rate",
        description="List the recorded runs, newest first: status, times, tickers, the "
        "run's own systems and, in column rated, what its publication rates where that "
        "differs (the study's earlier imports it still rates, withdrawn systems left out; "
        "empty otherwise or when not published).",
    )
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
        help="HTML file to write, its folder created; a folder gets report.html in it "
        "(default: report.html by the snapshot)",
    )
    report.set_defaults(func=cmd_report)

    docs = sub.add_parser("docs", help="build the dbt docs site from the live warehouse")
    docs.add_argument("--output", help="folder for the site (default: warehouse/docs)")
    add_lock_timeout(docs)
    add_verbose_flag(docs)
    # dbt opens the live file to read its catalog: as a writer would, so that a build
    # starting meanwhile is refused at once instead of failing half-way on DuckDB's lock
    docs.set_defaults(func=cmd_docs, writes_warehouse=True)
    docs.set_defaults(without_warehouse=docs_without_warehouse)  # refused before the lock
