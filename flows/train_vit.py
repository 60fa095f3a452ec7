"""Training flow: train (or load) the ViT-num-spec variants and register their checkpoints.

Each variant trains on the bundled S&P 500 sample without the study's companies over its own
period (vars ``vit_precovid_*`` / ``vit_covid_*``; see :mod:`tsrate.systems.vit_num_spec`),
seeded, with a date-ordered train/validation split and early stopping, on ``cuda`` when
torch sees a GPU. The checkpoint and its metadata JSON land under the warehouse directory
(``<warehouse dir>/models/vit_num_spec/``) and one row per checkpoint in
``raw.model_checkpoints``. An existing checkpoint with the same key (settings + training
prices) is reused unless ``force``. Run it alone with ``python flows/train_vit.py [SYSTEM]``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from tsrate import TsrateError
from tsrate.config import Study, load_companies, warehouse_path
from tsrate.platform.locking import describe_holder, warehouse_writer, writer_status
from tsrate.platform.orchestration import call, flow, task
from tsrate.platform.progress import run_logger
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect, transaction


def variants_to_train(system: str) -> list[str]:
    """``all`` → both variants; otherwise the one named (a clear error if unknown)."""
    from tsrate.systems.vit_num_spec import VARIANTS

    if system == "all":
        return sorted(VARIANTS)
    if system not in VARIANTS:
        raise TsrateError(
            f"unknown ViT-num-spec system {system!r}; choose one of {sorted(VARIANTS)} or all"
        )
    return [system]


def model_dir(warehouse: str | Path) -> Path:
    """The model folder for ``warehouse``: ``TSRATE_MODEL_DIR``, else ``models/`` beside it
    (where ``tsrate run`` on that warehouse looks for the weights)."""
    return Path(os.environ.get("TSRATE_MODEL_DIR") or Path(warehouse).parent / "models")


@task(name="train-vit-variant")
def train_variant(study_json: str, system_id: str, force: bool, folder: str) -> dict[str, Any]:
    """Train (or load) one variant in this process; returns its ``raw.model_checkpoints`` row
    (the registration happens in the flow, which owns the warehouse connection)."""
    from tsrate.systems.vit_num_spec import checkpoint_row, create

    logger = run_logger()
    system = create(Study.from_json(study_json), load_companies(), system_id, Path(folder))
    started = time.perf_counter()
    system.prepare(logger.info, force=force)
    meta = system.metadata
    verb = "trained" if system.trained_now else "reused"
    logger.info(
        "%s %s in %.1fs: %s (validation loss %.4f, best epoch %s, %s windows of %s)",
        verb,
        system_id,
        time.perf_counter() - started,
        system.checkpoint_path,
        meta.get("validation_loss", float("nan")),
        meta.get("best_epoch"),
        meta.get("training_windows"),
        ",".join(meta.get("tickers", [])),
    )
    return checkpoint_row(system.checkpoint_path, meta, system.key)


@flow(name="tsrate-train-vit")
def train_vit_flow(
    system: str = "all",
    force: bool = False,
    overrides: dict[str, Any] | None = None,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
) -> list[str]:
    """Train the named ViT-num-spec variant(s) (``all``: both) for the study in ``overrides``
    (default: the dbt vars) and register each checkpoint; returns the checkpoint paths.

    Training runs before the warehouse writer lock is taken; only the registration holds it.
    """
    from tsrate.systems.vit_num_spec import store_checkpoint_row

    logger = run_logger()
    study = Study.from_vars(overrides or {})
    warehouse = warehouse or str(warehouse_path())
    folder = str(model_dir(warehouse))
    writer = writer_status(warehouse)
    if writer is not None and writer.get("pid") != os.getpid():  # said now, not minutes later
        logger.info(
            "note: the warehouse is being written by %s; training goes ahead and registers "
            "its checkpoints when the writer lock is free (waiting up to %gs then; a rerun "
            "reuses the trained checkpoints)",
            describe_holder(writer),
            lock_timeout,
        )
    rows = [
        call(train_variant, study.to_json(), variant, force, folder)
        for variant in variants_to_train(system)
    ]
    with warehouse_writer(warehouse, lock_timeout, logger.info), connect(warehouse) as con:
        create_raw_tables(con)  # registering checkpoints is a writing edge
        with transaction(con):
            for row in rows:
                store_checkpoint_row(con, row)
    logger.info("registered %d checkpoint(s) in raw.model_checkpoints of %s", len(rows), warehouse)
    return [row["checkpoint_path"] for row in rows]


if __name__ == "__main__":
    train_vit_flow(sys.argv[1] if len(sys.argv) > 1 else "all")
