"""Training a ViT-num-spec variant (see :mod:`tsrate.systems.vit_num_spec` for the recipe):
its settings from the vars, the training prices and windows, the training loop with early
stopping, and the ``raw.model_checkpoints`` row of a checkpoint.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.inputs.images import (
    fill_missing,
    rendering_fingerprint,
    standardise,
    vit_num_spec_images,
)
from tsrate.platform.files import write_text_atomic
from tsrate.systems.vit_model import MODEL_VERSION, SIZES, build_network, image_tensor

#: variant → (vars naming its training period, default period)
VARIANTS: dict[str, tuple[str, str, str, str]] = {
    "vit_num_spec_precovid": ("vit_precovid_start", "vit_precovid_end", "2000-01-03", "2014-12-31"),
    "vit_num_spec_covid": ("vit_covid_start", "vit_covid_end", "2020-03-02", "2021-12-28"),
}


@dataclasses.dataclass(frozen=True)
class TrainingSettings:
    """Everything that determines a trained ViT-num-spec (with the prices: its cache key)."""

    system_id: str
    train_start: dt.date
    train_end: dt.date
    tickers: tuple[str, ...]
    context_length: int
    horizon: int
    size: str = "small"
    seed: int = 42
    stride: int = 1
    max_windows: int = 3000
    max_epochs: int = 8
    patience: int = 2
    batch_size: int = 64
    learning_rate: float = 1e-3
    validation_fraction: float = 0.2
    version: int = MODEL_VERSION

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise TsrateError(f"vit_size must be one of {sorted(SIZES)}, got {self.size!r}")
        if self.train_start >= self.train_end:
            raise TsrateError(
                f"{self.system_id}: training start {self.train_start} is not before its end "
                f"{self.train_end}"
            )
        if not 0 < self.validation_fraction < 1:
            raise TsrateError("validation_fraction must lie in (0, 1)")
        if self.stride < 1 or self.max_windows < 2 or self.max_epochs < 1:
            raise TsrateError("vit training: stride ≥ 1, max_windows ≥ 2 and max_epochs ≥ 1")


# -- data -------------------------------------------------------------------------------------


def training_prices(settings: TrainingSettings) -> pd.DataFrame:
    """The training tickers' closes over the training period, from the bundled sample."""
    from tsrate.robustness.sources import load_skfolio_sp500

    prices = load_skfolio_sp500(list(settings.tickers))
    dates = pd.to_datetime(prices["price_date"]).dt.date
    keep = (dates >= settings.train_start) & (dates <= settings.train_end)
    return prices.loc[keep].sort_values(["ticker", "price_date"]).reset_index(drop=True)


def prices_fingerprint(prices: pd.DataFrame) -> bytes:
    """Bytes identifying the training prices (tickers, dates, closes to 10 decimals)."""
    ordered = prices.sort_values(["ticker", "price_date"])
    text = "|".join(ordered["ticker"].astype(str)) + "|".join(ordered["price_date"].astype(str))
    return text.encode() + np.round(ordered["close"].to_numpy(dtype=float), 10).tobytes()


def remembered_key(settings: TrainingSettings, folder: Path, compute: Callable[[], str]) -> str:
    """``compute()`` (a checkpoint key: a hash of the settings, the training prices and the
    images' drawing constants), remembered under ``folder/vit_num_spec/keys/`` per
    (settings, bundled sample file, its size and mtime, drawing constants), so listing the
    systems does not read and check the sample again (about 1 s per variant); prices from
    anywhere but the bundled file are always hashed."""
    from tsrate.robustness.sample import skfolio_sample_path

    sample = skfolio_sample_path()
    if sample is None:
        return compute()
    stat = sample.stat()
    stamp = json.dumps(
        [
            dataclasses.asdict(settings),
            str(sample.resolve()),
            stat.st_size,
            stat.st_mtime_ns,
            hashlib.sha256(rendering_fingerprint()).hexdigest(),
        ],
        sort_keys=True,
        default=str,
    )
    path = folder / "vit_num_spec" / "keys" / f"{hashlib.sha256(stamp.encode()).hexdigest()[:32]}"
    try:
        known = path.read_text().strip()
    except OSError:
        known = ""
    if len(known) == 16 and all(c in "0123456789abcdef" for c in known):
        return known
    key = compute()
    try:
        write_text_atomic(path, key)
    except OSError:
        pass  # a read-only cache folder: the key is computed each time, nothing else changes
    return key


