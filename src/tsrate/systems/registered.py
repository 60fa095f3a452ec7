"""Language models registered under their own system id (``tsrate register-llm``).

A registration names an OpenAI-compatible endpoint (its base URL, ending in ``/v1``), the
model it serves, the *name* of the environment variable holding its key (never the key)
and the prompt (numeric, or numeric+image with the window's line plot). It is stored in
``raw.registered_llms`` (append-only: the latest registration of an id wins, so
registering an id again changes its endpoint) and needs no edit of the systems seed.

A registered system forecasts through the same code as the seed's endpoint systems
(:mod:`tsrate.systems.llm` and its prompts and parsing modules: reply cache, failures, the endpoint and model
in the stored partitions' key): :func:`seed_row` gives it a systems-seed row whose
implementation is ``tsrate.systems.llm:<id>``, and :func:`profile` its endpoint, model and
key variable (overridden, as for every LLM system, by ``TSRATE_<ID>_BASE_URL`` and friends
or the dbt var ``llm_systems.<id>``).

The registrations reach the code that builds systems through the environment variable
:data:`ENV` (JSON), set by :func:`exported` for the duration of a run (the forecast workers
take the run's environment) and by the commands that list systems: the systems registry
(:func:`tsrate.systems.registry.load_systems_seed`) adds them to the seed's rows. The marts
see them through ``stg_systems`` (origin ``registered``).

Imports only the standard library (DuckDB when reading the warehouse): the study check
reads the registered ids before anything heavy is imported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tsrate import TsrateError

#: The environment variable carrying the registrations (JSON) to the code that builds systems.
ENV = "TSRATE_REGISTERED_LLMS"
#: A registered system id: 1 to 64 lower-case letters, digits, '_', '.' or '-'.
SYSTEM_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
#: The name of an environment variable (the key's variable; never the key itself).
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODALITIES = {False: "numeric", True: "numeric+image"}
PERTURBATIONS = {"numeric": "P0 P1 P2 P3", "numeric+image": "P0 P1 P2 P3 P4 P5 P6"}
MAX_TEXT = 200


@dataclasses.dataclass(frozen=True)
class Registration:
    system_id: str
    display_name: str
    base_url: str
    model: str
    api_key_env: str  # "" : the endpoint needs no key
    modality: str  # numeric or numeric+image

    @property
    def implementation(self) -> str:
        return f"tsrate.systems.llm:{self.system_id}"


def env_prefix(system_id: str) -> str:
    """The prefix of a language model's settings variables (``TSRATE_<ID>_BASE_URL`` and
    friends): ids that differ only in '.', '-' or '_' share it."""
    return "TSRATE_" + re.sub(r"[^A-Za-z0-9]", "_", system_id).upper() + "_"


def _prefix_clash(system_id: str, seed_ids: set[str], registered_ids: set[str]) -> str:
    """Why ``system_id`` would read another system's settings variables ('' if it would
    not): its prefix is that of a seed id, or of another registered id."""
    prefix = env_prefix(system_id)
    for other in sorted(seed_ids):
        if env_prefix(other) == prefix:
            return (
                f"{system_id!r} would read the settings of the seed system {other!r} "
                f"({prefix}BASE_URL and friends: ids differing only in '.', '-' or '_' share "
                f"them); register under another id (e.g. my_{other})"
            )
    for other in sorted(registered_ids - {system_id}):
        if env_prefix(other) == prefix:
            return (
                f"{system_id!r} would share the settings of the registered system {other!r} "
                f"({prefix}BASE_URL and friends: ids differing only in '.', '-' or '_' share "
                f"them); register {other!r} again to change it, or pick an id differing in "
                "a letter or digit"
            )
    return ""


def _text(name: str, value: str | None, problems: list[str]) -> str:
    text = (value or "").strip()
    if len(text) > MAX_TEXT:
        problems.append(f"{name} is {len(text)} characters long (at most {MAX_TEXT})")
    if not text.isprintable():
        problems.append(f"{name} {text[:40]!r} holds control characters")
    return text


def check_registration(
    system_id: str,
    base_url: str,
    model: str,
    api_key_env: str | None = None,
    image: bool = False,
    display_name: str | None = None,
    seed_ids: Iterable[str] = (),
    imported_ids: Iterable[str] = (),
    registered_ids: Iterable[str] = (),
) -> Registration:
    """The registration these arguments describe, or a one-line :class:`TsrateError` naming
    every problem with a hint: an id of the systems seed or of an imported system, an id
    that is not 1-64 lower-case letters, digits, '_', '.' or '-', a base URL that is not
    http(s) or does not end in /v1, no model, a key variable that is not a variable's name;
    an id whose settings variables (:func:`env_prefix`) are those of a seed id or of another
    of ``registered_ids`` (the same id registered again is no clash)."""
    problems: list[str] = []
    seeds = set(seed_ids)
    if system_id in seeds:
        problems.append(
            f"{system_id!r} is a system of seeds/systems.csv; register under a new id "
            f"(e.g. my_{system_id})"
        )
    elif system_id in set(imported_ids):
        problems.append(
            f"{system_id!r} is an imported system (its forecasts come from a file); register "
            f"under a new id (e.g. {system_id}_llm)"
        )
    elif not SYSTEM_ID.match(system_id):
        shown = system_id if len(system_id) <= 80 else system_id[:77] + "..."
        problems.append(
            f"system id {shown!r}: use 1 to 64 lower-case letters, digits, '_', '.' or '-', "
            "starting with a letter or digit (e.g. my_llm)"
        )
    elif clash := _prefix_clash(system_id, seeds, set(registered_ids)):
        problems.append(clash)
    url = _text("--base-url", base_url, problems).rstrip("/")
    if not re.match(r"^https?://[^/\s]+", url) or not url.endswith("/v1"):
        problems.append(
            f"base URL {base_url!r} must be http(s)://HOST[:PORT]/.../v1 (an OpenAI-compatible "
            "server's root, e.g. http://localhost:8000/v1 for vLLM, :11434/v1 for Ollama)"
        )
    name = _text("--model", model, problems)
    if not name:
        problems.append("--model is empty: give the model name the server serves")
    key = (api_key_env or "").strip()
    if key and not ENV_NAME.match(key):
        problems.append(
            "--api-key-env is not the NAME of an environment variable (e.g. MY_LLM_KEY; its "
            "value is not shown, in case it is the key): put the key in a variable, name it here"
        )
    shown = _text("--display-name", display_name, problems) or system_id
    if problems:
        raise TsrateError(
            f"language model {system_id!r} not registered, nothing was stored: "
            + "; ".join(problems)
        )
    return Registration(system_id, shown, url, name, key, MODALITIES[bool(image)])


def _has_table(con: Any, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'raw' and table_name = ?",
            [table],
        ).fetchone()[0]
    )


def registrations(con: Any) -> list[Registration]:
    """The latest registration of every registered id, by id (none before the first).
    Reads only (a read-only connection will do)."""
    if not _has_table(con, "registered_llms"):
        return []
    rows = con.execute(
        "select system_id, display_name, base_url, model, coalesce(api_key_env, ''), modality "
        "from raw.registered_llms "
        "qualify row_number() over (partition by system_id order by registered_at desc) = 1 "
        "order by system_id"
    ).fetchall()
    return [Registration(*row) for row in rows]


def imported_ids(con: Any) -> set[str]:
    """The ids of systems imported from files (registered with metadata, or imported into
    a study). Reads only."""
    ids: set[str] = set()
    for table in ("imported_systems", "study_imports"):
        if _has_table(con, table):
            ids |= {r[0] for r in con.execute(f"select system_id from raw.{table}").fetchall()}
    return ids


def register(con: Any, registration: Registration) -> Registration | None:
    """Append ``registration`` to ``raw.registered_llms`` unless it is the id's latest one
    already; the id's previous registration (None for a new id). The caller checks it
    first (:func:`check_registration`)."""
    from tsrate.platform.raw_schema import REGISTERED_LLMS_DDL

    con.execute(REGISTERED_LLMS_DDL)
    previous = {r.system_id: r for r in registrations(con)}.get(registration.system_id)
    if previous == registration:
        return previous  # the same registration again: nothing to write
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    r = registration
    con.execute(
        "insert into raw.registered_llms values (?, ?, ?, ?, ?, ?, ?)",
        [r.system_id, r.display_name, r.base_url, r.model, r.api_key_env or None, r.modality, now],
    )
    return previous


def read_registrations(warehouse: str | os.PathLike) -> list[Registration] | None:
    """The registrations of the warehouse file, opened read-only; none when it does not
    exist; ``None`` when they cannot be read because another process writes it (DuckDB's
    lock): the caller cannot tell a registered id from an unknown one then."""
    if not Path(warehouse).exists():
        return []
    import duckdb

    try:
        con = duckdb.connect(str(warehouse), read_only=True)
    except duckdb.Error:
        return None
    try:
        return registrations(con)
    finally:
        con.close()


def encode(items: Iterable[Registration]) -> str:
    return json.dumps([dataclasses.asdict(r) for r in items], sort_keys=True)


def from_environment() -> dict[str, Registration]:
    """The registrations :data:`ENV` carries, by id (none when unset)."""
    raw = os.environ.get(ENV, "")
    if not raw:
        return {}
    try:
        return {row["system_id"]: Registration(**row) for row in json.loads(raw)}
    except (ValueError, TypeError, KeyError) as exc:
        raise TsrateError(
            f"environment variable {ENV} is not a list of registrations ({exc}); unset it: "
            "tsrate sets it itself from raw.registered_llms"
        ) from exc


@contextlib.contextmanager
def exported(items: Iterable[Registration]) -> Iterator[None]:
    """:data:`ENV` set to ``items`` for the block (children started in it, and the forecast
    workers, which take the run's environment, see them too); restored after."""
    saved = os.environ.get(ENV)
    os.environ[ENV] = encode(items)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = saved


def profile(system_id: str) -> dict[str, str] | None:
    """The endpoint, model and key variable of a registered id (None if not registered)."""
    found = from_environment().get(system_id)
    if found is None:
        return None
    return {"base_url": found.base_url, "model": found.model, "api_key_env": found.api_key_env}


def seed_row(r: Registration) -> dict[str, str]:
    """The systems-seed row (every column, as text) of a registered language model."""
    image = "; its line plot as a PNG image part (P4-P6 perturb the image)" * (
        r.modality == "numeric+image"
    )
    return {
        "system_id": r.system_id,
        "display_name": r.display_name,
        "paper_symbol": "",
        "modality": r.modality,
        "family": "foundation",
        "purpose": "general-purpose",
        "architecture": "",
        "is_foundation_model": "",
        "accepted_perturbations": PERTURBATIONS[r.modality],
        "implementation": r.implementation,
        "description": (
            f"Language model {r.model} at {r.base_url}, registered by `tsrate register-llm`"
            f"{f' (key in {r.api_key_env})' if r.api_key_env else ''}. Context sent as "
            f"comma-separated text{image}; the reply's numbers are the forecast."
        ),
        "base_model": "",
        "paper_architecture": "",
        "training_corpus": "",
        "training_cutoff": "",
        "training_reason": "the model is whichever one the registered endpoint serves",
    }
