"""The body of ``tsrate register-llm``: a language model behind an OpenAI-compatible endpoint,
rated under its own system id (:mod:`tsrate.systems.registered`; its options are in
:mod:`tsrate.commands.register_parsers`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from tsrate.systems.registered import Registration, check_registration


def _checked(args: argparse.Namespace, imported: set[str]) -> Registration:
    from tsrate.config import project_dir
    from tsrate.robustness.study import read_seed

    seed = [row["system_id"] for row in read_seed(project_dir() / "seeds" / "systems.csv")]
    return check_registration(
        args.system, args.base_url, args.model, args.api_key_env, args.image,
        args.display_name, seed, imported,
    )  # fmt: skip


def check_register_llm(args: argparse.Namespace, warehouse: Path) -> None:  # noqa: ARG001
    """Refuse a bad registration before the writer lock is taken (no warehouse yet: nothing
    imported; with one, the command checks again against its imports)."""
    _checked(args, set())


def cmd_register_llm(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform.warehouse import connect, transaction
    from tsrate.systems.registered import imported_ids, register

    warehouse = warehouse_path()
    imported: set[str] = set()
    if warehouse.exists():  # under the writer lock (main)
        with connect(warehouse, read_only=True) as con:
            imported = imported_ids(con)
    registration = _checked(args, imported)  # refused: nothing written, no file made
    with connect(warehouse) as con, transaction(con):
        previous = register(con, registration)
    r = registration
    key = f"key from ${r.api_key_env}" if r.api_key_env else "no key"
    what = f"model {r.model} at {r.base_url} ({key}; {r.modality} prompt)"
    if previous is None:
        print(f"registered language model {r.system_id!r} ({r.display_name}): {what}")
    elif previous == r:
        print(f"{r.system_id!r} was registered exactly so already: {what}; nothing changed")
    else:
        print(
            f"re-registered {r.system_id!r} ({r.display_name}): was model {previous.model} at "
            f"{previous.base_url}, now {what}; the next run forecasts it anew (the endpoint "
            "and model are part of its stored forecasts' key); earlier forecasts stay stored"
        )
    if r.api_key_env and not os.environ.get(r.api_key_env):
        print(f"note: {r.api_key_env} is not set here; set it to the key before `tsrate run`")
    print(f"rate it: tsrate run --systems naive,{r.system_id}  (`tsrate systems` lists it)")
    return 0
