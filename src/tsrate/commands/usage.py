"""The command line's usage errors and path errors: each one line, as every failure is.

argparse prints the usage (several lines) before ``prog: error: message``, names the
top-level program for an option that a sub-command does not know, and suggests nothing.
:class:`OneLineParser` prints ``tsrate: error: <command>: <problem>; see '<command>
--help'`` instead, exit status 2, with the closest options or commands (difflib) for a
misspelt one.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import sys
from pathlib import Path
from typing import NoReturn

#: Above this many choices the "choose from" list is left to ``--help``.
LISTED_CHOICES = 8


#: How argparse begins the error for missing positionals and required options.
REQUIRED = "the following arguments are required: "

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
        self._arg_strings = list(sys.argv[1:] if args is None else args)  # for error()
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

    def _name_choices(self, message: str) -> str:
        """argparse's "arguments are required: NAME" with a missing sub-command's choices
        after its name (``NAME (one of a, b, c)``), when there are few enough to list."""
        named = []
        for name in message[len(REQUIRED) :].split(", "):
            for action in self._actions:
                listed = action.choices is not None and len(action.choices) <= LISTED_CHOICES
                if listed and not action.option_strings and action.metavar == name:
                    name += f" (one of {', '.join(map(str, action.choices))})"
            named.append(name)
        return REQUIRED + ", ".join(named)

    def _taken_by_option(self, message: str) -> str:
        """For a missing positional that a several-value option took as its last value (one
        whose action carries ``takes_positional``, a test of that value): which option
        took it, and to put the positional first. ``--metadata k=v FILE`` gave "the
        following arguments are required: FILE" and nothing more."""
        last: dict[argparse.Action, str] = {}  # each option's last value
        action = None
        for arg in getattr(self, "_arg_strings", []):
            if arg == "--":
                break
            if arg.startswith("-") and len(arg) > 1:
                action = self._option_action(arg)  # None: --opt=value, or unknown
            elif action is not None:
                last[action] = arg
        name = message[len(REQUIRED) :].split(", ")[0]
        if name.startswith("-"):  # only options are missing: no positional was taken
            return ""
        for action, value in last.items():
            test = getattr(action, "takes_positional", None)
            if test is not None and test(value):
                option = action.option_strings[-1]
                return (
                    f" ({option} took {value!r} as one of its values: it takes every value up "
                    f"to the next option; put {name} before {option})"
                )
        return ""

    def _option_action(self, arg: str) -> argparse.Action | None:
        """The action of option ``arg`` as argparse reads it: by its full name, or by an
        abbreviation that names one option only (``--meta`` for ``--metadata``)."""
        action = self._option_string_actions.get(arg)
        if action is not None or not arg.startswith("--") or not self.allow_abbrev:
            return action
        named = {a for o, a in self._option_string_actions.items() if o.startswith(arg)}
        return named.pop() if len(named) == 1 else None

    def error(self, message: str) -> NoReturn:
        if message.startswith(REQUIRED):
            message = self._name_choices(message) + self._taken_by_option(message)
        where = "" if " " not in self.prog else f"{self.prog}: "
        self.exit(2, f"tsrate: error: {where}{message}; see '{self.prog} --help'\n")


#: The hint for an OS error on a path, by errno (others: :data:`PATH_HINT`).
PATH_HINTS = {
    errno.ENOENT: "check the path's spelling; the folders above it must exist",
    errno.ENOTDIR: "a part of the path is a file where a folder is needed: choose another path",
    errno.EEXIST: "it exists already (a file where a folder is needed?): choose another path",
    errno.EISDIR: "the path is a folder where a file is needed: name a file",
    errno.EACCES: "choose a path you may write to, or change its permissions",
    errno.EPERM: "choose a path you may write to, or change its permissions",
    errno.EROFS: "choose a path on a writable file system",
    errno.ENOSPC: "free some space on that disk, or choose a path on another one",
}
PATH_HINT = "check the path, and that you may read and write there"
#: The hint for an input path that is neither a file nor a folder (a device, pipe or socket).
NOT_REGULAR_HINT = "the path is a device, pipe or socket where a file is needed: name a file"


