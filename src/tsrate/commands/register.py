"""The body of ``tsrate register-llm``: a language model behind an OpenAI-compatible endpoint,
rated under its own system id (:mod:`tsrate.systems.registered`; its options are in
:mod:`tsrate.commands.register_parsers`)."""

from __future__ import annotations

import argparse
import os

from tsrate.systems.registered import Registration, check_registration


def _checked(
    args: argparse.Namespace, imported: set[str] = frozenset(), registered: set[str] = frozenset()
) -> Registration:
    from tsrate.config import project_dir
    from tsrate.robustness.study_inputs import read_seed

    seed = [row["system_id"] for row in read_seed(project_dir() / "seeds" / "systems.csv")]
    return check_registration(
        args.system, args.base_url, args.model, args.api_key_env, args.image,
        args.display_name, seed, imported, registered,
    )  # fmt: skip


def check_register_llm(args: argparse.Namespace) -> None:
    """Refuse a bad registration before the writer lock is taken, whether or not a warehouse
    exists (a bad id or URL is named even while another process writes, and a refused call
    leaves nothing in the lock file): every check but those against the warehouse's
    imported and registered ids, which the command makes under the lock."""
    _checked(args)


def reregistered(previous: Registration, r: Registration, what: str) -> str:
    """What re-registering ``previous`` as ``r`` changed: a new endpoint, model or prompt
    is forecast anew (they are in the stored forecasts' key); a new display name or key
    variable is not, its stored forecasts are reused."""
    if (previous.base_url, previous.model, previous.modality) != (r.base_url, r.model, r.modality):
        return (
            f"re-registered {r.system_id!r} ({r.display_name}): was model {previous.model} at "
            f"{previous.base_url} ({previous.modality} prompt), now {what}; the next run "
            "forecasts it anew (the endpoint, model and prompt are part of its stored "
            "forecasts' key); earlier forecasts stay stored"
        )
    changed = []
    if previous.display_name != r.display_name:
        changed.append(f"display name {previous.display_name!r} -> {r.display_name!r}")
    if previous.api_key_env != r.api_key_env:
        was, now = previous.api_key_env or "no key", r.api_key_env or "no key"
        changed.append(f"key variable {was} -> {now}")
    return (
        f"re-registered {r.system_id!r}: {', '.join(changed)}; still {what}, so its stored "
        "forecasts are reused (only the endpoint, model and prompt are in their key)"
    )


def cmd_register_llm(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.platform.warehouse import connect, transaction
    from tsrate.systems.registered import imported_ids, register, registrations

    warehouse = warehouse_path()
    imported: set[str] = set()
    registered: set[str] = set()
    if warehouse.exists():  # under the writer lock (main)
        with connect(warehouse, read_only=True) as con:
            imported = imported_ids(con)
            registered = {r.system_id for r in registrations(con)}
    registration = _checked(args, imported, registered)  # refused: nothing written
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
        print(reregistered(previous, r, what))
    if r.api_key_env and not os.environ.get(r.api_key_env):
        print(f"note: {r.api_key_env} is not set here; set it to the key before `tsrate run`")
    print(f"rate it: tsrate run --systems naive,{r.system_id}  (`tsrate systems` lists it)")
    return 0
