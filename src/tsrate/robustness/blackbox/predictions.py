"""Rate any model black-box: import its predictions from a file as a run of the warehouse.

The file (CSV with a header, or Parquet) holds one row per forecast::

    ticker,window_end_date,perturbation_id,horizon_step,forecast
    AAPL,2022-10-14,P0,1,138.2

``window_end_date`` names a window of the study (the date of its last context value, the
forecast origin); ``horizon_step`` runs 1..horizon (step 1 is the next trading day). For each
(ticker, perturbation) the file covers, every window of the study × every step must be
there; a file may cover a subset of the study's tickers and perturbations. The inputs the
model saw must be the study's (same context length, perturbation spacing and phase):
``tsrate`` cannot check that, but the perturbed inputs of the run (``raw.perturbed_inputs``)
show what they should have been.

The system is a row of the systems seed (``seeds/systems.csv``, with an empty
``implementation`` for a model tsrate cannot run), or is **registered** by the import itself
with ``metadata`` (``tsrate import-predictions FILE --system NAME --metadata ...``): the
seed's columns (:data:`METADATA_KEYS`) from a YAML/JSON file or ``key=value`` pairs
(:func:`read_metadata`), checked by :func:`system_metadata` (unknown keys, a bad modality,
purpose or architecture, unknown perturbation ids, image perturbations on a numeric system,
perturbations of the file the system does not accept: every problem listed). A registration
is a row of ``raw.imported_systems`` (append-only; the latest registration of an id wins);
dbt's ``stg_systems`` unions it with the seed and every mart reads system metadata from
there, so the system is rated and labelled like a seed row. Once registered, later imports
of the same id need no ``metadata``; a seed id cannot be registered. Its
``accepted_perturbations`` must list the perturbations in the file (default: exactly those).

The whole file and the metadata are validated before anything is written: a rejected
import stores nothing (no registration, no run) and the error names the file, the rows and
the problem. The registration is written last, after the run's forecasts, so an import that
fails later (say, a study system that does not exist) leaves no registration behind. Rules
beyond the study's grid: column names unique; Parquet columns typed (``forecast`` and
``horizon_step`` numeric, not boolean; ``window_end_date`` a date or text; ``ticker`` and
``perturbation_id`` text); tickers match :data:`tsrate.robustness.sources.TICKER_PATTERN`; forecasts
finite with ``|forecast| <=`` :data:`MAX_ABS_FORECAST` (1e9); one time zone per date column;
system ids match :data:`SYSTEM_ID` (at most 64 characters); metadata text values at most
200 characters (``description`` 2000), without control characters. A valid file becomes a new run: by
default the study's own systems (``study.systems``, e.g. the baselines) are forecast into
the same run exactly as ``tsrate run`` does (finished partitions are reused, missing ones
computed), and the imported forecasts are added beside them, one partition per ticker ×
perturbation. So one ``dbt build`` of that run rates the imported model against the
baselines. A partition's ``input_key`` hashes the study's window settings, the ticker's clean
prices and the imported forecasts themselves, so importing the same predictions again
reuses the stored partitions (no new forecast rows).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.perturbations import IMAGE_PERTURBATIONS, PERTURBATIONS
from tsrate.platform.raw_schema import IMPORTED_SYSTEMS_DDL, create_raw_tables
from tsrate.platform.warehouse import transaction
from tsrate.robustness.companies import study_companies
from tsrate.robustness.forecast.execute import (
    Partition,
    RunSummary,
    TickerSeries,
    finish_run,
    input_key,
    load_series,
    new_run_id,
    run_forecasts,
    start_run,
    store_partition,
)
from tsrate.robustness.sources import (
    MAX_CLOSE,
    bad_ticker,
    header_problems,
    mixed_zone_problem,
    parquet_type_problems,
    ticker_rule,
)
from tsrate.systems.registry import load_systems_seed

IMPORT_COLUMNS = ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]
#: Rows quoted per problem in an error message.
MAX_EXAMPLES = 5

#: The columns of the systems seed a registration may set (``system_id`` is ``--system``;
#: ``implementation`` is always empty: tsrate rates the imported predictions).
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
)
MODALITIES = ("numeric", "numeric+image")
PURPOSES = ("time-series", "general-purpose")
ARCHITECTURES = ("encoder-only", "decoder-only", "encoder-decoder", "statistical", "none")
#: A registered system id: 1 to 64 lower-case letters, digits, '_', '.' or '-'.
SYSTEM_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
#: Largest forecast size accepted: ten times the largest plausible close
#: (:data:`tsrate.robustness.sources.MAX_CLOSE`); larger values are a unit or overflow error, and
#: would overflow the squared errors of the scores.
MAX_ABS_FORECAST = 10 * MAX_CLOSE
#: Longest text of a metadata value (``description``: 2000).
MAX_METADATA_TEXT = 200


class ImportValidationError(TsrateError):
    """A prediction file that cannot be imported, with every problem found listed."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = list(problems)
        # one line (the CLI prints one line per error; Prefect logs repeat it)
        super().__init__(f"{source}: rejected, nothing was stored: {'; '.join(self.problems)}")


