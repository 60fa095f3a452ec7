"""The bodies of the ``tsrate`` commands, outside :mod:`tsrate.cli` (which holds the parser
and ``main``): :mod:`tsrate.commands.pipeline` writes the warehouse,
:mod:`tsrate.commands.reading` reads or serves it.
"""

from __future__ import annotations

import argparse


def study_overrides(args: argparse.Namespace) -> dict:
    """The study flags of a command (``tsrate.cli``'s study group) as ``Study.from_vars``
    overrides; a flag not given is None (the var's default)."""
    return {
        "study_tickers": args.tickers,
        "study_start": args.start,
        "study_end": args.end,
        "systems": args.systems,
        "perturbations": args.perturbations,
        "context_length": args.context_length,
        "horizon": args.horizon,
        "stride": args.stride,
        "perturbation_phase": args.phase,
        "random_seed": args.seed,
    }
