"""Systems registered by an import: their metadata (the systems seed's columns), its
checks, and the append-only ``raw.imported_systems`` that stores them.

``tsrate import-predictions FILE --system NAME --metadata ...`` registers a system that is not
a row of the systems seed: the seed's columns (:data:`METADATA_KEYS`) from a YAML/JSON file
or ``key=value`` pairs (:func:`read_metadata`), checked by :func:`system_metadata`, stored by
:func:`register_system` (the latest registration of an id wins). The import itself is
:mod:`tsrate.robustness.blackbox.predictions`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.perturbations import IMAGE_PERTURBATIONS, PERTURBATIONS
from tsrate.platform.raw_schema import IMPORTED_SYSTEMS_DDL
from tsrate.platform.warehouse import transaction
from tsrate.systems.training_statement import training_corpus_problem, training_prefix

#: The columns of the systems seed a registration may set (``system_id`` is ``--system``;
#: ``implementation`` is always empty: tsrate rates the imported predictions;
#: ``training_corpus`` and ``training_cutoff`` say what the model was trained on, up to which
#: day: :data:`TRAINING_KEYS`).
METADATA_KEYS = (
    "display_name",
    "paper_symbol",
    "modality",
    "family",
    "purpose",
    "architecture",
    "is_foundation_model",
    "accepted_perturbations",
    "description",
    "base_model",
    "training_corpus",
    "training_cutoff",
)
#: What the imported model was trained on (the systems seed's columns of the same names):
#: stg_systems reads them, and window_leakage judges a window whose first target day is
#: after ``training_cutoff`` (the last day in the training data) 'after cutoff'.
TRAINING_KEYS = ("training_corpus", "training_cutoff")
#: A training cutoff as it is written: an ISO date.
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MODALITIES = ("numeric", "numeric+image")
PURPOSES = ("time-series", "general-purpose")
ARCHITECTURES = ("encoder-only", "decoder-only", "encoder-decoder", "statistical", "none")
#: A registered system id: 1 to 64 lower-case letters, digits, '_', '.' or '-'.
SYSTEM_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
#: Longest text of a metadata value (``description`` and ``training_corpus``: 2000).
MAX_METADATA_TEXT = 200
#: The description an import without one gets: "<this prefix><file name>."
DEFAULT_DESCRIPTION = "Predictions imported from "


def check_known_system(
    system_id: str,
    seed: pd.DataFrame,
    study: Study,
    registered: pd.DataFrame | None = None,
) -> tuple[str, ...]:
    """The accepted perturbations of a known system (seed row, else registration) that an
    import may fill: not one tsrate forecasts itself (:func:`check_not_forecast_here`)."""
    registered = empty_registrations() if registered is None else registered
    known = seed if system_id in set(seed["system_id"]) else registered
    if system_id not in set(known["system_id"]):
        if not SYSTEM_ID.match(system_id):  # no registration or seed row could name it
            raise TsrateError(malformed_system_id(system_id))
        names = sorted(set(seed["system_id"]) | set(registered["system_id"]))
        near = difflib.get_close_matches(system_id, names, n=1)
        guess = f" (did you mean {near[0]!r}?)" if near else ""
        raise TsrateError(
            f"unknown system {system_id!r}{guess}: register it with this import, e.g. "
            f"`--metadata display_name='My model' modality=numeric family=foundation` "
            "(or a YAML/JSON file of the systems seed's columns), or add a row for it to "
            "seeds/systems.csv with an empty implementation column, e.g. "
            f"`{system_id},My model,,numeric,foundation,time-series,decoder-only,true,"
            "P0 P1 P2 P3,,Predictions imported from files.,,,,,` (dbt rates only systems it knows)"
        )
    check_not_forecast_here(system_id, seed, study)
    row = known[known["system_id"] == system_id].iloc[0]
    return tuple(str(row.get("accepted_perturbations", "") or "").split())


def malformed_system_id(system_id: str) -> str:
    """Why ``system_id`` cannot name an imported system (it does not match :data:`SYSTEM_ID`)."""
    shown = system_id if len(system_id) <= 80 else system_id[:77] + "..."
    return (
        f"system id {shown!r} ({len(system_id)} characters): use 1 to 64 lower-case "
        "letters, digits, '_', '.' or '-', starting with a letter or digit (e.g. my_model)"
    )


def check_not_forecast_here(system_id: str, seed: pd.DataFrame, study: Study) -> None:
    """Refuse an id whose forecasts tsrate makes itself: one of the study's systems, or a
    seed row with an ``implementation``. With or without ``--no-baselines``: the marts rate
    a study's newest run per system, so imported rows under such an id would silently
    replace the system's own forecasts, or be replaced by (and mixed with) its next run."""
    if system_id in study.systems:
        raise TsrateError(
            f"system {system_id!r} is one of the study's own systems {list(study.systems)}, "
            "which its runs forecast themselves (with or without --no-baselines), so imported "
            "rows would replace or mix with them; import under another system id, e.g. "
            f"--system {system_id}_imported --metadata display_name='...'"
        )
    if "implementation" not in seed.columns:
        return
    row = seed[seed["system_id"] == system_id]
    implementation = "" if row.empty else row.iloc[0]["implementation"]
    if isinstance(implementation, str) and implementation.strip():
        raise TsrateError(
            f"system {system_id!r} is a system tsrate forecasts itself (seeds/systems.csv "
            f"implementation {implementation.strip()}), so imported rows would replace or mix "
            "with its own forecasts in every study that runs it; import under another system "
            f"id, e.g. --system {system_id}_imported --metadata display_name='...'"
        )


