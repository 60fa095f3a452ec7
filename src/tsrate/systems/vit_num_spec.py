"""ViT-num-spec (paper S_v1 / S_v2): a vision transformer reading the numeric-stripe +
wavelet-spectrogram image of a window (:func:`tsrate.inputs.images.vit_num_spec_images`) and
predicting the d-step horizon, trained by tsrate.

Model: 16 × 16 non-overlapping patches of the 128 × 128 RGB image (64 tokens) projected to
``dim``, a learned class token and learned 1-D positional embeddings, a pre-norm transformer
encoder (GELU, no dropout), a final layer norm and a two-layer MLP head on the class token.
Sizes (var ``vit_size``): ``tiny`` (tests), ``small`` (CPU default: dim 64, 2 layers),
``base`` (the paper's ViT-Base: dim 768, 12 layers, 12 heads, ~86M parameters; for GPUs).

Target: the model predicts the d future values standardised relative to the last input
value, y_k = (x_{t+k} − x_t) / σ, where x_t is the last context value (after filling missing
values) and σ the context's standard deviation (the same σ that standardises the image);
forecasts are x_t + σ · ŷ_k. Inputs are the (possibly perturbed) context as the system
receives it; P4–P6 leave the numbers unchanged and the system perturbs its own image
(:func:`tsrate.inputs.perturbations.perturb_images`); P6 asks the default sentiment system
(:mod:`tsrate.inputs.sentiment`) for each window's label.

Training (each variant, on clean images): the closes of the training tickers (var
``vit_training_tickers``; empty = every ticker of the bundled S&P 500 sample EXCEPT the
study's, as the paper trains on companies it does not rate; naming a study ticker is an
error) over the variant's training period — pre-COVID ``vit_precovid_start``..
``vit_precovid_end`` (default 2000-01-03..2014-12-31), COVID ``vit_covid_start``..
``vit_covid_end`` (default 2020-03-02..2021-12-28, the day before the default study's first
price on 2021-12-29: every training value, context or target, predates every value the
study reads, so nothing leaks). A period reaching into the study period is an error.
Windows of the study's n and d inside the period (stride ``vit_training_stride``), at most
``vit_max_training_windows`` (evenly spaced in date order), split by date: the latest
``validation_fraction`` for validation. AdamW, MSE, seeded (``vit_seed``), early stopping on
the validation loss (patience 2), best epoch kept. The checkpoint and its metadata (data
range, tickers, settings, losses, git revision) land in
``<model dir>/vit_num_spec/<system>-<key>.pt`` (+ ``.json``), ``key`` = hash of the settings
and the training prices; a rerun with the same key loads it. The key is part of the
system's fingerprint, so new weights mean new forecast partitions.

Device: ``cuda`` when torch sees a GPU (``TSRATE_VIT_DEVICE`` overrides); inference batch
``TSRATE_VIT_BATCH_SIZE`` (default 256 on CPU, 4096 on a GPU).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.inputs.images import IMAGE_SIZE, fill_missing, standardise, vit_num_spec_images
from tsrate.inputs.perturbations import perturb_images
from tsrate.inputs.sentiment import (
    SentimentSystem,
    default_sentiment_system,
    model_cache_dir,
    multimodal_vars,
    save_checkpoint,
    settings_key,
)
from tsrate.systems.base import Availability, ForecastBatch

PATCH_SIZE = 16
#: Bumped when training or model code changes what a cached checkpoint means.
MODEL_VERSION = 1


@dataclasses.dataclass(frozen=True)
class VitSize:
    dim: int
    depth: int
    heads: int
    mlp_dim: int


SIZES: dict[str, VitSize] = {
    "tiny": VitSize(dim=32, depth=1, heads=2, mlp_dim=64),
    "small": VitSize(dim=64, depth=2, heads=4, mlp_dim=128),
    "base": VitSize(dim=768, depth=12, heads=12, mlp_dim=3072),
}

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


@dataclasses.dataclass(frozen=True)
class TrainingWindows:
    contexts: np.ndarray  # windows × n
    futures: np.ndarray  # windows × d
    end_dates: np.ndarray  # datetime64[D], the forecast origins
    tickers: np.ndarray


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
        parts.append(
            (
                closes[ends[:, None] + offsets],
                closes[ends[:, None] + np.arange(1, d + 1)],
                pd.to_datetime(rows["price_date"]).to_numpy().astype("datetime64[D]")[ends],
                np.full(len(ends), ticker, dtype=object),
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
    order = np.lexsort((tickers.astype(str), end_dates))
    if len(order) > settings.max_windows:
        order = order[np.round(np.linspace(0, len(order) - 1, settings.max_windows)).astype(int)]
    return TrainingWindows(contexts[order], futures[order], end_dates[order], tickers[order])


def standardised_targets(
    contexts: np.ndarray, futures: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(targets (future − last) / σ, last, σ) — see the module docstring."""
    _, _, std = standardise(contexts)
    last = fill_missing(contexts)[:, -1]
    return (futures - last[:, None]) / std[:, None], last, std


