"""Command-line options every ``tsrate suite <name> run`` shares."""

from __future__ import annotations

import argparse

from tsrate.cli import wait_seconds


def str_list(text: str) -> list[str]:
    """``"a,b c"`` -> ``["a", "b", "c"]`` (commas or spaces)."""
    return [part for part in text.replace(",", " ").split() if part]


def at_least(minimum: int, why: str = ""):  # noqa: ANN201 - an argparse type
    """An argparse type: a whole number of ``minimum`` or more (``why``: the reason, said in
    the usage error)."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            reason = f" ({why})" if why else ""
            raise argparse.ArgumentTypeError(f"must be {minimum} or more{reason}, got {value}")
        return value

    return whole_number


def add_size_arguments(parser: argparse.ArgumentParser, small: str, paper: str) -> None:
    """``--small`` (default) or ``--paper``, stored as ``config``; the texts say what each is."""
    size = parser.add_mutually_exclusive_group()
    for name, text in (("small", small), ("paper", paper)):
        size.add_argument(f"--{name}", dest="config", action="store_const", const=name, help=text)
    parser.set_defaults(config="small")


def add_control_arguments(parser: argparse.ArgumentParser, store_only: str) -> None:
    """``--no-build`` (store the suite run's answers or models only; ``store_only`` says what)
    and ``--lock-timeout``."""
    parser.add_argument("--no-build", action="store_true", help=store_only)
    parser.add_argument(
        "--lock-timeout",
        type=wait_seconds,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )


def add_run_action(subparsers, text: str, add_arguments, run) -> None:  # noqa: ANN001
    """``tsrate suite <name> run``: ``add_arguments(parser)`` adds the suite's options,
    ``run(args)`` runs it; ``text`` is the help line."""
    parser = subparsers.add_parser("run", help=text)
    add_arguments(parser)
    parser.set_defaults(func=run)
