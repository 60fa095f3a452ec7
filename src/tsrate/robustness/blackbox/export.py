"""Export the exact inputs of a study for models run elsewhere, and check predictions against it.

``tsrate export-inputs DIR`` writes, for the study (``dbt_project.yml`` vars + flags):

- ``inputs.parquet``: one row per ticker × window × perturbation × context step —
  ``ticker, window_end_date, perturbation_id, context_step`` (1 = oldest, n = the forecast
  origin), ``price_date``, ``value`` (the input exactly as tsrate's systems receive it;
  null = missing, P3), ``is_perturbed``. P4–P6 leave the numbers clean (they act on images).
- ``images/<ticker>/<perturbation>/<window_end_date>.png`` (optional, ``--images N``: the
  first N windows of each ticker × perturbation): the line plot the numeric+image language
  models receive, with P4–P6 applied (see :func:`tsrate.systems.llm_prompts.window_images`).
- ``manifest.json``, written last: the study, per ticker its window end dates and a hash of
  its clean prices, the horizon, the file hashes, and the prediction format expected back
  (``predictions.columns``, and the optional ``predictions.quantile_columns``: the manifest
  is written before any prediction exists, so it cannot say whether a file has quantiles;
  the file's columns decide, and these are the names the import reads).

The export is built in a temporary sibling folder and renamed into place, so ``DIR`` is
either complete or absent; an existing non-empty ``DIR`` is refused.

``tsrate import-predictions FILE --system NAME --manifest DIR`` checks that the warehouse
still yields the manifest's windows from the same prices (:func:`study_from_manifest`), then
imports ``FILE`` with the manifest's study through :mod:`tsrate.robustness.blackbox.predictions` (its validation:
missing windows, extra rows, wrong horizon steps, NaN, duplicates; nothing half-imported).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.images import write_png
from tsrate.robustness.blackbox.validation import QUANTILE_COLUMNS
from tsrate.robustness.forecast.plan import TickerSeries, load_series, make_batch

MANIFEST = "manifest.json"
INPUTS = "inputs.parquet"
FORMAT_VERSION = 1
PREDICTION_COLUMNS = ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]


@dataclasses.dataclass(frozen=True)
class ExportSummary:
    folder: Path
    input_rows: int
    windows: int
    images: int


def prices_digest(series: TickerSeries) -> str:
    """Hash of a ticker's clean study-period closes and dates (what the windows are cut from)."""
    digest = hashlib.sha256(np.round(series.clean, 10).tobytes())
    digest.update(series.dates.astype("datetime64[D]").astype(np.int64).tobytes())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def input_frame(study: Study, series: dict[str, TickerSeries]) -> pd.DataFrame:
    """The long table of ``inputs.parquet`` (see module doc)."""
    n = study.context_length
    frames = []
    for ticker, ticker_series in series.items():
        starts = ticker_series.end_positions - n + 1
        positions = starts[:, None] + np.arange(n)[None, :]
        ends = np.repeat(ticker_series.window_end_dates, n)
        for perturbation_id in study.perturbations:
            batch = make_batch(study, ticker_series, perturbation_id)
            values = batch.contexts.reshape(-1)
            clean = ticker_series.clean[positions].reshape(-1)
            perturbed = ~(np.isclose(values, clean) | (np.isnan(values) & np.isnan(clean)))
            frames.append(
                pd.DataFrame(
                    {
                        "ticker": ticker,
                        "window_end_date": ends,
                        "perturbation_id": perturbation_id,
                        "context_step": np.tile(np.arange(1, n + 1, dtype=np.int32), len(starts)),
                        "price_date": ticker_series.dates[positions].reshape(-1),
                        "value": np.where(np.isnan(values), None, values),
                        "is_perturbed": perturbed,
                    }
                ).astype({"value": "float64"})
            )
    return pd.concat(frames, ignore_index=True)