def check_new_system(system_id: str, seed: pd.DataFrame, study: Study) -> None:
    """A system id this import may register: not the study's own nor one tsrate forecasts
    (checked first: their refusal names the fix, another id; "import without --metadata"
    would only be refused next), not a seed row, well formed."""
    check_not_forecast_here(system_id, seed, study)
    if system_id in set(seed["system_id"]):
        raise TsrateError(
            f"system {system_id!r} is a row of seeds/systems.csv: its metadata comes from "
            "there; import without --metadata, or register the predictions under a new id"
        )
    if not SYSTEM_ID.match(system_id):
        raise TsrateError(malformed_system_id(system_id))


def read_metadata(items: Sequence[str]) -> dict[str, Any]:
    """``--metadata`` arguments as one mapping: each item is a ``.yaml``/``.yml``/``.json``
    file holding a mapping, or a ``key=value`` pair; later items override earlier ones."""
    merged: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if sep and "/" not in key and not Path(item).is_file():
            key = key.strip()
            if not key:
                raise TsrateError(f"--metadata {item!r}: a key=value pair needs a key")
            merged[key] = value.strip()
            continue
        merged.update(_metadata_file(Path(item)))
    return merged


def _metadata_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise TsrateError(
            f"--metadata {str(path)!r}: not a file and not a key=value pair "
            "(e.g. modality=numeric, or a .yaml/.json file)"
        )
    suffix = path.suffix.lower()
    if suffix not in {".yaml", ".yml", ".json"}:
        raise TsrateError(f"metadata file {path}: use .yaml, .yml or .json, not {suffix!r}")
    text = path.read_text(encoding="utf-8")
    try:
        if suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any json / yaml parse error
        kind = "JSON" if suffix == ".json" else "YAML"
        raise TsrateError(
            f"metadata file {path} is not valid {kind}: {_parse_problem(exc)}; write a "
            "mapping of the systems seed's columns, one `key: value` a line (YAML, e.g. "
            "display_name: My model) or a JSON object"
        ) from exc
    if not isinstance(data, dict):
        raise TsrateError(
            f"metadata file {path} must hold a mapping of the systems seed's columns "
            f"({', '.join(METADATA_KEYS)}), got {type(data).__name__}"
        )
    return {str(key): value for key, value in data.items()}


def _parse_problem(exc: BaseException) -> str:
    """A parser's complaint on one line, with where it stopped: PyYAML's message spans
    several lines (the context, the offending line, a caret) and names '<unicode string>'."""
    problem = getattr(exc, "problem", None)  # a yaml.MarkedYAMLError
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split()) or type(exc).__name__


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "1"}:
        return True
    if text in {"false", "no", "0"}:
        return False
    return None


