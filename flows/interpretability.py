"""Interpretability suite flow: plan -> train every missing unit -> dbt build (tag interpretability)
-> publish -> report.

Resumable: each (dataset variant, model, seed) unit is stored in one transaction; a rerun
(or a run after a kill) reuses stored units. Progress is logged per unit.
Run it alone with ``python flows/interpretability.py [small|paper]``.
"""

from __future__ import annotations

import sys

from tsrate.config import warehouse_path
from tsrate.platform.orchestration import call, flow, task
from tsrate.platform.progress import announcing, run_logger
from tsrate.platform.published_paths import check_publish
from tsrate.suites.interpretability.suite import (
    SuiteConfig,
    default_workers,
    plan_units,
    plan_variants,
    require_known,
    resolve_config,
    run_units,
)
from tsrate.suites.publishing import run_and_publish


@task(name="interp-train")
def train_task(
    warehouse: str, config: SuiteConfig, datasets, models, sensitivity: bool, workers: int | None
):
    """Train the units of the plan that are not stored yet; returns the suite run id."""
    logger = run_logger()
    variants = plan_variants(config, datasets, sensitivity=sensitivity)
    units = plan_units(config, variants, models)
    logger.info(
        "interpretability suite (%s): %d dataset variants, %d training units",
        config.name,
        len({v.variant_key for v in variants}),
        len(units),
    )
    workers = workers or default_workers(config)
    suite_run_id, trained, reused = run_units(
        warehouse, config, variants, units, progress=announcing(logger.info), workers=workers
    )
    logger.info("suite run %s: %d units trained, %d reused", suite_run_id, trained, reused)
    return suite_run_id


@flow(name="tsrate-interpretability")
def interpretability_flow(
    config_name: str = "small",
    datasets: list[int] | None = None,
    models: list[str] | None = None,
    seeds: list[int] | None = None,
    sensitivity: bool = True,
    build: bool = True,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
    target_path: str | None = None,
    overrides: dict | None = None,
    workers: int | None = None,
) -> str:
    """Run the interpretability suite; return its suite run id.

    ``config_name``: small or paper; ``datasets``/``models``/``seeds`` narrow it;
    ``overrides``: configuration fields to change (tests use tiny series); ``workers``:
    training processes (default: one per CPU core up to 4; one on a GPU).
    """
    config = resolve_config(config_name, seeds, overrides)
    require_known(datasets, models)  # before the writer lock: it leaves a file behind

    def work(store: str) -> str:
        return call(train_task, store, config, datasets, models, sensitivity, workers)

    if build:  # pre-flight: what would stop the publish at the end, before any work
        check_publish(warehouse or warehouse_path())
    return run_and_publish("interpretability", work, warehouse, lock_timeout, build, target_path)


if __name__ == "__main__":
    interpretability_flow(sys.argv[1] if len(sys.argv) > 1 else "small")