@dataclasses.dataclass(frozen=True)
class TrainingWindows:
    contexts: np.ndarray  # windows × n
    futures: np.ndarray  # windows × d
    end_dates: np.ndarray  # datetime64[D], the forecast origins
    tickers: np.ndarray
    target_end_dates: np.ndarray  # datetime64[D], each window's last target day


def training_windows(prices: pd.DataFrame, settings: TrainingSettings) -> TrainingWindows:
    """Every (stride-spaced) window of n + d days inside the training period, in date order,
    thinned evenly to at most ``max_windows``; a clear error when there are too few."""
    n, d = settings.context_length, settings.horizon
    parts = []
    for ticker in settings.tickers:
        rows = prices[prices["ticker"] == ticker]
        closes = rows["close"].to_numpy(dtype=float)
        if len(closes) < n + d:
            continue
        ends = np.arange(n - 1, len(closes) - d, settings.stride)
        offsets = np.arange(-n + 1, 1)
        days = pd.to_datetime(rows["price_date"]).to_numpy().astype("datetime64[D]")
        parts.append(
            (
                closes[ends[:, None] + offsets],
                closes[ends[:, None] + np.arange(1, d + 1)],
                days[ends],
                np.full(len(ends), ticker, dtype=object),
                days[ends + d],
            )
        )
    count = sum(len(part[0]) for part in parts)
    minimum = 10
    if count < minimum:
        days = prices.groupby("ticker").size().to_dict()
        raise TsrateError(
            f"{settings.system_id}: too little training data: {count} window(s) of "
            f"{n} + {d} trading days between {settings.train_start} and {settings.train_end} "
            f"for tickers {list(settings.tickers)} (trading days per ticker: {days}); need at "
            f"least {minimum}. Widen the training period (vars vit_*_start / vit_*_end) or "
            "shorten context_length / horizon."
        )
    contexts = np.concatenate([p[0] for p in parts])
    futures = np.concatenate([p[1] for p in parts])
    end_dates = np.concatenate([p[2] for p in parts])
    tickers = np.concatenate([p[3] for p in parts])
    target_ends = np.concatenate([p[4] for p in parts])
    order = np.lexsort((tickers.astype(str), end_dates))
    if len(order) > settings.max_windows:
        order = order[np.round(np.linspace(0, len(order) - 1, settings.max_windows)).astype(int)]
    return TrainingWindows(
        contexts[order], futures[order], end_dates[order], tickers[order], target_ends[order]
    )


def validation_split(windows: TrainingWindows, fraction: float) -> tuple[np.ndarray, int]:
    """(the training windows' positions, the validation count): the latest ``fraction`` of
    the windows (at least one) validate; a training window whose targets run past the first
    validation window's origin is purged (dropped from both sets), so that no validation
    target day is ever a training target and the validation loss that stops training is not
    optimistic. With stride-1 windows that is the d − 1 windows per ticker before that origin
    (and any on the origin's own date)."""
    count = len(windows.end_dates)
    n_valid = max(1, int(round(count * fraction)))
    first_origin = windows.end_dates[count - n_valid]
    keep = np.flatnonzero(windows.target_end_dates[: count - n_valid] <= first_origin)
    return keep, n_valid


