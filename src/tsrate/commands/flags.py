"""The argument types and option groups that several ``tsrate`` commands share (whole
numbers of N or more, the study flags, ``--companies``, ``--metadata``, ``--verbose``,
``--lock-timeout``); the suites' commands use them too (:mod:`tsrate.suites.commandline`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def at_least(minimum: int, why: str = ""):  # noqa: ANN201 - an argparse type
    """An argparse type: a whole number of ``minimum`` or more, else a usage error
    ("expected a whole number, got 'x'", "must be 4 or more (``why``), got 3")."""

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


def wait_seconds(text: str) -> float:
    """An argparse type: ``--lock-timeout``'s seconds, 0 (do not wait) or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0:  # a negative wait (or nan) would silently mean "do not wait"
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def add_study_flags(parser: argparse.ArgumentParser) -> None:
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
    group.add_argument(
        "--seed",
        type=int,
        help="seed of the Random system's draws and Chronos' sample paths (var "
        "random_seed; part of the study id). APE/PIE's treatment draws and the "
        "bootstrap have their own seeds: dbt vars causal_seed, bootstrap_seed "
        "(docs/studies.md)",
    )


def add_companies_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--companies",
        metavar="FILE",
        help="company metadata (CSV/Parquet: ticker,company_name,industry[,biased_offset]) "
        "for tickers outside seeds/companies.csv; a price file's own company_name/industry "
        "columns are read too",
    )


#: The suffixes of a metadata file (any other value of ``--metadata`` is a key=value pair).
METADATA_SUFFIXES = (".yaml", ".yml", ".json")


def not_metadata(value: str) -> bool:
    """True when a ``--metadata`` value is neither a key=value pair nor a metadata file
    (``good.csv``; an existing file that is not .yaml/.json): the predictions FILE, written
    after the flag, which takes every value up to the next option."""
    if Path(value).suffix.lower() in METADATA_SUFFIXES:
        return False
    return "=" not in value or Path(value).is_file()


def add_metadata_flag(parser: argparse.ArgumentParser) -> None:
    action = parser.add_argument(
        "--metadata",
        nargs="+",
        action="extend",
        metavar="PATH|K=V",
        help="register the system (not a seed row) with the systems seed's columns: a "
        ".yaml/.json file and/or key=value pairs (display_name, modality, family, purpose, "
        "architecture, is_foundation_model, accepted_perturbations, description, "
        "paper_symbol, base_model, training_corpus, training_cutoff: the last day of "
        "its training data, as YYYY-MM-DD); put the predictions FILE before this flag",
    )
    action.takes_positional = not_metadata  # a missing FILE after it: "put FILE before"


def add_verbose_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,  # `tsrate --verbose run` and `tsrate run --verbose`
        help="show dbt's whole log live (else: a summary; the full log is in <warehouse>/logs)",
    )


def add_lock_timeout(parser: argparse.ArgumentParser) -> None:
    """``--lock-timeout SECONDS``: how long a writing command waits for the writer lock."""
    parser.add_argument(
        "--lock-timeout",
        type=wait_seconds,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )
