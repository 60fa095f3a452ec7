"""Rate any model black-box: import its predictions from a file as a run of the warehouse.

The file (CSV with a header, or Parquet) holds one row per forecast::

    ticker,window_end_date,perturbation_id,horizon_step,forecast
    AAPL,2022-10-14,P0,1,138.2

Optionally with quantile forecasts at fev's default levels, the nine columns ``q0.1`` …
``q0.9`` (all or none per file; the file's columns decide; checks in
:mod:`tsrate.robustness.blackbox.validation`). They are stored in ``raw.forecast_quantiles``
(``q10`` … ``q90``) beside the point forecasts, in the same transaction, as the built-in
systems' quantiles are, so the probabilistic marts score them; without them the system's
probabilistic metrics are null with the reason.

``window_end_date`` names a window of the study (the date of its last context value, the
forecast origin); ``horizon_step`` runs 1..horizon (step 1 is the next trading day). For each
(ticker, perturbation) the file covers, every window of the study × every step must be
there, and each perturbation it covers must hold every ticker of the study
(:func:`~tsrate.robustness.blackbox.validation.check_ticker_coverage`: the marts compare
systems window by window); a file may cover a subset of the perturbations. The inputs the
model saw must be the study's (same context length, perturbation spacing and phase):
``tsrate`` cannot check that, but the perturbed inputs of the run (``raw.perturbed_inputs``)
show what they should have been.

The system is a row of the systems seed (``seeds/systems.csv``) with an empty
``implementation`` (a model tsrate cannot run), or is **registered** by the import itself
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
An id whose forecasts tsrate makes itself is refused, with or without ``baselines``: a seed
row with an ``implementation`` or one of the study's systems (the marts rate the newest run
per system of a study, so imported rows would replace that system's own or mix with them).

The whole file and the metadata are validated before anything is written: a rejected
import stores nothing (no registration, no run) and the error names the file, the rows and
the problem. The registration, the import's record (``raw.study_imports``) and its run's
status ``forecasted`` are written last, after the run's forecasts, in one transaction: an
import that fails or is stopped (Ctrl-C, a kill) before that leaves none of them, only its
stored forecast partitions (the next import of the same file reuses them) under a run the
next process marks ``interrupted``; one stopped later, in its build, is whole (listed by
``tsrate systems`` as not rated yet, withdrawn by ``tsrate withdraw``, rated by ``tsrate
build``: :mod:`tsrate.robustness.blackbox.import_state`). Rules
beyond the study's grid: column names unique; Parquet columns typed (``forecast`` and
``horizon_step`` numeric, not boolean; ``window_end_date`` a date or text; ``ticker`` and
``perturbation_id`` text); tickers match :data:`tsrate.robustness.sources.TICKER_PATTERN`; forecasts
finite with ``|forecast| <=`` :data:`MAX_ABS_FORECAST` (1e9), and prices in the study's unit
(each ticker's median ratio to its windows' last clean input in [0.2, 5]:
:mod:`tsrate.robustness.blackbox.scale`); one time zone per date column;
system ids match :data:`SYSTEM_ID` (at most 64 characters); metadata text values at most
200 characters (``description`` 2000), without control characters. A valid file becomes a new run: by
default the study's own systems (``study.systems``, e.g. the baselines) are forecast into
the same run exactly as ``tsrate run`` does (finished partitions are reused, missing ones
computed), and the imported forecasts are added beside them, one partition per ticker ×
perturbation. So one ``dbt build`` of that run rates the imported model against the
baselines. A partition's ``input_key`` hashes the study's window settings, the ticker's clean
prices and the imported forecasts themselves, so importing the same predictions again
reuses the stored partitions (no new forecast rows). An import whose forecasts equal, on
every window they share, those of another system the study's marts rate (the same file under
another id, or a built-in system's forecasts) says so in one line, naming it: the two cannot
be told apart (:func:`tsrate.robustness.identical.identical_import_note`).

Its two halves are modules of their own: the file's checks in
:mod:`tsrate.robustness.blackbox.validation`, the system's metadata and registration in
:mod:`tsrate.robustness.blackbox.registry`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import transaction
from tsrate.robustness.blackbox.registry import (
    check_known_system,
    check_new_system,
    dropped_fields,
    dropped_note,
    read_metadata,
    register_system,
    registered_systems,
    system_metadata,
)
from tsrate.robustness.blackbox.validation import (
    ImportValidationError,
    check_ticker_coverage,
    read_prediction_file,
    validate_predictions,
)
from tsrate.robustness.companies import study_companies
from tsrate.robustness.forecast.execute import (
    RunSummary,
    finish_run,
    new_run_id,
    run_forecasts,
    start_run,
)
from tsrate.robustness.forecast.plan import Partition, TickerSeries, input_key, load_series
from tsrate.robustness.forecast.store import store_partition
from tsrate.systems.base import QuantileForecasts
from tsrate.systems.registered import exported, registrations
from tsrate.systems.registry import load_systems_seed

#: The import's public names: the ones defined here, and those of its two halves that
#: callers (the CLI, the tests) reach through this module.
__all__ = [
    "ImportSummary",
    "ImportValidationError",
    "import_forecasts",
    "imported_input_key",
    "read_metadata",
    "register_system",
    "registered_systems",
    "system_metadata",
]


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
    seed = systems_seed
    if seed is None:  # with the language models registered here: tsrate forecasts those too
        with exported(registrations(con)):
            seed = load_systems_seed()
    registered = registered_systems(con)
    if metadata is None:
        accepted = check_known_system(system_id, seed, study, registered)
    else:
        check_new_system(system_id, seed, study)
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
    check_ticker_coverage(grids, series, source)
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
            fallbacks_known=False,  # an imported model's fallbacks are not known here
        )
        summary.computed += 1
    # the file as it can be found again later: `tsrate systems` lists it from any folder
    recorded = str(path.resolve())
    earlier = registered[registered["system_id"] == system_id]
    earlier = None if earlier.empty else earlier.iloc[0].to_dict()
    message = f"imported {system_id} from {path.name} (sha256 {file_sha256[:16]})"
    # all or nothing: the registration, the import's record and its run's `forecasted` are
    # one transaction, so an import stopped before its end (Ctrl-C, a kill) leaves none of
    # them, only its stored forecast partitions (reused by the next import of the file) under
    # a run the next process marks interrupted; one stopped after it is whole (`tsrate
    # systems` lists it, `tsrate withdraw` takes it out, `tsrate build` rates it)
    with transaction(con):
        summary.study_id = _record(con, summary, registration, recorded, earlier, metadata, say)
        rerun = study.systems if baselines else ()
        _notes(con, run_id, system_id, summary.study_id, rerun, say)
        finish_run(con, run_id, "forecasted", message)
    summary.seconds = time.perf_counter() - started
    say(
        f"run {run_id}: {message}: {summary.partitions} partitions "
        f"({summary.computed} stored, {summary.reused} reused), {summary.forecast_rows} rows, "
        + quantile_note(grids)
        + control_note(grids, system_id)
    )
    return summary


def _record(
    con: duckdb.DuckDBPyConnection,
    summary: ImportSummary,
    registration: Mapping[str, Any] | None,
    recorded: str,
    earlier: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
    say,  # noqa: ANN001 - Callable[[str], None]
) -> str:
    """Register the system (when the import has ``metadata``) and record the import, inside
    the caller's transaction; the import's study id."""
    from tsrate.robustness.studies import record_import

    system_id = summary.system_id
    if registration is not None and register_system(con, registration, recorded):
        say(
            f"registered system {system_id!r} ({registration['display_name']}) "
            "in raw.imported_systems"
        )
        dropped = dropped_fields(earlier, metadata or {}, registration)
        if dropped:
            say(dropped_note(system_id, dropped))
    return record_import(con, summary.run_id, system_id, recorded, summary.file_sha256)


def _notes(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    system_id: str,
    study_id: str,
    rerun: tuple[str, ...],
    say,  # noqa: ANN001 - Callable[[str], None]
) -> None:
    """Say what the recorded import replaces, brings back (the imported system, and the
    study's own systems ``rerun`` beside the file: a withdrawn baseline comes back with
    them, said, not silently) and cannot be told apart from."""
    from tsrate.robustness.identical import identical_import_note
    from tsrate.robustness.studies import replaced_import_note
    from tsrate.robustness.withdrawals import brought_back_note

    notes = [replaced_import_note(con, run_id, system_id)]
    notes += [brought_back_note(con, run_id, s) for s in dict.fromkeys([system_id, *rerun])]
    notes.append(identical_import_note(con, run_id, system_id, study_id))
    for note in notes:
        if note:
            say(note)


def quantile_note(grids: Mapping[tuple[str, str], object]) -> str:
    """What the import says about quantiles: the file's columns decide, and without them the
    probabilistic metrics are null, which a user should hear at the import, not in a mart."""
    if any(isinstance(grid, QuantileForecasts) for grid in grids.values()):
        return "with quantile forecasts q0.1 … q0.9 (WQL, CRPS, coverage in the marts)"
    return (
        "point forecasts only: the file has no q0.1 … q0.9 columns, so the model's "
        "probabilistic metrics (WQL, CRPS, coverage) are null (docs/probabilistic.md)"
    )


def control_note(grids: Mapping[tuple[str, str], object], system_id: str) -> str:
    """What the import says about a file without the control P0: APE and PIE compare each
    perturbation with the system's own P0 forecasts, so the marts give it no APE or PIE row
    at all (no perturbation effects), which a user should hear at the import."""
    if any(perturbation == "P0" for _, perturbation in grids):
        return ""
    return (
        f"; no P0 rows: APE and PIE compare each perturbation with {system_id}'s own "
        "forecasts on the control P0, so it is rated on WRS and accuracy only (add P0 "
        "rows for APE and PIE)"
    )


def imported_input_key(
    system_id: str,
    study: Study,
    series: TickerSeries,
    perturbation_id: str,
    forecasts_array: np.ndarray | QuantileForecasts,
) -> str:
    """The pipeline's input key with the forecasts' own hash as the system's fingerprint
    (with the quantiles' bytes after the point forecasts' when the file has them, so the
    same points imported with and without quantiles are different partitions)."""
    quantiles = None
    if isinstance(forecasts_array, QuantileForecasts):
        forecasts_array, quantiles = forecasts_array.point, forecasts_array.quantiles
    content = hashlib.sha256(np.ascontiguousarray(forecasts_array, dtype=float).tobytes())
    if quantiles is not None:
        content.update(b";quantiles;")
        content.update(np.ascontiguousarray(quantiles, dtype=float).tobytes())
    fingerprint = f"imported;forecasts-sha256={content.hexdigest()}"
    return input_key(system_id, fingerprint, study, series, perturbation_id)