@dataclasses.dataclass
class ImportSummary(RunSummary):
    """A :class:`RunSummary` of the imported partitions, plus where they came from.

    ``partitions``, ``reused``, ``computed`` and ``forecast_rows`` count the imported
    system's partitions only; ``baselines`` is the summary of the study's own systems
    forecast into the same run (None when ``baselines=False``).
    """

    system_id: str = ""
    source: str = ""
    file_sha256: str = ""
    baselines: RunSummary | None = None
    study_id: str = ""


def import_forecasts(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    system_id: str,
    study: Study,
    run_id: str | None = None,
    *,
    baselines: bool = True,
    systems_seed: pd.DataFrame | None = None,
    companies: pd.DataFrame | None = None,
    workers: int | None = None,
    progress=None,  # noqa: ANN001 - Callable[[str], None], as run_forecasts
    metadata: Mapping[str, Any] | None = None,
) -> ImportSummary:
    """Validate the prediction file at ``path`` and store it as a new run of ``study``.

    ``baselines``: also forecast the study's own systems into the run (reusing finished
    partitions), so the run rates the imported model beside them. ``systems_seed``: the
    systems seed to check ``system_id`` against (default ``seeds/systems.csv``).
    ``metadata``: register ``system_id`` (not a seed row) with these seed-style columns
    (:func:`system_metadata`); without it the system must be in the seed or registered by
    an earlier import. Marks the run ``forecasted``; score it with
    ``tsrate.platform.dbt_runner.build(run_id=summary.run_id)``.
    """
    create_raw_tables(con)  # an import is a writing edge
    started = time.perf_counter()
    say = progress or (lambda message: None)
    path = Path(path)
    source = str(path)
    seed = load_systems_seed() if systems_seed is None else systems_seed
    registered = registered_systems(con)
    if metadata is None:
        accepted = _check_system(system_id, seed, study, baselines, registered)
    else:
        _check_new_system(system_id, seed, study, baselines)
        # bad metadata fails before the file is read; accepted_perturbations defaults later
        declared = system_metadata(system_id, metadata)["accepted_perturbations"]
        has_accepted = metadata.get("accepted_perturbations") not in (None, "", [])
        accepted = tuple(declared.split()) if has_accepted else ()
    run_id = run_id or new_run_id()
    if con.execute("select count(*) from raw.runs where run_id = ?", [run_id]).fetchone()[0]:
        raise TsrateError(f"run {run_id!r} already exists; an import makes a new run")
    series = load_series(con, study)
    frame, file_sha256 = read_prediction_file(path)
    grids = validate_predictions(frame, source, study, series, system_id, accepted)
    registration = None
    if metadata is not None:  # checked now, registered last: a failed import registers nothing
        in_file = sorted({perturbation for _, perturbation in grids})
        registration = system_metadata(system_id, metadata, in_file, path.name)

    summary = ImportSummary(run_id, system_id=system_id, source=source, file_sha256=file_sha256)
    if baselines and study.systems:
        summary.baselines = run_forecasts(
            con,
            study,
            study_companies(con) if companies is None else companies,
            run_id=run_id,
            workers=workers,
            progress=say,
        )
    else:
        no_systems = dataclasses.replace(study, systems=())
        start_run(
            con,
            no_systems,
            series,
            run_id,
            None,
            study_companies(con) if companies is None else companies,
        )
    con.execute(
        "update raw.runs set systems = list_append(systems, $system) where run_id = $run_id",
        {"system": system_id, "run_id": run_id},
    )

    finished = {
        row[0]: row[1]
        for row in con.execute(
            "select input_key, arg_max(partition_key, finished_at) "
            "from raw.forecast_partitions group by input_key"
        ).fetchall()
    }
    for (ticker, perturbation_id), forecasts_array in sorted(grids.items()):
        ticker_series = series[ticker]
        key = imported_input_key(system_id, study, ticker_series, perturbation_id, forecasts_array)
        summary.partitions += 1
        if key in finished:
            with transaction(con):
                con.execute(
                    "insert into raw.run_partitions values (?, ?, true) on conflict do nothing",
                    [run_id, finished[key]],
                )
            summary.reused += 1
            continue
        summary.forecast_rows += store_partition(
            con,
            run_id,
            Partition(system_id, ticker, perturbation_id, key),
            key,
            ticker_series.window_end_dates,
            forecasts_array,
            0.0,
        )
        summary.computed += 1
    if registration is not None and register_system(con, registration, source):
        say(
            f"registered system {system_id!r} ({registration['display_name']}) "
            "in raw.imported_systems"
        )
    from tsrate.robustness.studies import record_import

    summary.study_id = record_import(con, run_id, system_id, source, file_sha256)
    message = f"imported {system_id} from {path.name} (sha256 {file_sha256[:16]})"
    finish_run(con, run_id, "forecasted", message)
    summary.seconds = time.perf_counter() - started
    say(
        f"run {run_id}: {message}: {summary.partitions} partitions "
        f"({summary.computed} stored, {summary.reused} reused), {summary.forecast_rows} rows"
    )
    return summary