def standardised_targets(
    contexts: np.ndarray, futures: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(targets (future − last) / σ, last, σ) — see the module docstring."""
    _, _, std = standardise(contexts)
    last = fill_missing(contexts)[:, -1]
    return (futures - last[:, None]) / std[:, None], last, std


def _git_revision() -> str:
    try:
        from tsrate.config import project_dir

        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=project_dir(),
            capture_output=True,
            text=True,
            timeout=5,
        )
        return result.stdout.strip() or "unknown"
    except Exception:  # noqa: BLE001 - metadata only
        return "unknown"


def train(
    settings: TrainingSettings,
    prices: pd.DataFrame,
    device: str = "cpu",
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train one variant; returns (best state dict on CPU, metadata)."""
    import torch

    say = progress or (lambda message: None)
    started = time.perf_counter()
    windows = training_windows(prices, settings)
    targets, _, _ = standardised_targets(windows.contexts, windows.futures)
    images = vit_num_spec_images(windows.contexts)
    count = len(images)
    kept, n_valid = validation_split(windows, settings.validation_fraction)
    n_train = len(kept)
    purged = count - n_valid - n_train
    if n_train < 2:
        raise TsrateError(
            f"{settings.system_id}: only {count} training windows, {n_train} left to train on "
            f"after {n_valid} validate and {purged} are purged (their targets reach the "
            "validation period); widen the training period or lower validation_fraction"
        )
    train_images, valid_images = images[kept], images[count - n_valid :]
    train_targets = torch.from_numpy(targets[kept].astype(np.float32))
    valid_targets = torch.from_numpy(targets[count - n_valid :].astype(np.float32)).to(device)
    size = SIZES[settings.size]
    history = []
    with torch.random.fork_rng(devices=[] if device == "cpu" else None):
        torch.manual_seed(settings.seed)
        network = build_network(size, settings.horizon).to(device)
        optimiser = torch.optim.AdamW(network.parameters(), lr=settings.learning_rate)
        order_rng = np.random.default_rng(settings.seed)
        best_loss, best_state, best_epoch, stale = float("inf"), None, 0, 0
        for epoch in range(1, settings.max_epochs + 1):
            network.train()
            order = order_rng.permutation(n_train)
            train_loss = 0.0
            for start in range(0, n_train, settings.batch_size):
                rows = order[start : start + settings.batch_size]
                optimiser.zero_grad()
                output = network(image_tensor(train_images[rows], device))
                loss = torch.nn.functional.mse_loss(output, train_targets[rows].to(device))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
                optimiser.step()
                train_loss += float(loss.detach()) * len(rows)
            network.eval()
            with torch.no_grad():
                valid_output = torch.cat(
                    [
                        network(image_tensor(valid_images[s : s + 256], device))
                        for s in range(0, len(valid_images), 256)
                    ]
                )
                valid_loss = float(torch.nn.functional.mse_loss(valid_output, valid_targets))
            history.append(
                {"epoch": epoch, "train_loss": train_loss / n_train, "valid_loss": valid_loss}
            )
            say(
                f"{settings.system_id} epoch {epoch}/{settings.max_epochs}: "
                f"train loss {train_loss / n_train:.4f}, validation loss {valid_loss:.4f}"
            )
            if valid_loss < best_loss:
                best_loss, best_epoch, stale = valid_loss, epoch, 0
                best_state = {k: v.detach().cpu().clone() for k, v in network.state_dict().items()}
            else:
                stale += 1
                if stale >= settings.patience:
                    break
    if best_state is None:  # every validation loss NaN: no epoch to keep, nothing to save
        raise TsrateError(
            f"{settings.system_id}: training diverged: the validation loss was not finite in "
            f"any of its {len(history)} epochs, so there are no weights to save; try another "
            "vit_seed or vit_size, and check the training prices"
        )
    metadata = {
        "system_id": settings.system_id,
        "settings": dataclasses.asdict(settings),
        "training_windows": n_train,
        "validation_windows": n_valid,
        "purged_windows": purged,
        "first_window_end": str(windows.end_dates[0]),
        "last_window_end": str(windows.end_dates[-1]),
        "tickers": sorted(set(windows.tickers.tolist())),
        "best_epoch": best_epoch,
        "validation_loss": best_loss,
        "history": history,
        "device": device,
        "seconds": time.perf_counter() - started,
        "git_revision": _git_revision(),
        "torch": torch.__version__,
    }
    return best_state, metadata


def sample_tickers() -> list[str]:
    """Every ticker of the bundled S&P 500 sample (skfolio), sorted: read from the header of
    skfolio's bundled CSV (importing skfolio pulls in scikit-learn, about a second), falling
    back to skfolio's loader when that file is not where this version keeps it."""
    import gzip
    import importlib.util

    spec = importlib.util.find_spec("skfolio")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "datasets" / "data" / "sp500_dataset.csv.gz"
        if path.is_file():
            with gzip.open(path, "rt") as handle:
                header = handle.readline().strip().split(",")
            if header[:1] == ["Date"] and len(header) > 1:
                return sorted(header[1:])
    from skfolio.datasets import load_sp500_dataset

    return sorted(str(column) for column in load_sp500_dataset().columns)


def training_tickers(study_tickers: Sequence[str], chosen: Any) -> tuple[str, ...]:
    """The training tickers: ``chosen`` (list or comma/space separated string), or when empty
    every sample ticker except the study's. A study ticker among them is an error: the ViT
    must not have seen the companies it is rated on."""
    study = {str(t).upper() for t in study_tickers}
    if isinstance(chosen, str):
        chosen = [part for part in chosen.replace(",", " ").split() if part]
    if chosen:
        tickers = tuple(str(t).upper() for t in chosen)
        overlap = sorted(study.intersection(tickers))
        if overlap:
            raise TsrateError(
                f"vit_training_tickers {list(tickers)} include study companies {overlap}; the "
                "ViT-num-spec systems train on companies the study does not rate (leave the "
                "var empty for every sample ticker except the study's)"
            )
        return tickers
    tickers = tuple(t for t in sample_tickers() if t not in study)
    if not tickers:
        raise TsrateError("every S&P 500 sample ticker is a study ticker: none left to train on")
    return tickers


def checkpoint_row(path: Path, metadata: dict[str, Any], key: str) -> dict[str, Any]:
    """One ``raw.model_checkpoints`` row from a checkpoint's path and metadata."""
    settings = metadata.get("settings", {})
    trained_at = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC).replace(tzinfo=None)
    return {
        "system_id": metadata.get("system_id", ""),
        "checkpoint_key": key,
        "checkpoint_path": str(path),
        "model_size": settings.get("size"),
        "train_start": settings.get("train_start"),
        "train_end": settings.get("train_end"),
        "first_window_end": metadata.get("first_window_end"),
        "last_window_end": metadata.get("last_window_end"),
        "tickers": ",".join(metadata.get("tickers", [])),
        "training_windows": metadata.get("training_windows"),
        "validation_windows": metadata.get("validation_windows"),
        "best_epoch": metadata.get("best_epoch"),
        "validation_loss": metadata.get("validation_loss"),
        "device": metadata.get("device"),
        "training_seconds": metadata.get("seconds"),
        "git_revision": metadata.get("git_revision", "unknown"),
        "settings_json": json.dumps(settings, sort_keys=True, default=str),
        "trained_at": trained_at,
        "registered_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
    }


