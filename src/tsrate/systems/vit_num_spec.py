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
``validation_fraction`` for validation, purged (a training window whose targets reach past the
first validation origin is dropped). AdamW, MSE, seeded (``vit_seed``), early stopping on
the validation loss (patience 2), best epoch kept. The checkpoint and its metadata (data
range, tickers, settings, losses, git revision) land in
``<model dir>/vit_num_spec/<system>-<key>.pt`` (+ ``.json``), ``key`` = hash of the settings
and the training prices; a rerun with the same key loads it. The key is part of the
system's fingerprint, so new weights mean new forecast partitions.

Device: ``cuda`` when torch sees a GPU (``TSRATE_VIT_DEVICE`` overrides); inference batch
``TSRATE_VIT_BATCH_SIZE`` (default 256 on CPU, 4096 on a GPU).

Code: the network in :mod:`tsrate.systems.vit_model`, the training (settings, data, loop,
checkpoint rows) in :mod:`tsrate.systems.vit_training`; this module is the forecasting
system and re-exports both for ``tsrate.systems.vit_num_spec:<variant>`` users.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.inputs.images import rendering_fingerprint, vit_num_spec_images
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
from tsrate.systems.vit_model import (
    MODEL_VERSION,
    PATCH_SIZE,
    SIZES,
    VitSize,
    build_network,
    image_tensor,
)
from tsrate.systems.vit_training import (
    VARIANTS,
    TrainingSettings,
    TrainingWindows,
    checkpoint_row,
    prices_fingerprint,
    remembered_key,
    sample_tickers,
    settings_from_vars,
    standardised_targets,
    store_checkpoint_row,
    train,
    training_prices,
    training_tickers,
    training_windows,
)

__all__ = [
    "MODEL_VERSION",
    "PATCH_SIZE",
    "SIZES",
    "TrainingSettings",
    "TrainingWindows",
    "VARIANTS",
    "VitNumSpecSystem",
    "VitSize",
    "build_network",
    "checkpoint_row",
    "create",
    "image_tensor",
    "prices_fingerprint",
    "sample_tickers",
    "settings_from_vars",
    "show_input",
    "standardised_targets",
    "store_checkpoint_row",
    "train",
    "training_prices",
    "training_tickers",
    "training_windows",
]

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
        if not batch_size and env_batch:
            try:
                int(env_batch)
            except ValueError:
                raise TsrateError(
                    f"TSRATE_VIT_BATCH_SIZE={env_batch!r} is not a whole number: set a batch "
                    "size of at least 1, or unset it (256 on a CPU, 4096 on a GPU)"
                ) from None
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
        """Hash of the training settings, the training prices and the images' drawing
        constants (:func:`~tsrate.inputs.images.rendering_fingerprint`): the checkpoint's name."""
        if self._key is None:

            def compute() -> str:
                return settings_key(
                    dataclasses.asdict(self.settings),
                    prices_fingerprint(self.prices),
                    rendering_fingerprint(),
                )

            # prices given by the caller are always hashed; the bundled sample's key is
            # remembered per file stamp (listing the systems reads no prices)
            self._key = (
                compute()
                if self._prices is not None
                else remembered_key(self.settings, self._cache_dir or model_cache_dir(), compute)
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
    (:func:`tsrate.robustness.forecast.plan.make_batch`, then the system's own
    :meth:`VitNumSpecSystem.model_images` over the batch, so P6's sentiment stripe is the
    one the run drew) and the window's image picked out. Errors name what is wrong."""
    from tsrate.config import as_date
    from tsrate.inputs.perturbations import PERTURBATIONS
    from tsrate.robustness.forecast.plan import load_series, make_batch
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