def check_export_folder(folder: str | Path) -> Path:
    """``folder`` as a Path, refused unless it is new or an empty folder (the export writes the
    whole folder at once, beside it, then renames it into place)."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise TsrateError(
            f"{folder} exists and is not an empty folder (hint: give a new or empty folder; "
            "an export never writes into another one)"
        )
    return folder


def export_inputs(
    con: duckdb.DuckDBPyConnection,
    study: Study,
    folder: str | Path,
    image_windows: int = 0,
    study_id: str | None = None,
) -> ExportSummary:
    """Write the study's inputs, optional line-plot PNGs and the manifest to ``folder``.

    ``study_id``: the stored study's id (``tsrate studies``; the manifest's ``study_id``),
    None for a study no run or import has stored yet (``study_hash`` is the hash of the
    study's JSON, another key: it covers the systems, the study id does not)."""
    folder = check_export_folder(folder)
    if image_windows < 0:
        raise TsrateError(f"--images must be 0 or more, got {image_windows} (hint: 0 writes none)")
    series = load_series(con, study)
    frame = input_frame(study, series)
    staging = folder.parent / f".{folder.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        frame.to_parquet(staging / INPUTS, index=False)
        images = _write_images(study, series, staging, image_windows) if image_windows else 0
        manifest = {
            "format_version": FORMAT_VERSION,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "study": json.loads(study.to_json()),
            "study_id": study_id,
            "study_hash": study.study_hash,
            "context_length": study.context_length,
            "horizon": study.horizon,
            "perturbations": list(study.perturbations),
            "tickers": {
                ticker: {
                    "prices_sha256": prices_digest(s),
                    "window_end_dates": [str(d) for d in s.window_end_dates],
                }
                for ticker, s in series.items()
            },
            "files": {INPUTS: {"sha256": _sha256(staging / INPUTS), "rows": len(frame)}},
            "images": images,
            "predictions": {
                "columns": PREDICTION_COLUMNS,
                "quantile_columns": list(QUANTILE_COLUMNS),
                "quantiles": "optional: all of quantile_columns (fev's levels 0.1..0.9) or none",
                "rows": "one per ticker x window_end_date x perturbation_id x horizon_step",
                "horizon_step": f"1..{study.horizon} (1 = the trading day after window_end_date)",
                "import": "tsrate import-predictions FILE --system NAME --manifest DIR",
            },
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if folder.exists():
            folder.rmdir()  # empty, checked above
        os.replace(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    windows = sum(len(s.end_positions) for s in series.values())
    return ExportSummary(folder, len(frame), windows, images)


def _write_images(
    study: Study, series: dict[str, TickerSeries], folder: Path, per_partition: int
) -> int:
    from tsrate.systems.llm_prompts import window_images

    sentiment = None
    if "P6" in study.perturbations:
        from tsrate.inputs.sentiment import default_sentiment_system

        sentiment = default_sentiment_system(study.context_length)
    count = 0
    for ticker, ticker_series in series.items():
        for perturbation_id in study.perturbations:
            batch = make_batch(study, ticker_series, perturbation_id)
            contexts = batch.contexts[:per_partition]
            images = window_images(contexts, perturbation_id, 128, sentiment)
            target = inside(folder, Path("images", ticker, perturbation_id))
            target.mkdir(parents=True, exist_ok=True)
            for end_date, image in zip(batch.window_end_dates, images, strict=False):
                write_png(inside(target, Path(f"{end_date}.png")), image)
                count += 1
    return count


def inside(folder: Path, relative: Path) -> Path:
    """``folder / relative``, refused unless it stays inside ``folder`` (a ticker such as
    ``../../x`` or an absolute part would write elsewhere) and every part is a plain name."""
    parts = Path(relative).parts
    plain = all(
        part not in ("", ".", "..") and "/" not in part and "\\" not in part and part.isprintable()
        for part in parts
    )
    path = Path(folder, *parts)
    root = Path(folder).resolve()
    if not plain or Path(relative).is_absolute() or not path.resolve().is_relative_to(root):
        raise TsrateError(
            f"refusing to write {str(relative)!r}: it would leave the folder {folder}; "
            "tickers and perturbation ids must be plain names (see `tsrate ingest` rules)"
        )
    return path


#: The hint of every refused manifest: the export is the only writer of a manifest.
EXPORT_AGAIN = "export again with `tsrate export-inputs` rather than editing it"


def read_manifest(path: str | Path) -> dict:
    """The manifest of an export (``path``: the folder or its ``manifest.json``), checked for
    the shape :func:`study_from_manifest` needs; a malformed one is a one-line error."""
    path = manifest_path(path)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TsrateError(f"no export manifest at {path} (run `tsrate export-inputs`)") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TsrateError(f"{path} is not valid JSON: {exc}; {EXPORT_AGAIN}") from exc
    except OSError as exc:
        raise TsrateError(f"cannot read the export manifest {path}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
        raise TsrateError(
            f"{path}: not a tsrate export manifest of format {FORMAT_VERSION}; {EXPORT_AGAIN}"
        )
    for key in ("study", "tickers", "horizon"):
        if key not in manifest:
            raise TsrateError(f"{path}: the manifest has no {key!r}; {EXPORT_AGAIN}")
    problem = _manifest_shape_problem(manifest)
    if problem:
        raise TsrateError(f"{path}: malformed export manifest: {problem}; {EXPORT_AGAIN}")
    problem = _copies_problem(manifest)
    if problem:
        raise TsrateError(f"{path}: {problem} (hint: {EXPORT_AGAIN})")
    return manifest


def manifest_path(path: str | Path) -> Path:
    """The manifest file of ``path``: an export folder's ``manifest.json``, else ``path``."""
    path = Path(path)
    return path / MANIFEST if path.is_dir() else path


#: The study's settings that the manifest repeats at its top level for a reader; the import
#: uses the study's (``study.horizon``, ...), so a copy that disagrees with it is refused.
COPIED_SETTINGS = ("horizon", "context_length", "perturbations")


def _copies_problem(manifest: dict) -> str | None:
    study = Study.from_json(json.dumps(manifest["study"]))
    for key in COPIED_SETTINGS:
        if key not in manifest:
            continue
        value = getattr(study, key)
        value = list(value) if isinstance(value, tuple) else value
        if json.dumps(manifest[key]) != json.dumps(value):
            return (
                f"{key} is {json.dumps(manifest[key])} but study.{key} is {json.dumps(value)}: "
                f"the import would use study.{key}, so the two must agree"
            )
    return None


def _manifest_shape_problem(manifest: dict) -> str | None:
    if not isinstance(manifest["study"], dict):
        return "'study' is not a mapping"
    try:
        Study.from_json(json.dumps(manifest["study"]))
    except KeyError as exc:
        return f"'study' lacks {exc}"
    except (TsrateError, TypeError, ValueError) as exc:
        return (
            f"'study' is invalid ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        )
    tickers = manifest["tickers"]
    if not isinstance(tickers, dict):
        return "'tickers' is not a mapping of ticker to its windows"
    for ticker, entry in tickers.items():
        if not isinstance(entry, dict):
            return f"tickers.{ticker} is not a mapping"
        if not isinstance(entry.get("prices_sha256"), str):
            return f"tickers.{ticker} has no prices_sha256 text"
        dates = entry.get("window_end_dates")
        if not isinstance(dates, list) or not all(isinstance(d, str) for d in dates):
            return f"tickers.{ticker}.window_end_dates is not a list of dates"
    return None


def study_from_manifest(
    con: duckdb.DuckDBPyConnection, manifest: dict, path: str | Path | None = None
) -> Study:
    """The exported study, after checking that the warehouse still cuts the same windows
    from the same prices (else predictions made on the export would be scored against
    other inputs). ``path``: the manifest file, named in every refusal."""
    where = str(path) if path is not None else "the export manifest"
    study = Study.from_json(json.dumps(manifest["study"]))
    series = load_series(con, study)
    for ticker, expected in manifest["tickers"].items():
        if ticker not in series:
            raise TsrateError(
                f"{where}: the manifest's ticker {ticker} is not in the study (its study.tickers) "
                f"(hint: {EXPORT_AGAIN})"
            )
        current = series[ticker]
        if prices_digest(current) != expected["prices_sha256"]:
            raise TsrateError(
                f"{where}: the stored prices of {ticker} changed since the export, or the "
                f"manifest's study period was edited (tickers.{ticker}.prices_sha256 differs): "
                "predictions made on the exported inputs cannot be scored (hint: export again "
                "with `tsrate export-inputs` and rerun the model on the new inputs)"
            )
        dates = [str(d) for d in current.window_end_dates]
        if dates != expected["window_end_dates"]:
            raise TsrateError(
                f"{where}: tickers.{ticker}.window_end_dates differ from the windows the "
                f"manifest's study cuts from the stored prices "
                f"({_first_difference(expected['window_end_dates'], dates)}); the manifest or "
                f"its study's window settings were edited (hint: {EXPORT_AGAIN})"
            )
    return study


def _first_difference(listed: list[str], cut: list[str]) -> str:
    """Where the manifest's window end dates (``listed``) first part from the study's."""
    for index, (mine, theirs) in enumerate(zip(listed, cut, strict=False)):
        if mine != theirs:
            return f"date {index + 1} is {mine}, the study's is {theirs}"
    return f"{len(listed)} dates listed, the study cuts {len(cut)}"