def imported_input_key(
    system_id: str,
    study: Study,
    series: TickerSeries,
    perturbation_id: str,
    forecasts_array: np.ndarray,
) -> str:
    """The pipeline's input key with the forecasts' own hash as the system's fingerprint."""
    content = hashlib.sha256(np.ascontiguousarray(forecasts_array, dtype=float).tobytes())
    fingerprint = f"imported;forecasts-sha256={content.hexdigest()}"
    return input_key(system_id, fingerprint, study, series, perturbation_id)


def _check_system(
    system_id: str,
    seed: pd.DataFrame,
    study: Study,
    baselines: bool,
    registered: pd.DataFrame | None = None,
) -> tuple[str, ...]:
    """The accepted perturbations of a known system (seed row, else registration)."""
    registered = _empty_registrations() if registered is None else registered
    known = seed if system_id in set(seed["system_id"]) else registered
    if system_id not in set(known["system_id"]):
        raise TsrateError(
            f"unknown system {system_id!r}: register it with this import, e.g. "
            f"`--metadata display_name='My model' modality=numeric family=foundation` "
            "(or a YAML/JSON file of the systems seed's columns), or add a row for it to "
            "seeds/systems.csv with an empty implementation column, e.g. "
            f"`{system_id},My model,,numeric,foundation,time-series,decoder-only,true,"
            "P0 P1 P2 P3,,Predictions imported from files.` (dbt rates only systems it knows)"
        )
    if baselines and system_id in study.systems:
        raise TsrateError(
            f"system {system_id!r} is one of the study's own systems {list(study.systems)}, "
            "which the run forecasts itself; import under another system id"
        )
    row = known[known["system_id"] == system_id].iloc[0]
    return tuple(str(row.get("accepted_perturbations", "") or "").split())