def system_metadata(
    system_id: str,
    metadata: Mapping[str, Any],
    file_perturbations: Sequence[str] = (),
    file_name: str = "a file",
) -> dict[str, Any]:
    """The seed-style row of a system registered with ``metadata``, defaults filled in
    (``display_name`` = the id, ``modality`` numeric, ``family`` imported,
    ``accepted_perturbations`` = the file's perturbations, ``description`` "Predictions
    imported from <file>."; ``purpose``, ``architecture``, ``is_foundation_model``,
    ``paper_symbol``, ``base_model``, ``training_corpus``, ``training_cutoff`` empty).
    Raises :class:`TsrateError` listing every problem: unknown keys, values that are not
    text, a bad modality / purpose / architecture / is_foundation_model, a training_cutoff
    that is not a YYYY-MM-DD date or is after today, unknown perturbation ids, image
    perturbations (P4–P6) on a numeric system, and perturbations of the file it does not
    accept."""
    problems = []
    unknown = sorted(set(metadata) - set(METADATA_KEYS))
    if unknown:
        hint = ""
        if "system_id" in unknown:
            hint = " (the system id is --system)"
        elif "implementation" in unknown:
            hint = " (an imported system has none: tsrate rates its predictions)"
        problems.append(f"unknown key(s) {unknown}{hint}; allowed: {', '.join(METADATA_KEYS)}")
    values: dict[str, Any] = {}
    for key in METADATA_KEYS:
        value = metadata.get(key)
        if key == "accepted_perturbations" and isinstance(value, list | tuple):
            value = " ".join(str(v) for v in value)
        if isinstance(value, dict | list | tuple):
            problems.append(f"{key} must be a single value, got {value!r}")
            value = None
        if isinstance(value, str):
            value = value.strip()
            long_text = key in ("description", "training_corpus")
            longest = 10 * MAX_METADATA_TEXT if long_text else MAX_METADATA_TEXT
            if len(value) > longest:
                problems.append(f"{key} is {len(value)} characters long (at most {longest})")
            if not value.isprintable():
                problems.append(f"{key} {value[:40]!r} holds control characters")
        values[key] = None if value in (None, "") else value

    row: dict[str, Any] = {"system_id": system_id}
    for key in ("display_name", "paper_symbol", "family", "description", "base_model"):
        row[key] = None if values[key] is None else str(values[key])
    row["display_name"] = row["display_name"] or system_id
    row["family"] = row["family"] or "imported"
    row["description"] = row["description"] or f"{DEFAULT_DESCRIPTION}{file_name}."

    modality = str(values["modality"] or "numeric")
    if modality not in MODALITIES:
        problems.append(f"modality {modality!r} is not one of {', '.join(MODALITIES)}")
    row["modality"] = modality
    for key, allowed in (("purpose", PURPOSES), ("architecture", ARCHITECTURES)):
        value = values[key]
        if value is not None and str(value) not in allowed:
            problems.append(f"{key} {value!r} is not one of {', '.join(allowed)}")
        row[key] = None if value is None else str(value)
    foundation = values["is_foundation_model"]
    row["is_foundation_model"] = None if foundation is None else _as_bool(foundation)
    if foundation is not None and row["is_foundation_model"] is None:
        problems.append(f"is_foundation_model {foundation!r} is not true or false")

    given = values["accepted_perturbations"]
    accepted = str(given).replace(",", " ").split() if given is not None else []
    accepted = [p.upper() for p in accepted] or sorted(file_perturbations)
    unknown_ids = [p for p in accepted if p not in PERTURBATIONS]
    if unknown_ids:
        problems.append(
            f"accepted_perturbations: unknown perturbation id(s) {unknown_ids}; "
            f"known: {', '.join(PERTURBATIONS)}"
        )
    image_ids = [p for p in accepted if p in IMAGE_PERTURBATIONS]
    if image_ids and modality == "numeric":
        problems.append(
            f"accepted_perturbations {image_ids} perturb the image input, but modality is "
            "numeric: set modality=numeric+image or leave them out"
        )
    not_accepted = [p for p in file_perturbations if p not in accepted]
    if not_accepted:
        problems.append(
            f"the file has perturbation(s) {not_accepted} that accepted_perturbations "
            f"({' '.join(accepted)}) leaves out"
        )
    row["accepted_perturbations"] = " ".join(sorted(set(accepted), key=accepted.index))
    corpus = values["training_corpus"]
    row["training_corpus"] = None if corpus is None else str(corpus)
    malformed = training_corpus_problem(row["training_corpus"])  # as the seed's is read
    if malformed:
        problems.append(malformed)
    elif training_prefix(row["training_corpus"]) == "exact":  # the seed's own systems only
        problems.append(
            "training_corpus 'exact: ...' means a checkpoint tsrate trained and registered, "
            "which an imported system has not (its windows would all read unknown): state "
            "its corpus in words, or 'none: <why>' if it trains on nothing"
        )
    row["training_cutoff"] = training_cutoff(values["training_cutoff"], problems)
    if problems:
        raise TsrateError(
            f"metadata of system {system_id!r} rejected, nothing was stored: " + "; ".join(problems)
        )
    return row


