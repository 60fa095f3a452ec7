"""Command-line options every ``tsrate suite <name> run`` shares."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tsrate.commands.flags import add_lock_timeout

if TYPE_CHECKING:
    from tsrate.suites import Suite


def str_list(text: str) -> list[str]:
    """``"a,b c"`` -> ``["a", "b", "c"]`` (commas or spaces)."""
    return [part for part in text.replace(",", " ").split() if part]


def add_size_arguments(parser: argparse.ArgumentParser, small: str, paper: str) -> None:
    """``--small`` (default) or ``--paper``, stored as ``config``; the texts say what each is."""
    size = parser.add_mutually_exclusive_group()
    for name, text in (("small", small), ("paper", paper)):
        size.add_argument(f"--{name}", dest="config", action="store_const", const=name, help=text)
    parser.set_defaults(config="small")


def add_no_references(parser: argparse.ArgumentParser, which: str) -> None:
    """``--no-references`` (``which``: the reference systems it leaves out), stored as
    ``no_references``; ``--no-reference`` is a hidden alias, so either spelling works in
    every suite."""
    parser.add_argument(
        "--no-references", dest="no_references", action="store_true", help=f"skip {which}"
    )
    parser.add_argument(
        "--no-reference", dest="no_references", action="store_true", help=argparse.SUPPRESS
    )


def add_control_arguments(parser: argparse.ArgumentParser, store_only: str) -> None:
    """``--no-build`` (store the suite run's answers or models only; ``store_only`` says what)
    and ``--lock-timeout`` (as every writing command has: :mod:`tsrate.commands.flags`)."""
    parser.add_argument("--no-build", action="store_true", help=store_only)
    add_lock_timeout(parser)


def add_run_action(subparsers, text: str, add_arguments, run) -> None:  # noqa: ANN001
    """``tsrate suite <name> run``: ``add_arguments(parser)`` adds the suite's options,
    ``run(args)`` runs it; ``text`` is the help line."""
    parser = subparsers.add_parser("run", help=text)
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_build_action(subparsers: argparse._SubParsersAction, suite: Suite) -> None:
    """``tsrate suite <name> build [SUITE_RUN_ID] [--lock-timeout S]``: build, publish and
    report a stored suite run (:func:`tsrate.suites.publishing.buildable_run`,
    :func:`tsrate.suites.publishing.finish_suite`)."""
    parser = subparsers.add_parser(
        "build",
        help=f"build, publish and report a stored {suite.name} suite run (one run with "
        "--no-build; default: the newest ready one)",
    )
    parser.add_argument(
        "suite_run_id",
        nargs="?",
        metavar="SUITE_RUN_ID",
        help="the suite run to build (default: the newest ready one)",
    )
    add_lock_timeout(parser)

    def build_from_args(args: argparse.Namespace) -> int:
        from tsrate.config import warehouse_path
        from tsrate.platform.published_paths import check_publish
        from tsrate.suites.publishing import buildable_run, finish_suite

        warehouse = warehouse_path()
        check_publish(warehouse)  # pre-flight: what would stop the publish at the end
        suite_run_id = buildable_run(warehouse, suite, args.suite_run_id)
        report = finish_suite(suite, suite_run_id, warehouse, print)
        print(f"{suite.name} suite run {suite_run_id} built and published; report: {report}")
        return 0

    def without_warehouse(args: argparse.Namespace, warehouse) -> None:  # noqa: ANN001
        from tsrate.platform.published_paths import check_publish
        from tsrate.suites.publishing import buildable_run

        check_publish(warehouse)  # the same refusals, in the same order, as build_from_args
        buildable_run(warehouse, suite, args.suite_run_id)  # no warehouse: its one line

    # the CLI takes the warehouse writer lock around it, as for `tsrate build`, and refuses
    # it before the lock when there is no warehouse to build from
    parser.set_defaults(
        func=build_from_args, writes_warehouse=True, without_warehouse=without_warehouse
    )