def _check_new_system(system_id: str, seed: pd.DataFrame, study: Study, baselines: bool) -> None:
    if system_id in set(seed["system_id"]):
        raise TsrateError(
            f"system {system_id!r} is a row of seeds/systems.csv: its metadata comes from "
            "there; import without --metadata, or register the predictions under a new id"
        )
    if not SYSTEM_ID.match(system_id):
        shown = system_id if len(system_id) <= 80 else system_id[:77] + "..."
        raise TsrateError(
            f"system id {shown!r} ({len(system_id)} characters): use 1 to 64 lower-case "
            "letters, digits, '_', '.' or '-', starting with a letter or digit (e.g. my_model)"
        )
    if baselines and system_id in study.systems:
        raise TsrateError(
            f"system {system_id!r} is one of the study's own systems {list(study.systems)}; "
            "import under another system id"
        )


# -- registering a system with its metadata ---------------------------------------------------


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
        raise TsrateError(f"metadata file {path} cannot be read: {exc}") from exc
    if not isinstance(data, dict):
        raise TsrateError(
            f"metadata file {path} must hold a mapping of the systems seed's columns "
            f"({', '.join(METADATA_KEYS)}), got {type(data).__name__}"
        )
    return {str(key): value for key, value in data.items()}


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
    ``paper_symbol``, ``base_model`` empty). Raises :class:`TsrateError` listing every
    problem: unknown keys, values that are not text, a bad modality / purpose /
    architecture / is_foundation_model, unknown perturbation ids, image perturbations
    (P4–P6) on a numeric system, and perturbations of the file it does not accept."""
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
            longest = 10 * MAX_METADATA_TEXT if key == "description" else MAX_METADATA_TEXT
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
    row["description"] = row["description"] or f"Predictions imported from {file_name}."

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
    if problems:
        raise TsrateError(
            f"metadata of system {system_id!r} rejected, nothing was stored: " + "; ".join(problems)
        )
    return row


def _empty_registrations() -> pd.DataFrame:
    return pd.DataFrame(columns=["system_id", *METADATA_KEYS])


def registered_systems(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The latest registration of every system in ``raw.imported_systems`` (none when the
    table does not exist yet)."""
    exists = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'raw' and table_name = 'imported_systems'"
    ).fetchone()[0]
    if not exists:
        return _empty_registrations()
    return con.execute(
        "select * exclude (source, registered_at) from raw.imported_systems "
        "qualify row_number() over (partition by system_id order by registered_at desc) = 1 "
        "order by system_id"
    ).df()


def register_system(con: duckdb.DuckDBPyConnection, row: Mapping[str, Any], source: str) -> bool:
    """Append ``row`` (from :func:`system_metadata`) to ``raw.imported_systems`` unless the
    system's latest registration already says exactly that; True when a row was written."""
    con.execute(IMPORTED_SYSTEMS_DDL)
    latest = registered_systems(con)
    latest = latest[latest["system_id"] == row["system_id"]]
    if not latest.empty:
        stored = latest.iloc[0].to_dict()
        same = all(
            (None if pd.isna(stored[key]) else stored[key]) == row[key] for key in METADATA_KEYS
        )
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


