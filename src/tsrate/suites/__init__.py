"""Suites beyond the robustness core: each lives in ``tsrate.suites.<name>``.

The suite kit every suite uses (the recipe to add one: ``docs/suites/README.md``):

* :data:`SUITES` — the registry: name, summary, table prefix, CLI module, dbt var of the
  run the marts describe, and the status that makes a run ready to build;
* :mod:`.lifecycle` — one raw table of suite runs (``raw.suite_runs``) with start, finish and
  status, and the creation of every suite raw table from its one definition
  (``tsrate.suites.<name>.schema``) when the warehouse is initialised;
* :mod:`.rating` — one rating helper over key columns, directed by the rating spec seed
  ``seeds/suite_rating_specs.csv``;
* :mod:`.publishing` — build, publish into the snapshot, and the one report command;
* dbt macros ``stg_suite_runs``, ``select_suite_run`` and ``suite_ratings``
  (``macros/suites.sql``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from typing import TYPE_CHECKING

from tsrate import TsrateError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection


@dataclasses.dataclass(frozen=True)
class Suite:
    """A registered suite. ``module`` exposes ``register_actions(subparsers)``, which adds
    its actions (at least ``run``) to ``tsrate suite <name>``, each with ``func`` set; it is
    imported lazily, so heavy dependencies (torch) load only when the suite is used."""

    name: str
    summary: str
    module: str
    dbt_tag: str
    #: Prefix of its raw tables, dbt models and marts (``raw.<prefix>_*``, ``marts.<prefix>_*``)
    #: and of its suite run ids.
    prefix: str = ""
    #: The status a suite run reaches when every answer (or model) is stored: marts built
    #: for ``latest`` describe the newest run in this status or ``succeeded``.
    ready_status: str = "answered"

    @property
    def run_var(self) -> str:
        """dbt var naming the suite run its marts describe (``<prefix>_suite_run_id``)."""
        return f"{self.prefix}_suite_run_id"

    @property
    def run_env(self) -> str:
        """Env var naming the suite run its marts describe (``TSRATE_<PREFIX>_SUITE_RUN_ID``),
        read by the ``select_suite_run`` macro before the var :attr:`run_var`. tsrate's suite
        builds pass the run this way: a changed env var read only at run time keeps dbt's
        partial parse, where a changed ``--vars`` re-parses the whole project (for this build
        and for the next core build)."""
        return f"TSRATE_{self.run_var.upper()}"

    @property
    def schema_module(self) -> str:
        """Module holding ``DDL``, the one definition of the suite's raw tables."""
        return f"tsrate.suites.{self.name}.schema"

    @property
    def report_module(self) -> str:
        """Module holding ``write_report(snapshot, output)``."""
        return f"tsrate.suites.{self.name}.report"

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
        prefix="interp",
        ready_status="trained",
    ),
    "understanding": Suite(
        name="understanding",
        summary="language models' understanding of time-series features: detection, classification, retrieval, arithmetic, matching",
        module="tsrate.suites.understanding.cli",
        dbt_tag="understanding",
        prefix="und",
    ),
    "reasoning": Suite(
        name="reasoning",
        summary="language models reasoning about time series: etiology, questions, context-aided forecasts",
        module="tsrate.suites.reasoning.cli",
        dbt_tag="reasoning",
        prefix="rsn",
    ),
}


def get_suite(name: str) -> Suite:
    """The registered suite ``name`` or a :class:`TsrateError` listing the known ones."""
    if name not in SUITES:
        raise TsrateError(f"unknown suite {name!r}: choose from {', '.join(sorted(SUITES))}")
    return SUITES[name]


def unbuilt_suite_marts(con: DuckDBPyConnection, database: str = "live") -> set[str]:
    """Names of the ``marts`` relations of ``database`` that belong to a suite without a
    ``succeeded`` run (their marts are empty or stale leftovers: not published)."""
    exists = con.execute(
        "select count(*) from duckdb_tables() where database_name = ? "
        "and schema_name = 'raw' and table_name = 'suite_runs'",
        [database],
    ).fetchone()[0]
    built: set[str] = set()
    if exists:
        built = {
            row[0]
            for row in con.execute(
                f"select distinct suite from {database}.raw.suite_runs where status = 'succeeded'"
            ).fetchall()
        }
    relations = [
        row[0]
        for row in con.execute(
            "select table_name from duckdb_tables() where database_name = ? "
            "and schema_name = 'marts' union all select view_name from duckdb_views() "
            "where database_name = ? and schema_name = 'marts'",
            [database, database],
        ).fetchall()
    ]
    prefixes = [f"{s.prefix}_" for s in SUITES.values() if s.name not in built]
    return {name for name in relations if name.startswith(tuple(prefixes))}
