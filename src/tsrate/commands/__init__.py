"""The ``tsrate`` commands, by group (:mod:`tsrate.cli` holds the top-level parser and
``main``): :mod:`tsrate.commands.pipeline` writes the warehouse,
:mod:`tsrate.commands.reading` reads or serves it; each group's options are in its
``*_parsers`` module (``pipeline_parsers``, ``reading_parsers``, ``suite_parsers``), the
options they share in :mod:`tsrate.commands.flags`.
"""

from __future__ import annotations

import argparse


def study_overrides(args: argparse.Namespace) -> dict:
    """The study flags of a command (:func:`tsrate.commands.flags.add_study_flags`) as ``Study.from_vars``
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
