"""``tsrate suite NAME ACTION``: one sub-command per registered suite, whose actions (run,
build, report, ...) the suite's own module adds when it is used (:mod:`tsrate.suites`)."""

from __future__ import annotations

from tsrate.commands.usage import OneLineParser


class SuiteParser(OneLineParser):
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


def add_suite_commands(sub) -> None:
    """``tsrate suite <name> run``: one sub-command per suite registered in tsrate.suites
    (names and summaries from the registry; the suite's module is imported when used)."""
    from tsrate.suites import SUITES

    suite = sub.add_parser(
        "suite", help="run a suite: understanding, reasoning or interpretability"
    )
    names = suite.add_subparsers(
        dest="suite_name", metavar="NAME", required=True, parser_class=SuiteParser
    )
    for entry in SUITES.values():
        names.add_parser(entry.name, help=entry.summary).suite_entry = entry