def read_prediction_file(path: Path) -> tuple[pd.DataFrame, str]:
    """The file as a frame (CSV values as text) with a 1-based ``_line`` column, and its sha256."""
    source = str(path)
    if not path.exists():
        raise ImportValidationError(source, ["file does not exist"])
    if path.stat().st_size == 0:
        raise ImportValidationError(source, ["file is empty"])
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".txt", ".parquet"}:
        raise ImportValidationError(
            source, [f"unknown file type {suffix!r}; use .csv (with a header) or .parquet"]
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
            first_line = 1  # row numbers
        else:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
            first_line = 2  # line 1 is the header
    except Exception as exc:  # noqa: BLE001 - any reader failure is a malformed file
        repeated = _safe_header_problems(path, suffix)
        raise ImportValidationError(source, repeated or [f"cannot be read: {exc}"]) from exc
    repeated = _safe_header_problems(path, suffix)
    if repeated:
        raise ImportValidationError(source, repeated)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in IMPORT_COLUMNS if c not in frame.columns]
    if missing:
        raise ImportValidationError(
            source,
            [
                f"missing column(s) {missing}; expected a header with {IMPORT_COLUMNS}, "
                f"found {list(frame.columns)}"
            ],
        )
    if frame.empty:
        raise ImportValidationError(source, ["no forecast rows (only a header)"])
    if suffix == ".parquet":
        wrong = parquet_type_problems(
            frame, ["horizon_step", "forecast"], ["window_end_date"], ["ticker", "perturbation_id"]
        )
        if wrong:
            raise ImportValidationError(source, wrong)
    frame = frame[IMPORT_COLUMNS].reset_index(drop=True)
    frame["_line"] = np.arange(first_line, first_line + len(frame))
    return frame, digest


def _safe_header_problems(path: Path, suffix: str) -> list[str]:
    try:
        return header_problems(path, suffix)
    except Exception:  # noqa: BLE001 - an unreadable header is reported by the reader's error
        return []


def validate_predictions(
    frame: pd.DataFrame,
    source: str,
    study: Study,
    series: dict[str, TickerSeries],
    system_id: str,
    accepted: tuple[str, ...] = (),
) -> dict[tuple[str, str], np.ndarray]:
    """Check every row against the study; return the (windows × horizon) grid per partition.

    Raises :class:`ImportValidationError` listing every problem found.
    """
    what = "row" if source.lower().endswith(".parquet") else "line"
    parsed, problems = _parse(frame, what)
    if problems:
        raise ImportValidationError(source, problems)
    problems = _check_against_study(parsed, what, study, series, system_id, accepted)
    if problems:
        raise ImportValidationError(source, problems)
    problems = _check_duplicates(parsed, what)
    if problems:
        raise ImportValidationError(source, problems)
    grids, problems = _grids(parsed, study, series)
    if problems:
        raise ImportValidationError(source, problems)
    return grids


def _lines(frame: pd.DataFrame, mask: pd.Series, what: str) -> str:
    """'lines 3, 7 and 2 more' for the rows under ``mask``."""
    lines = frame.loc[mask, "_line"].tolist()
    shown = ", ".join(str(n) for n in lines[:MAX_EXAMPLES])
    more = f" and {len(lines) - MAX_EXAMPLES} more" if len(lines) > MAX_EXAMPLES else ""
    return f"{what}{'s' if len(lines) > 1 else ''} {shown}{more}"


def _first(frame: pd.DataFrame, mask: pd.Series, column: str) -> str:
    return repr(frame.loc[mask, column].iloc[0])


