"""Understanding suite flow: generate -> prompt every system -> score and rate (dbt build,
tag understanding) -> publish -> report (from the snapshot).

Resumable: series, prompts and responses are keyed by hashes of what determines them;
responses are stored per batch, so a rerun (or a run after a kill) asks only for the
missing answers. Progress is logged per batch. Run it alone with
``python flows/understanding.py [small|paper]``.
"""

from __future__ import annotations

import sys

from tsrate.config import warehouse_path
from tsrate.platform.orchestration import call, flow, task
from tsrate.platform.progress import announcing, run_logger
from tsrate.platform.published_paths import check_publish
from tsrate.suites.publishing import run_and_publish
from tsrate.suites.understanding.suite import (
    SuiteConfig,
    open_systems,
    require_a_system,
    resolve_config,
    run_suite,
)


@task(name="und-answer")
def answer_task(
    warehouse: str,
    config: SuiteConfig,
    llm: list[str],
    references: bool,
    cot_parser: str | None = None,
) -> str:
    """Generate the series and prompts, ask every system what it has not answered yet."""
    logger = run_logger()
    systems = open_systems(llm, references, config.random_seed)
    parser = None
    if cot_parser:
        from tsrate.suites.understanding.cot_parser import CotParser

        parser = CotParser(cot_parser)
    logger.info(
        "understanding suite (%s): systems %s",
        config.name,
        ", ".join(s.system_id for s, _ in systems),
    )
    suite_run_id, counts = run_suite(
        warehouse, config, systems, progress=announcing(logger.info), cot_parser=parser
    )
    for system_id, (asked, reused) in counts.items():
        logger.info("%s: %d prompts asked, %d answers reused", system_id, asked, reused)
    return suite_run_id


@flow(name="tsrate-understanding")
def understanding_flow(
    config_name: str = "small",
    llm: list[str] | None = None,
    references: bool = True,
    overrides: dict | None = None,
    build: bool = True,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
    target_path: str | None = None,
    cot_parser: str | None = None,
) -> str:
    """Run the understanding suite; return its suite run id.

    ``llm``: language-model specs (``endpoint:<ID>``, ``hf_local:<ID>``); ``references``:
    also ask the statistical analyst and the random answerer; ``overrides``: configuration
    fields to change (tests use tiny sizes); ``cot_parser``: a language-model spec asked for
    the final answer of chain-of-thought replies without a parseable ``Answer:`` line."""
    config = resolve_config(config_name, overrides)
    require_a_system(llm or [], references)  # before the writer lock: it leaves a file behind

    def work(store: str) -> str:
        return call(answer_task, store, config, list(llm or []), references, cot_parser)

    if build:  # pre-flight: what would stop the publish at the end, before any work
        check_publish(warehouse or warehouse_path())
    return run_and_publish("understanding", work, warehouse, lock_timeout, build, target_path)


if __name__ == "__main__":
    understanding_flow(sys.argv[1] if len(sys.argv) > 1 else "small")