def training_cutoff(value: Any, problems: list[str]) -> dt.date | None:
    """``value`` (a ``YYYY-MM-DD`` text, or the date YAML reads from one) as a date, or None
    when not given; a value that is not a real ISO date, or a day after today (in UTC, as
    the runs' times are), is added to ``problems`` (the last day in a model's training data
    cannot be in the future)."""
    if value is None:
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        day = value
    else:
        text = str(value).strip()
        try:
            day = dt.date.fromisoformat(text) if ISO_DATE.match(text) else None
        except ValueError:
            day = None
        if day is None:
            problems.append(
                f"training_cutoff {text[:40]!r} is not a date: write the last day in the "
                "model's training data as YYYY-MM-DD (e.g. 2024-08-31)"
            )
            return None
    today = dt.datetime.now(dt.UTC).date()  # UTC: the day the runs' ids and times use
    if day > today:
        problems.append(
            f"training_cutoff {day.isoformat()} is after today ({today.isoformat()}, UTC): "
            "give the last day in the model's training data, YYYY-MM-DD, today or earlier"
        )
        return None
    return day


def _stored(value: Any) -> Any:
    """A value of :func:`registered_systems` as :func:`system_metadata` gives it: None for a
    null, a date for a stored ``training_cutoff``."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    return value


def empty_registrations() -> pd.DataFrame:
    return pd.DataFrame(columns=["system_id", *METADATA_KEYS])


def registered_systems(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The latest registration of every system in ``raw.imported_systems`` (none when the
    table does not exist yet). A table made before imports stated their training data
    (no ``training_corpus`` / ``training_cutoff`` column, read-only) reads them null."""
    exists = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'raw' and table_name = 'imported_systems'"
    ).fetchone()[0]
    if not exists:
        return empty_registrations()
    latest = con.execute(
        "select * exclude (source, registered_at) from raw.imported_systems "
        "qualify row_number() over (partition by system_id order by registered_at desc) = 1 "
        "order by system_id"
    ).df()
    for key in METADATA_KEYS:
        if key not in latest.columns:
            latest[key] = None
    latest["training_cutoff"] = [_stored(day) for day in latest["training_cutoff"]]
    return latest[["system_id", *METADATA_KEYS]]


def register_system(con: duckdb.DuckDBPyConnection, row: Mapping[str, Any], source: str) -> bool:
    """Append ``row`` (from :func:`system_metadata`) to ``raw.imported_systems`` unless the
    system's latest registration already says exactly that; True when a row was written
    (in a transaction of its own, or the caller's: an import records its registration, the
    import and its run's status together)."""
    con.execute(IMPORTED_SYSTEMS_DDL)
    latest = registered_systems(con)
    latest = latest[latest["system_id"] == row["system_id"]]
    if not latest.empty:
        stored = latest.iloc[0].to_dict()
        same = all(_stored(stored[key]) == row[key] for key in METADATA_KEYS)
        if same:
            return False
    columns = ["system_id", *METADATA_KEYS, "source", "registered_at"]
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    values = [row[key] for key in ["system_id", *METADATA_KEYS]] + [source, now]
    with transaction(con):
        con.execute(
            f"insert into raw.imported_systems ({', '.join(columns)}) "
            f"values ({', '.join('?' for _ in columns)})",
            values,
        )
    return True


def dropped_fields(
    earlier: Mapping[str, Any] | None, given: Mapping[str, Any], row: Mapping[str, Any]
) -> list[str]:
    """The fields of the ``earlier`` registration (its row in :func:`registered_systems`)
    that the new registration ``row`` drops: set before, not in this import's ``--metadata``
    (``given``), and now their default (the newest registration wins, whole). A default
    description of the earlier file ("Predictions imported from <file>.") is not counted."""
    if earlier is None:
        return []
    dropped = []
    for key in METADATA_KEYS:
        before = _stored(earlier.get(key))
        if before is None or key in given:
            continue
        if key == "description" and str(before).startswith(DEFAULT_DESCRIPTION):
            continue
        if before != row.get(key):
            dropped.append(f"{key}={before}")
    return dropped


def dropped_note(system_id: str, dropped: Sequence[str]) -> str:
    """One line naming the fields a new registration of ``system_id`` dropped, and the fix."""
    return (
        f"the new registration of {system_id!r} replaces the earlier one whole (the newest "
        f"registration wins), so it drops {', '.join(dropped)} set before (hint: give them "
        "again in --metadata to keep them)"
    )