def _parse(frame: pd.DataFrame, what: str) -> tuple[pd.DataFrame, list[str]]:
    problems = []
    out = pd.DataFrame({"_line": frame["_line"]})

    for column in ("ticker", "perturbation_id"):
        text = frame[column].astype("string").str.strip().str.upper()
        blank = text.isna() | (text == "")
        if blank.any():
            problems.append(f"{_lines(frame, blank, what)}: {column} is empty")
        out[column] = text.fillna("")
    malformed = (out["ticker"] != "") & out["ticker"].map(bad_ticker)
    if malformed.any():
        first = str(out.loc[malformed, "ticker"].iloc[0])
        problems.append(
            f"{_lines(frame, malformed, what)}: malformed ticker (first: "
            f"{(first if len(first) <= 40 else first[:40] + '...')!r}); {ticker_rule()}"
        )

    raw_dates = frame["window_end_date"]
    if pd.api.types.is_datetime64_any_dtype(raw_dates):
        dates = pd.to_datetime(raw_dates)
    else:
        try:
            dates = pd.to_datetime(
                raw_dates.astype("string").str.strip(), errors="coerce", format="ISO8601"
            )
        except (ValueError, TypeError) as exc:
            if "timezone" not in str(exc).lower() and "tz" not in str(exc).lower():
                raise
            first = int(frame["_line"].iloc[0])
            return out, [f"window_end_date: {mixed_zone_problem(raw_dates, what, first)}"]
    if dates.dt.tz is not None:
        dates = dates.dt.tz_localize(None)
    not_date = dates.isna() | (dates.notna() & (dates != dates.dt.normalize()))
    if not_date.any():
        problems.append(
            f"{_lines(frame, not_date, what)}: window_end_date is not a date like 2022-10-14 "
            f"(first: {_first(frame, not_date, 'window_end_date')})"
        )
    out["window_end_date"] = dates.dt.normalize()

    steps = pd.to_numeric(frame["horizon_step"], errors="coerce")
    not_int = steps.isna() | ~np.isfinite(steps) | (steps != np.round(steps))
    if not_int.any():
        problems.append(
            f"{_lines(frame, not_int, what)}: horizon_step is not a whole number "
            f"(first: {_first(frame, not_int, 'horizon_step')})"
        )
    out["horizon_step"] = steps.where(~not_int, 0).astype("int64")

    raw_forecasts = frame["forecast"]
    values = pd.to_numeric(raw_forecasts, errors="coerce").astype(float)
    if pd.api.types.is_numeric_dtype(raw_forecasts):
        unparseable = pd.Series(False, index=frame.index)
    else:
        text = raw_forecasts.astype("string").str.strip().str.lower()
        spelled_missing = text.isna() | text.isin(["", "nan", "+nan", "-nan", "na", "null"])
        unparseable = values.isna() & ~spelled_missing
    if unparseable.any():
        problems.append(
            f"{_lines(frame, unparseable, what)}: forecast is not a number "
            f"(first: {_first(frame, unparseable, 'forecast')})"
        )
    non_finite = ~np.isfinite(values) & ~unparseable
    if non_finite.any():
        problems.append(
            f"{_lines(frame, non_finite, what)}: forecast is missing or not finite "
            f"(first: {_first(frame, non_finite, 'forecast')}); every forecast must be a finite number"
        )
    too_large = np.isfinite(values) & (np.abs(values) > MAX_ABS_FORECAST)
    if too_large.any():
        problems.append(
            f"{_lines(frame, too_large, what)}: forecast outside -{MAX_ABS_FORECAST:g} to "
            f"{MAX_ABS_FORECAST:g} (first: {_first(frame, too_large, 'forecast')}); a price "
            "forecast that large is a unit or overflow error"
        )
    out["forecast"] = values
    return out, problems


