"""Suites beyond the robustness core: each lives in ``tsrate.suites.<name>``.

A suite registers a :class:`Suite` here: its name, a one-line summary, and the module whose
``register_actions`` adds ``tsrate suite <name> run`` (and any other action) to the CLI. Its dbt models live in
``models/<name>/`` tagged with the suite name; its ratings use :mod:`tsrate.ratings`.
Later suites (understanding, reasoning) join by adding an entry to :data:`SUITES`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib

from tsrate import TsrateError


@dataclasses.dataclass(frozen=True)
class Suite:
    """A registered suite. ``module`` exposes ``register_actions(subparsers)``, which adds
    its actions (at least ``run``) to ``tsrate suite <name>``, each with ``func`` set; it is
    imported lazily, so heavy dependencies (torch) load only when the suite is used."""

    name: str
    summary: str
    module: str
    dbt_tag: str

    def load(self):
        return importlib.import_module(self.module)

    def register(self, subparsers: argparse._SubParsersAction) -> None:
        """Add this suite's actions (run, report, ...) to ``subparsers``."""
        self.load().register_actions(subparsers)


SUITES: dict[str, Suite] = {
    "interpretability": Suite(
        name="interpretability",
        summary="attention-based forecasters on synthetic data with known causal structure",
        module="tsrate.suites.interpretability.cli",
        dbt_tag="interpretability",
    ),
    "understanding": Suite(
        name="understanding",
        summary="language models' understanding of time-series features: detection, classification, retrieval, arithmetic, matching",
        module="tsrate.suites.understanding.cli",
        dbt_tag="understanding",
    ),
    "reasoning": Suite(
        name="reasoning",
        summary="language models reasoning about time series: etiology, questions, context-aided forecasts",
        module="tsrate.suites.reasoning.cli",
        dbt_tag="reasoning",
    ),
}


def get_suite(name: str) -> Suite:
    """The registered suite ``name`` or a :class:`TsrateError` listing the known ones."""
    if name not in SUITES:
        raise TsrateError(f"unknown suite {name!r}: choose from {', '.join(sorted(SUITES))}")
    return SUITES[name]


def build_suite_marts(
    tag: str,
    run_var: str,
    suite_run_id: str,
    warehouse: str,
    finish_suite_run,  # noqa: ANN001 - the suite's storage.finish_suite_run(con, id, status)
    on_line,  # noqa: ANN001 - callable receiving dbt's output lines
    target_path: str | None = None,
) -> None:
    """``dbt build --select tag:<tag>`` for one suite run (dbt var ``run_var``), then record the
    suite run as ``succeeded``, or ``build_failed`` (and re-raise) when the build fails."""
    from tsrate import dbt
    from tsrate.warehouse import connect

    try:
        dbt.run_dbt(
            ["build", "--select", f"tag:{tag}", "--indirect-selection", "cautious"],
            {run_var: suite_run_id},
            warehouse,
            on_line,
            target_path,
        )
    except TsrateError:
        with connect(warehouse) as con:
            finish_suite_run(con, suite_run_id, "build_failed")
        raise
    with connect(warehouse) as con:
        finish_suite_run(con, suite_run_id, "succeeded")
