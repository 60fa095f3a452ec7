"""The command line's parser class: a usage error is one line, as every other failure is.

argparse prints the usage (several lines) before ``prog: error: message``, names the
top-level program for an option that a sub-command does not know, and suggests nothing.
:class:`OneLineParser` prints ``tsrate: error: <command>: <problem>; see '<command>
--help'`` instead, exit status 2, with the closest options or commands (difflib) for a
misspelt one.
"""

from __future__ import annotations

import argparse
import difflib
from typing import NoReturn

#: Above this many choices the "choose from" list is left to ``--help``.
LISTED_CHOICES = 8


#: How alike (difflib's ratio) a candidate must be to be suggested, and how far below the
#: best one the others may be.
CUTOFF, MARGIN = 0.6, 0.1


def closest(word: str, candidates: list[str]) -> list[str]:
    """The (at most 3) candidates closest to ``word``, best first: each alike enough, and
    nearly as alike as the best (``--tikers`` suggests ``--tickers``, not ``--workers``)."""
    scored = []
    for candidate in candidates:
        matcher = difflib.SequenceMatcher(None, word.lstrip("-"), candidate.lstrip("-"))
        scored.append((matcher.ratio(), candidate))
    scored.sort(key=lambda pair: -pair[0])
    best = scored[0][0] if scored else 0.0
    return [name for ratio, name in scored[:3] if ratio >= max(CUTOFF, best - MARGIN)]


def did_you_mean(word: str, candidates: list[str]) -> str:
    """`` (did you mean X?)`` / `` (did you mean X or Y?)``, or '' when none is close."""
    near = closest(word, candidates)
    return f" (did you mean {' or '.join(near)}?)" if near else ""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose every error is one line naming the (sub-)command and a hint.

    A sub-command's parser reports its own unrecognised arguments (argparse leaves them to
    the top-level parser, which then names ``tsrate`` instead of ``tsrate run``)."""

    def parse_known_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 - argparse's
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return namespace, extras

    def _unrecognized(self, extras: list[str]) -> str:
        flags = [arg for arg in extras if arg.startswith("-") and arg != "-"]
        if not flags:
            return f"unexpected argument {extras[0]!r}"
        flag = flags[0].split("=", 1)[0]
        known = [option for option in self._option_string_actions if option.startswith("--")]
        return f"unrecognized argument {flag}{did_you_mean(flag, known)}"

    def _check_value(self, action: argparse.Action, value: object) -> None:
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        suggestion = did_you_mean(str(value), choices)
        message = f"invalid choice: {value!r}{suggestion}"
        if not suggestion and len(choices) <= LISTED_CHOICES:
            message += f" (choose from {', '.join(choices)})"
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001 - argparse's own
            raise argparse.ArgumentError(None, message)  # "argument command:" says nothing
        raise argparse.ArgumentError(action, message)

    def error(self, message: str) -> NoReturn:
        where = "" if " " not in self.prog else f"{self.prog}: "
        self.exit(2, f"tsrate: error: {where}{message}; see '{self.prog} --help'\n")