def store_checkpoint_row(con: Any, row: dict[str, Any]) -> None:
    """Insert (or, for a retrained key, replace) one ``raw.model_checkpoints`` row."""
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    con.execute(
        f"insert or replace into raw.model_checkpoints ({columns}) values ({marks})",
        list(row.values()),
    )


def settings_from_vars(
    system_id: str,
    tickers: Sequence[str],
    context_length: int,
    horizon: int,
    variables: dict[str, Any],
    study_period: tuple[dt.date, dt.date] | None = None,
) -> TrainingSettings:
    """The variant's training settings from ``dbt_project.yml`` vars (see the module doc);
    ``tickers`` are the study's (excluded from training); with ``study_period`` a training
    period overlapping it is an error (it would leak the study's market into the weights)."""
    from tsrate.config import as_date

    if system_id not in VARIANTS:
        raise TsrateError(f"unknown ViT-num-spec variant {system_id!r}; known: {sorted(VARIANTS)}")
    start_var, end_var, start_default, end_default = VARIANTS[system_id]
    train_start = as_date(variables.get(start_var, start_default), start_var)
    train_end = as_date(variables.get(end_var, end_default), end_var)
    if study_period is not None and train_start <= study_period[1] and train_end >= study_period[0]:
        raise TsrateError(
            f"{system_id}: training period {train_start}..{train_end} overlaps the study period "
            f"{study_period[0]}..{study_period[1]}; end it before {study_period[0]} "
            f"(var {end_var}) so nothing the study rates leaks into training"
        )
    return TrainingSettings(
        system_id=system_id,
        train_start=train_start,
        train_end=train_end,
        tickers=training_tickers(tickers, variables.get("vit_training_tickers")),
        context_length=context_length,
        horizon=horizon,
        size=str(variables.get("vit_size", "small")),
        seed=int(variables.get("vit_seed", 42)),
        stride=int(variables.get("vit_training_stride", 1)),
        max_windows=int(variables.get("vit_max_training_windows", 3000)),
        max_epochs=int(variables.get("vit_max_epochs", 8)),
    )