def _check_against_study(
    parsed: pd.DataFrame,
    what: str,
    study: Study,
    series: dict[str, TickerSeries],
    system_id: str,
    accepted: tuple[str, ...],
) -> list[str]:
    problems = []
    unknown = ~parsed["ticker"].isin(list(study.tickers))
    if unknown.any():
        names = sorted(set(parsed.loc[unknown, "ticker"]))
        problems.append(
            f"{_lines(parsed, unknown, what)}: ticker(s) {names} are not in the study "
            f"(its tickers: {list(study.tickers)})"
        )
    outside = ~parsed["perturbation_id"].isin(list(study.perturbations))
    if outside.any():
        names = sorted(set(parsed.loc[outside, "perturbation_id"]))
        problems.append(
            f"{_lines(parsed, outside, what)}: perturbation(s) {names} are not in the study "
            f"(its perturbations: {list(study.perturbations)})"
        )
    if accepted:
        refused = ~outside & ~parsed["perturbation_id"].isin(list(accepted))
        if refused.any():
            names = sorted(set(parsed.loc[refused, "perturbation_id"]))
            problems.append(
                f"{_lines(parsed, refused, what)}: perturbation(s) {names} are not accepted by "
                f"system {system_id!r} (systems seed: {' '.join(accepted)})"
            )
    bad_step = (parsed["horizon_step"] < 1) | (parsed["horizon_step"] > study.horizon)
    if bad_step.any():
        problems.append(
            f"{_lines(parsed, bad_step, what)}: horizon_step outside 1..{study.horizon} "
            f"(first: {parsed.loc[bad_step, 'horizon_step'].iloc[0]})"
        )
    windows = pd.concat(
        [
            pd.DataFrame({"ticker": ticker, "window_end_date": pd.to_datetime(s.window_end_dates)})
            for ticker, s in series.items()
        ],
        ignore_index=True,
    )
    windows["_is_window"] = True
    located = parsed[["ticker", "window_end_date"]].merge(
        windows, on=["ticker", "window_end_date"], how="left"
    )
    not_window = ~unknown & located["_is_window"].isna().to_numpy()
    if not_window.any():
        first = parsed.loc[not_window].iloc[0]
        s = series[first["ticker"]]
        problems.append(
            f"{_lines(parsed, not_window, what)}: window_end_date is not a window of the study "
            f"(first: {first['ticker']} {first['window_end_date'].date()}; {first['ticker']}'s "
            f"windows end on the trading days {s.window_end_dates[0]} to "
            f"{s.window_end_dates[-1]}, context {study.context_length}, horizon "
            f"{study.horizon}, stride {study.stride})"
        )
    return problems


def _check_duplicates(parsed: pd.DataFrame, what: str) -> list[str]:
    key = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    repeated = parsed.duplicated(key, keep="first")
    if not repeated.any():
        return []
    first = parsed.loc[repeated].iloc[0]
    same = (parsed[key] == first[key]).all(axis=1)
    return [
        f"{_lines(parsed, repeated, what)}: duplicate (ticker, window_end_date, perturbation_id, "
        f"horizon_step); first: {first['ticker']} {first['window_end_date'].date()} "
        f"{first['perturbation_id']} step {first['horizon_step']} on {_lines(parsed, same, what)}"
    ]


def _grids(
    parsed: pd.DataFrame, study: Study, series: dict[str, TickerSeries]
) -> tuple[dict[tuple[str, str], np.ndarray], list[str]]:
    grids = {}
    problems = []
    d = study.horizon
    for (ticker, perturbation_id), rows in parsed.groupby(["ticker", "perturbation_id"]):
        ends = pd.to_datetime(series[ticker].window_end_dates)
        grid = np.full((len(ends), d), np.nan)
        window = ends.get_indexer(pd.DatetimeIndex(rows["window_end_date"]))
        grid[window, rows["horizon_step"].to_numpy() - 1] = rows["forecast"].to_numpy()
        missing = np.isnan(grid)
        if missing.any():
            examples = []
            for row in np.flatnonzero(missing.any(axis=1))[:MAX_EXAMPLES]:
                steps = np.flatnonzero(missing[row]) + 1
                label = "all steps" if len(steps) == d else f"steps {steps.tolist()}"
                examples.append(f"{ends[row].date()} ({label})")
            n_windows = int(missing.any(axis=1).sum())
            more = f", and {n_windows - len(examples)} more" if n_windows > len(examples) else ""
            problems.append(
                f"{ticker} {perturbation_id}: incomplete grid, {int(missing.sum())} of "
                f"{grid.size} forecasts (windows × steps 1..{d}) missing, in {n_windows} of "
                f"{len(ends)} windows: {'; '.join(examples)}{more}"
            )
        grids[(ticker, perturbation_id)] = grid
    return grids, problems