# -- model ------------------------------------------------------------------------------------


def build_network(size: VitSize, horizon: int):
    """The ViT-num-spec network (torch ``nn.Module``) mapping (B, 3, 128, 128) → (B, horizon)."""
    import torch
    from torch import nn

    class VitNumSpecNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            tokens = (IMAGE_SIZE // PATCH_SIZE) ** 2
            self.patch_embedding = nn.Conv2d(3, size.dim, PATCH_SIZE, stride=PATCH_SIZE)
            self.class_token = nn.Parameter(torch.zeros(1, 1, size.dim))
            self.position_embedding = nn.Parameter(torch.randn(1, tokens + 1, size.dim) * 0.02)
            layer = nn.TransformerEncoderLayer(
                size.dim,
                size.heads,
                size.mlp_dim,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            self.encoder = nn.TransformerEncoder(
                layer, size.depth, norm=nn.LayerNorm(size.dim), enable_nested_tensor=False
            )
            self.head = nn.Sequential(
                nn.Linear(size.dim, size.mlp_dim), nn.GELU(), nn.Linear(size.mlp_dim, horizon)
            )

        def forward(self, images: torch.Tensor) -> torch.Tensor:
            patches = self.patch_embedding(images).flatten(2).transpose(1, 2)
            tokens = torch.cat([self.class_token.expand(len(patches), -1, -1), patches], dim=1)
            encoded = self.encoder(tokens + self.position_embedding)
            return self.head(encoded[:, 0])

    return VitNumSpecNetwork()


def image_tensor(images: np.ndarray, device: Any = "cpu"):
    """uint8 (B, H, W, 3) → float32 (B, 3, H, W) in [−1, 1] on ``device``."""
    import torch

    tensor = torch.from_numpy(np.ascontiguousarray(images)).to(device)
    return tensor.permute(0, 3, 1, 2).float().div_(127.5).sub_(1.0)


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
    n_valid = max(1, int(round(count * settings.validation_fraction)))
    n_train = count - n_valid
    if n_train < 2:
        raise TsrateError(f"{settings.system_id}: only {count} training windows; need more")
    train_images, valid_images = images[:n_train], images[n_train:]
    train_targets = torch.from_numpy(targets[:n_train].astype(np.float32))
    valid_targets = torch.from_numpy(targets[n_train:].astype(np.float32)).to(device)
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
    metadata = {
        "system_id": settings.system_id,
        "settings": dataclasses.asdict(settings),
        "training_windows": n_train,
        "validation_windows": n_valid,
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


# -- the system -------------------------------------------------------------------------------


class VitNumSpecSystem:
    """One trained ViT-num-spec variant as a forecasting system."""

    def __init__(
        self,
        settings: TrainingSettings,
        prices: pd.DataFrame | None = None,
        sentiment: SentimentSystem | None = None,
        cache_dir: Path | None = None,
        device: str | None = None,
        batch_size: int | None = None,
    ):
        self.system_id = settings.system_id
        self.settings = settings
        self._prices = prices
        self._sentiment = sentiment
        self._cache_dir = cache_dir
        self._device = device or os.environ.get("TSRATE_VIT_DEVICE") or None
        env_batch = os.environ.get("TSRATE_VIT_BATCH_SIZE")
        self._batch_size = batch_size or (int(env_batch) if env_batch else None)
        if self._batch_size is not None and self._batch_size < 1:
            raise TsrateError(f"ViT batch size must be at least 1, got {self._batch_size}")
        self._network = None
        self._key: str | None = None
        self.trained_now = False
        self.metadata: dict[str, Any] = {}

    # -- settings and cache --------------------------------------------------------------------

    @property
    def prices(self) -> pd.DataFrame:
        if self._prices is None:
            self._prices = training_prices(self.settings)
        return self._prices

    @property
    def key(self) -> str:
        """Hash of the training settings and the training prices (the checkpoint's name)."""
        if self._key is None:
            self._key = settings_key(
                dataclasses.asdict(self.settings), prices_fingerprint(self.prices)
            )
        return self._key

    @property
    def checkpoint_path(self) -> Path:
        folder = self._cache_dir or model_cache_dir()
        return folder / "vit_num_spec" / f"{self.system_id}-{self.key}.pt"

    @property
    def sentiment(self) -> SentimentSystem:
        if self._sentiment is None:
            self._sentiment = default_sentiment_system(self.settings.context_length)
        return self._sentiment

    @property
    def device(self) -> str:
        if self._device is None:
            import torch

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    @property
    def batch_size(self) -> int:
        return self._batch_size or (4096 if self.device.startswith("cuda") else 256)

    # -- interface -----------------------------------------------------------------------------

    def fingerprint(self) -> str:
        return f"vit_num_spec;model={self.key};image=v1;sentiment={self.sentiment.fingerprint()}"

    def availability(self) -> Availability:
        """Whether torch and PyWavelets are installed, without importing torch (seconds) unless
        a CUDA device was asked for; ``prepare`` and the workers import it."""
        import importlib.util

        missing = [name for name in ("pywt", "torch") if importlib.util.find_spec(name) is None]
        if missing:
            return Availability(
                False,
                "needs torch and PyWavelets (pip install torch==2.13.0 PyWavelets): "
                f"{', '.join(missing)} not installed",
            )
        if self._device is None:
            device = "cuda when torch sees a GPU, else cpu"
        else:
            device = self.device
            if device.startswith("cuda"):
                import torch

                if not torch.cuda.is_available():
                    return Availability(False, f"device {device!r} asked for but no CUDA GPU")
        try:
            path = self.checkpoint_path
        except TsrateError as exc:
            return Availability(False, str(exc))
        state = "trained" if path.exists() else "trains on first run (cached)"
        return Availability(
            True,
            f"{self.settings.size} ViT on {device}, trained on {list(self.settings.tickers)} "
            f"{self.settings.train_start}..{self.settings.train_end}; {state}",
        )

    def prepare(self, progress: Callable[[str], None] | None = None, force: bool = False) -> None:
        """Load the cached weights, training and caching them first if missing (call once in
        the main process before forecasting, so parallel workers only load); ``force``
        retrains and replaces the checkpoint."""
        if self._network is not None and not force:
            return
        import torch

        path = self.checkpoint_path
        if path.exists() and not force:
            state = torch.load(path, map_location="cpu", weights_only=True)
            meta = path.with_suffix(".pt.json")
            self.metadata = json.loads(meta.read_text()) if meta.exists() else {}
        else:
            if progress:
                progress(f"training {self.system_id} ({self.settings.size}) → {path}")
            state, self.metadata = train(self.settings, self.prices, self.device, progress)
            self.metadata["key"] = self.key
            save_checkpoint(path, state, self.metadata)
            self.trained_now = True
        network = build_network(SIZES[self.settings.size], self.settings.horizon)
        network.load_state_dict(state)
        self._network = network.to(self.device).eval()

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        if batch.horizon != self.settings.horizon:
            raise TsrateError(
                f"{self.system_id} was trained for horizon {self.settings.horizon}, "
                f"asked for {batch.horizon}"
            )
        contexts = np.asarray(batch.contexts, dtype=float)
        if contexts.shape[1] != self.settings.context_length:
            raise TsrateError(
                f"{self.system_id} was trained on contexts of {self.settings.context_length} "
                f"values, got {contexts.shape[1]}"
            )
        return self.forecast(contexts, batch.perturbation_id)

    def register_checkpoint(self, con: Any) -> None:
        """Record the prepared checkpoint in ``raw.model_checkpoints`` (one row per system and
        key; a retrained key replaces its row). Call in the process owning the warehouse
        connection — never in a forecast worker."""
        if self._network is None:
            raise TsrateError(f"{self.system_id}: prepare() before registering its checkpoint")
        store_checkpoint_row(con, checkpoint_row(self.checkpoint_path, self.metadata, self.key))

    # -- model ---------------------------------------------------------------------------------

    def model_images(self, contexts: np.ndarray, perturbation_id: str) -> np.ndarray:
        """The exact images the model receives for ``contexts`` under ``perturbation_id``."""
        images = vit_num_spec_images(contexts)
        sentiments = self.sentiment.predict(contexts).labels if perturbation_id == "P6" else None
        return perturb_images(images, perturbation_id, sentiments)

    def forecast(self, contexts: np.ndarray, perturbation_id: str = "P0") -> np.ndarray:
        import torch

        self.prepare()
        images = self.model_images(contexts, perturbation_id)
        _, last, std = standardised_targets(contexts, np.zeros((len(contexts), 1)))
        outputs = []
        with torch.no_grad():
            for start in range(0, len(images), self.batch_size):
                chunk = image_tensor(images[start : start + self.batch_size], self.device)
                outputs.append(self._network(chunk).float().cpu().numpy())
        predicted = np.concatenate(outputs).astype(float)
        return last[:, None] + std[:, None] * predicted


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


def create(
    study, companies, variant: str | None = None, cache_dir: Path | None = None
) -> VitNumSpecSystem:
    """Registry entry point: ``tsrate.systems.vit_num_spec:<system_id>``; ``cache_dir``: the
    model folder (default :func:`tsrate.inputs.sentiment.model_cache_dir`)."""
    if variant is None:
        raise TsrateError(
            "name the ViT-num-spec variant in the systems seed: "
            f"tsrate.systems.vit_num_spec:<variant>, variant one of {sorted(VARIANTS)}"
        )
    variables = multimodal_vars()
    settings = settings_from_vars(
        variant,
        study.tickers,
        study.context_length,
        study.horizon,
        variables,
        study_period=(study.start, study.end),
    )
    sentiment = default_sentiment_system(study.context_length, variables)
    return VitNumSpecSystem(settings, sentiment=sentiment, cache_dir=cache_dir)


def show_input(
    con: Any,
    study,  # noqa: ANN001 - tsrate.config.Study
    companies: pd.DataFrame,
    system_id: str,
    ticker: str,
    window_end: str,
    perturbation_id: str,
) -> np.ndarray:
    """The exact image ``system_id`` received for ``ticker``'s window ending ``window_end``
    (YYYY-MM-DD) under ``perturbation_id`` in ``study`` on the warehouse ``con``: the
    ticker's whole partition is built as ``tsrate run`` builds it
    (:func:`tsrate.robustness.forecast.execute.make_batch`, then the system's own
    :meth:`VitNumSpecSystem.model_images` over the batch, so P6's sentiment stripe is the
    one the run drew) and the window's image picked out. Errors name what is wrong."""
    from tsrate.config import as_date
    from tsrate.inputs.perturbations import PERTURBATIONS
    from tsrate.robustness.forecast.execute import load_series, make_batch
    from tsrate.systems.registry import create_system, load_systems_seed

    seed = load_systems_seed().set_index("system_id")
    if system_id not in seed.index:
        raise TsrateError(f"unknown system {system_id!r}; known systems: {sorted(seed.index)}")
    if perturbation_id not in PERTURBATIONS:
        raise TsrateError(
            f"unknown perturbation {perturbation_id!r}; known: {sorted(PERTURBATIONS)}"
        )
    implementation = seed.loc[system_id, "implementation"]
    if not implementation or not implementation.startswith(f"{__name__}:"):
        image_systems = sorted(seed.index[seed["implementation"].str.startswith(f"{__name__}:")])
        raise TsrateError(
            f"system {system_id!r} does not read images; show-input knows {image_systems}"
        )
    accepted = seed.loc[system_id, "accepted_perturbations"].split()
    if perturbation_id not in accepted:
        raise TsrateError(
            f"{system_id} is not rated on {perturbation_id} (it accepts {' '.join(accepted)})"
        )
    ticker = ticker.upper()
    if ticker not in study.tickers:
        raise TsrateError(
            f"{ticker} is not a study ticker (study: {list(study.tickers)}); pass --tickers to "
            "show a window of another study"
        )
    day = as_date(window_end, "--date")
    system = create_system(implementation, study, companies)
    series = load_series(con, dataclasses.replace(study, tickers=(ticker,)))[ticker]
    batch = make_batch(study, series, perturbation_id)
    ends = batch.window_end_dates.astype("datetime64[D]")
    matches = np.flatnonzero(ends == np.datetime64(day, "D"))
    if not matches.size:
        nearest = ends[np.argsort(np.abs((ends - np.datetime64(day, "D")).astype(int)))[:2]]
        raise TsrateError(
            f"{day} is not a window end of {ticker} in the study ({len(ends)} windows ending "
            f"{ends[0]}..{ends[-1]}, n = {study.context_length}, d = {study.horizon}, stride "
            f"{study.stride}); nearest: {', '.join(str(d) for d in sorted(nearest))}"
        )
    return system.model_images(np.asarray(batch.contexts, dtype=float), perturbation_id)[matches[0]]
