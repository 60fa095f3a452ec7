"""Suites beyond the robustness core: each lives in ``tsrate.suites.<name>``.

A suite registers a :class:`Suite` here: its name, a one-line summary, and the function that
adds its options to ``tsrate suite <name> run`` and runs it. Its dbt models live in
``models/<name>/`` tagged with the suite name; its ratings use :mod:`tsrate.ratings`.
Later suites (understanding, reasoning) join by adding an entry to :data:`SUITES`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Callable

from tsrate import TsrateError


@dataclasses.dataclass(frozen=True)
class Suite:
    """A registered suite. ``module`` exposes ``add_run_arguments(parser)`` and
    ``run_from_args(args) -> int`` (imported lazily, so torch loads only when needed)."""

    name: str
    summary: str
    module: str
    dbt_tag: str

    def load(self):
        return importlib.import_module(self.module)

    @property
    def add_run_arguments(self) -> Callable[[argparse.ArgumentParser], None]:
        return self.load().add_run_arguments

    @property
    def run_from_args(self) -> Callable[[argparse.Namespace], int]:
        return self.load().run_from_args


SUITES: dict[str, Suite] = {
    "interpretability": Suite(
        name="interpretability",
        summary="attention-based forecasters on synthetic data with known causal structure",
        module="tsrate.suites.interpretability.cli",
        dbt_tag="interpretability",
    ),
}


def get_suite(name: str) -> Suite:
    """The registered suite ``name`` or a :class:`TsrateError` listing the known ones."""
    if name not in SUITES:
        raise TsrateError(f"unknown suite {name!r}: choose from {', '.join(sorted(SUITES))}")
    return SUITES[name]