def path_error_line(exc: OSError) -> str:
    """One line for an OSError on a path: the path, the OS's reason, a hint. A rename from a
    temporary file of ours (a dot-name holding ``.partial``, :func:`is_staging_name`) names
    only its destination: the temporary name is no path the user gave."""
    names = [p for p in (exc.filename, exc.filename2) if p is not None]
    if len(names) == 2 and is_staging_name(names[0]):
        names = names[1:]
    paths = " and ".join(str(p) for p in names)
    reason = exc.strerror or str(exc)
    return f"{paths}: {reason} (hint: {PATH_HINTS.get(exc.errno, PATH_HINT)})"


def is_staging_name(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a temporary file or folder that tsrate writes and then renames into
    place (``.NAME.<...>.partial``, ``.NAME.partial-<...>``)."""
    name = os.path.basename(os.fsdecode(path))
    return name.startswith(".") and (name.endswith(".partial") or ".partial-" in name)


def check_output_folder(folder: Path) -> None:
    """Refuse, before any work, an output folder that cannot be made: the path itself or a
    folder above it is a file, or the nearest existing folder is not writable (the OSError
    that making it would raise, for :func:`path_error_line`)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    nearest = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if nearest is None:
        return
    if not nearest.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    if not os.access(nearest, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(nearest))


def not_a_file(path: str | Path, about: str = "") -> str | None:
    """None for a regular file; else the one line that refuses ``path`` as an input file:
    what it is (no such file, a folder, not a regular file), the hint for it, and ``about``
    (what the file must be) after the hint. The pre-flight check and a reader of the file
    say it in the same words."""
    file = Path(path)
    if file.is_file():
        return None
    if file.is_dir():
        reason, hint = "a folder, not a file", PATH_HINTS[errno.EISDIR]
    elif file.exists():
        reason, hint = "not a regular file", NOT_REGULAR_HINT
    else:
        reason, hint = "no such file", PATH_HINTS[errno.ENOENT]
    return f"{file}: {reason} (hint: {hint}{'; ' + about if about else ''})"


def require_inputs(args: argparse.Namespace) -> None:
    """The input files a writing command names (its ``input_files`` arguments) exist and are
    not folders; those in its ``regular_input_files`` must be regular files (a device or a
    pipe is refused too: their reader cannot read a pipe). A refusal is :func:`not_a_file`'s
    line with the command's ``input_file_about`` for it. Checked before the command waits
    for, or is refused, the writer lock, which would leave an empty lock file behind a
    refused run. Other input files may be pipes (``tsrate ingest <(...)``)."""
    from tsrate import TsrateError

    about = getattr(args, "input_file_about", {})
    regular = getattr(args, "regular_input_files", ())
    for name in getattr(args, "input_files", ()):
        value = getattr(args, name, None)
        if not value:
            continue
        if not Path(value).exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(value))
        if name in regular or Path(value).is_dir():
            refusal = not_a_file(value, about.get(name, ""))
            if refusal:
                raise TsrateError(refusal)


def refuse_without_warehouse(args: argparse.Namespace) -> None:
    """A writing command that needs a warehouse to exist (its ``without_warehouse``: a
    function of the arguments and the warehouse's path that raises its one-line refusal)
    is refused before the writer lock is taken, when neither the warehouse nor its lock
    file exists: taking the lock would leave an empty lock file, and its folder, behind a
    command that wrote nothing. With a lock file there, the lock is taken as usual, so a
    writer creating the warehouse meanwhile is named as busy.

    A command's ``before_lock`` (a function of the arguments that raises its one-line
    refusal) runs first, whatever is there: checks that need no warehouse name their
    problem even while another process writes, and a refused call leaves nothing in the
    lock file."""
    check = getattr(args, "before_lock", None)
    if check is not None:
        check(args)
    refuse = getattr(args, "without_warehouse", None)
    if refuse is None:
        return
    from tsrate.config import warehouse_path
    from tsrate.platform.locking import lock_path

    warehouse = warehouse_path()
    if not warehouse.exists() and not lock_path(warehouse).exists():
        refuse(args, warehouse)


def check_warehouse_setting() -> None:
    """``TSRATE_WAREHOUSE`` names the warehouse's DuckDB file: a folder there is refused
    with the file to name instead (each command said only "no DuckDB database at DIR")."""
    from tsrate import TsrateError

    if not os.environ.get("TSRATE_WAREHOUSE"):
        return
    from tsrate.config import warehouse_path

    path = warehouse_path()
    if path.is_dir():
        error = TsrateError(f"TSRATE_WAREHOUSE names a folder, {path}, not a DuckDB file")
        error.hint = f"set it to the warehouse's file, e.g. {path / 'tsrate.duckdb'}"
        raise error
