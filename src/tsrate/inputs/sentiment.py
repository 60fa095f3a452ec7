"""Sentiment systems for the composite perturbation P6: read a line plot, say −1/0/1.

The paper (section 4.1) passes each window's line plot to a zero-shot CLIP sentiment
system; its label is scaled to 0–255 and drawn as a stripe into the model's image
(:func:`tsrate.inputs.perturbations.perturb_images`). Two systems here:

- ``lineplot_cnn`` (default, offline): a small CNN trained by tsrate on line plots of
  seeded synthetic random walks, labelled by the trend rule below. Trained once per
  settings and cached under the model folder (``warehouse/models/sentiment/<key>.pt``).
- ``clip_zero_shot`` (when the user has CLIP weights locally: var ``sentiment_clip_path``
  or ``TSRATE_CLIP_PATH``, a folder saved by ``transformers``' ``CLIPModel.save_pretrained``
  with its tokenizer): the three prompts of :data:`CLIP_PROMPTS`, highest similarity wins.

Trend rule (the reference label recorded beside every output, so a sentiment system's own
errors can be studied): over the window (missing values filled as in :mod:`tsrate.inputs.images`),
``trend_score`` = least-squares slope × (n − 1) / (max − min), the fitted rise over the
window as a share of its range (−1..1, 0 for a flat window; a min–max scaled plot shows
exactly this). ``trend_label`` = 1 if the score > threshold, −1 if < −threshold, else 0
(threshold: var ``sentiment_trend_threshold``, default 0.4).

Every output lands in ``raw.sentiments`` (one row per run, sentiment system, ticker and
window), read from the clean line plot: P6 leaves the numeric series unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import duckdb
import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.inputs.images import fill_missing, line_plot_images, rendering_fingerprint
from tsrate.inputs.perturbations import sentiment_intensity

#: Bumped when training or inference code changes what a cached model means.
CLASSIFIER_VERSION = 1
FEATURE_SIZE = 32  # the CNN reads the 128 × 128 line plot pooled 4 × 4 to 32 × 32
CLIP_PROMPTS = (
    "a line chart of a stock price going down",
    "a line chart of a flat stock price",
    "a line chart of a stock price going up",
)
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
LABELS = np.array([-1, 0, 1])


def multimodal_vars() -> dict[str, Any]:
    """``dbt_project.yml`` vars, with ``vit_*`` / ``sentiment_*`` ones overridden by the JSON
    object in ``TSRATE_MULTIMODAL_VARS`` (e.g. ``{"vit_size": "tiny"}``; inherited by workers)."""
    from tsrate.config import project_vars

    variables = project_vars()
    raw = os.environ.get("TSRATE_MULTIMODAL_VARS", "").strip()
    if raw:
        try:
            overrides = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TsrateError(f"TSRATE_MULTIMODAL_VARS is not a JSON object: {exc}") from exc
        if not isinstance(overrides, dict):
            raise TsrateError("TSRATE_MULTIMODAL_VARS must be a JSON object")
        bad = sorted(k for k in overrides if not k.startswith(("vit_", "sentiment_")))
        if bad:
            raise TsrateError(f"TSRATE_MULTIMODAL_VARS: only vit_* and sentiment_* vars, got {bad}")
        variables.update(overrides)
    return variables


def model_cache_dir() -> Path:
    """Where tsrate keeps the models it trains: ``TSRATE_MODEL_DIR``, else ``models/``
    beside the live warehouse file."""
    env = os.environ.get("TSRATE_MODEL_DIR")
    if env:
        return Path(env)
    from tsrate.config import warehouse_path

    return warehouse_path().parent / "models"


def settings_key(settings: Mapping[str, Any], *extra: bytes) -> str:
    """A 16-hex-digit hash of JSON settings and optional raw bytes (e.g. training prices)."""
    digest = hashlib.sha256(json.dumps(dict(settings), sort_keys=True, default=str).encode())
    for part in extra:
        digest.update(part)
    return digest.hexdigest()[:16]


def save_checkpoint(path: Path, state: dict[str, Any], metadata: dict[str, Any]) -> None:
    """Write ``path`` (torch state) and ``path.json`` (metadata) atomically (temp + rename),
    so a killed run never leaves a half-written model behind."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(state, temporary)
    meta_temporary = path.with_name(f".{path.name}.{os.getpid()}.json.tmp")
    meta_temporary.write_text(json.dumps(metadata, indent=2, sort_keys=True, default=str))
    os.replace(meta_temporary, path.with_suffix(path.suffix + ".json"))
    os.replace(temporary, path)


# -- trend rule ------------------------------------------------------------------------------


def trend_scores(contexts: np.ndarray) -> np.ndarray:
    """Least-squares rise over each window as a share of its range (−1..1; flat → 0)."""
    filled = fill_missing(contexts)
    length = filled.shape[1]
    time = np.arange(length) - (length - 1) / 2.0
    slope = (filled - filled.mean(axis=1, keepdims=True)) @ time / (time @ time)
    span = filled.max(axis=1) - filled.min(axis=1)
    return np.where(span > 1e-12, slope * (length - 1) / np.where(span > 1e-12, span, 1.0), 0.0)


def trend_labels(contexts: np.ndarray, threshold: float = 0.4) -> np.ndarray:
    """The trend rule's label per window: 1 (rising), −1 (falling), 0 (neither)."""
    scores = trend_scores(contexts)
    return np.where(scores > threshold, 1, np.where(scores < -threshold, -1, 0)).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class SentimentOutput:
    """Labels −1/0/1 and class probabilities (windows × 3: negative, neutral, positive)."""

    labels: np.ndarray
    probabilities: np.ndarray


class SentimentSystem(Protocol):
    sentiment_system_id: str

    def fingerprint(self) -> str: ...

    def predict(self, contexts: np.ndarray) -> SentimentOutput: ...


# -- the default offline system: a small CNN on line plots --------------------------------------


@dataclasses.dataclass(frozen=True)
class LinePlotSettings:
    """Everything that determines the trained line-plot classifier (its cache key)."""

    context_length: int = 80
    trend_threshold: float = 0.4
    seed: int = 42
    training_walks: int = 1500
    validation_walks: int = 300
    epochs: int = 5
    batch_size: int = 64
    learning_rate: float = 3e-3
    version: int = CLASSIFIER_VERSION

    @property
    def key(self) -> str:
        return settings_key(dataclasses.asdict(self), rendering_fingerprint())


def synthetic_walks(count: int, length: int, seed: int) -> np.ndarray:
    """Seeded geometric random walks (count × length) with per-walk drift and volatility,
    spread so that all three trend labels are common."""
    rng = np.random.default_rng(seed)
    volatility = rng.uniform(0.005, 0.03, size=(count, 1))
    drift = volatility * rng.uniform(-0.15, 0.15, size=(count, 1))
    steps = drift + volatility * rng.standard_normal((count, length))
    return 100.0 * np.exp(np.cumsum(steps, axis=1))


def line_plot_features(contexts: np.ndarray) -> np.ndarray:
    """(windows × 1 × 32 × 32) float32 ink density of the line plots (0 = white)."""
    plots = line_plot_images(contexts)
    ink = 1.0 - plots.astype(np.float32).mean(axis=-1) / 255.0
    windows, height, width = ink.shape
    pooled = ink.reshape(
        windows, FEATURE_SIZE, height // FEATURE_SIZE, FEATURE_SIZE, width // FEATURE_SIZE
    ).mean(axis=(2, 4))
    return pooled[:, None, :, :]


def _classifier_network():
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(1, 8, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 16, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * (FEATURE_SIZE // 4) ** 2, 3),
    )


def train_line_plot_classifier(settings: LinePlotSettings) -> tuple[dict[str, Any], float]:
    """Train the CNN on synthetic line plots; returns (state dict, validation accuracy)."""
    import torch

    walks = synthetic_walks(
        settings.training_walks + settings.validation_walks, settings.context_length, settings.seed
    )
    features = torch.from_numpy(line_plot_features(walks))
    targets = torch.from_numpy(trend_labels(walks, settings.trend_threshold) + 1)
    train_x, valid_x = features[: settings.training_walks], features[settings.training_walks :]
    train_y, valid_y = targets[: settings.training_walks], targets[settings.training_walks :]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a network this small only loses to thread hand-offs
    try:
        return _fit_classifier(settings, train_x, train_y, valid_x, valid_y)
    finally:
        torch.set_num_threads(threads)


def _fit_classifier(settings: LinePlotSettings, train_x, train_y, valid_x, valid_y):
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(settings.seed)
        network = _classifier_network()
        optimiser = torch.optim.Adam(network.parameters(), lr=settings.learning_rate)
        order_rng = np.random.default_rng(settings.seed)
        loss_function = torch.nn.CrossEntropyLoss()
        for _ in range(settings.epochs):
            network.train()
            order = torch.from_numpy(order_rng.permutation(settings.training_walks))
            for start in range(0, settings.training_walks, settings.batch_size):
                rows = order[start : start + settings.batch_size]
                optimiser.zero_grad()
                loss = loss_function(network(train_x[rows]), train_y[rows])
                loss.backward()
                optimiser.step()
        network.eval()
        with torch.no_grad():
            accuracy = float((network(valid_x).argmax(dim=1) == valid_y).float().mean())
    return network.state_dict(), accuracy


class LinePlotSentiment:
    """The default sentiment system: tsrate's line-plot CNN (trained on first use, cached)."""

    def __init__(self, settings: LinePlotSettings | None = None, cache_dir: Path | None = None):
        self.settings = settings or LinePlotSettings()
        self.sentiment_system_id = "lineplot_cnn"
        self._cache_dir = cache_dir
        self._network = None
        self.validation_accuracy: float | None = None

    @property
    def checkpoint_path(self) -> Path:
        folder = self._cache_dir or model_cache_dir()
        return folder / "sentiment" / f"lineplot_cnn-{self.settings.key}.pt"

    def fingerprint(self) -> str:
        return f"{self.sentiment_system_id}:{self.settings.key}"

    def prepare(self, progress: Callable[[str], None] | None = None) -> None:
        """Load the cached classifier, training and caching it first if it is missing."""
        if self._network is not None:
            return
        import torch

        path = self.checkpoint_path
        if path.exists():
            state = torch.load(path, map_location="cpu", weights_only=True)
            meta = path.with_suffix(".pt.json")
            if meta.exists():
                self.validation_accuracy = json.loads(meta.read_text()).get("validation_accuracy")
        else:
            if progress:
                progress(f"training the line-plot sentiment classifier ({path.name})")
            state, self.validation_accuracy = train_line_plot_classifier(self.settings)
            save_checkpoint(
                path,
                state,
                {
                    "sentiment_system_id": self.sentiment_system_id,
                    "settings": dataclasses.asdict(self.settings),
                    "validation_accuracy": self.validation_accuracy,
                    "labels": "trend rule on synthetic walks (tsrate.inputs.sentiment)",
                },
            )
        network = _classifier_network()
        network.load_state_dict(state)
        network.eval()
        self._network = network

    def predict(self, contexts: np.ndarray) -> SentimentOutput:
        import torch

        self.prepare()
        features = torch.from_numpy(line_plot_features(contexts))
        with torch.no_grad():
            probabilities = torch.softmax(self._network(features), dim=1).numpy()
        return SentimentOutput(LABELS[probabilities.argmax(axis=1)], probabilities.astype(float))


# -- CLIP zero-shot ---------------------------------------------------------------------------


def _resize_bilinear(images: np.ndarray, size: int) -> np.ndarray:
    """(windows × H × W × 3) uint8 → (windows × size × size × 3) float32 in [0, 1]."""
    from tsrate.inputs.images import resample_matrix

    rows = resample_matrix(images.shape[1], size).astype(np.float32)
    columns = resample_matrix(images.shape[2], size).astype(np.float32)
    scaled = images.astype(np.float32) / 255.0
    return np.einsum("bhwc,hi,wj->bijc", scaled, rows, columns)


class ClipSentiment:
    """Zero-shot CLIP (transformers ``CLIPModel``) on the line plot, from a local folder."""

    def __init__(self, path: str | Path, device: str | None = None):
        self.path = Path(path).expanduser()
        if not (self.path / "config.json").exists():
            raise TsrateError(
                f"CLIP sentiment: {self.path} holds no config.json; point sentiment_clip_path "
                "(or TSRATE_CLIP_PATH) at a folder saved by transformers' CLIPModel.save_pretrained"
            )
        self.sentiment_system_id = f"clip_zero_shot:{self.path.name}"
        self._device = device
        self._model = None
        self._text_features = None

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for file in sorted(self.path.glob("*")):
            if file.is_file():
                digest.update(file.name.encode())
                digest.update(str(file.stat().st_size).encode())
        digest.update("|".join(CLIP_PROMPTS).encode())
        return f"clip_zero_shot:{digest.hexdigest()[:16]}"

    def prepare(self, progress: Callable[[str], None] | None = None) -> None:
        if self._model is not None:
            return
        try:
            import torch
            from transformers import AutoTokenizer, CLIPModel
        except ImportError as exc:
            raise TsrateError(
                f"CLIP sentiment needs torch and transformers: pip install 'tsrate[images]' ({exc})"
            ) from exc
        device = self._device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            model = CLIPModel.from_pretrained(self.path, local_files_only=True).to(device).eval()
            tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise TsrateError(f"CLIP sentiment: cannot load {self.path}: {exc}") from exc
        tokens = tokenizer(list(CLIP_PROMPTS), padding=True, return_tensors="pt").to(device)
        with torch.no_grad():
            text = model.get_text_features(**tokens)
            text = getattr(text, "pooler_output", text)
        self._text_features = text / text.norm(dim=-1, keepdim=True)
        self._model = model
        self._device = device
        preprocessor = self.path / "preprocessor_config.json"
        config = json.loads(preprocessor.read_text()) if preprocessor.exists() else {}
        self._mean = np.array(config.get("image_mean", CLIP_MEAN), dtype=np.float32)
        self._std = np.array(config.get("image_std", CLIP_STD), dtype=np.float32)
        self._size = int(model.config.vision_config.image_size)

    def predict(self, contexts: np.ndarray) -> SentimentOutput:
        import torch

        self.prepare()
        pixels = (_resize_bilinear(line_plot_images(contexts), self._size) - self._mean) / self._std
        tensor = torch.from_numpy(np.ascontiguousarray(pixels.transpose(0, 3, 1, 2)))
        outputs = []
        with torch.no_grad():
            for start in range(0, len(tensor), 256):
                image = self._model.get_image_features(
                    pixel_values=tensor[start : start + 256].to(self._device)
                )
                image = getattr(image, "pooler_output", image)
                image = image / image.norm(dim=-1, keepdim=True)
                logits = self._model.logit_scale.exp() * image @ self._text_features.T
                outputs.append(torch.softmax(logits, dim=1).cpu().numpy())
        probabilities = np.concatenate(outputs).astype(float)
        return SentimentOutput(LABELS[probabilities.argmax(axis=1)], probabilities)


# -- choosing and recording -------------------------------------------------------------------


def default_sentiment_system(
    context_length: int, variables: Mapping[str, Any] | None = None
) -> SentimentSystem:
    """CLIP when the user points at local weights (var ``sentiment_clip_path`` or
    ``TSRATE_CLIP_PATH``), else tsrate's line-plot CNN with the ``sentiment_*`` vars."""
    if variables is None:
        variables = multimodal_vars()
    clip_path = os.environ.get("TSRATE_CLIP_PATH") or str(
        variables.get("sentiment_clip_path") or ""
    )
    if clip_path:
        return ClipSentiment(clip_path)
    return LinePlotSentiment(
        LinePlotSettings(
            context_length=context_length,
            trend_threshold=float(variables.get("sentiment_trend_threshold", 0.4)),
            seed=int(variables.get("sentiment_seed", 42)),
            training_walks=int(variables.get("sentiment_training_walks", 1500)),
            epochs=int(variables.get("sentiment_epochs", 5)),
        )
    )


def sentiment_rows(
    system: SentimentSystem,
    run_id: str,
    ticker: str,
    window_end_dates: np.ndarray,
    contexts: np.ndarray,
    trend_threshold: float = 0.4,
) -> pd.DataFrame:
    """One ``raw.sentiments`` row per window: the system's output beside the trend rule."""
    output = system.predict(contexts)
    return pd.DataFrame(
        {
            "run_id": run_id,
            "sentiment_system_id": system.sentiment_system_id,
            "ticker": ticker,
            "window_end_date": window_end_dates,
            "sentiment": output.labels.astype(np.int32),
            "stripe_intensity": sentiment_intensity(output.labels).astype(np.int32),
            "probability_negative": output.probabilities[:, 0],
            "probability_neutral": output.probabilities[:, 1],
            "probability_positive": output.probabilities[:, 2],
            "trend_score": trend_scores(contexts),
            "trend_label": trend_labels(contexts, trend_threshold).astype(np.int32),
        }
    )


def record_run_sentiments(
    con: duckdb.DuckDBPyConnection,
    study: Any,
    series: Mapping[str, Any],
    run_id: str,
    progress: Callable[[str], None] | None = None,
) -> int:
    """When the study has P6, store the default sentiment system's output for every window
    of every ticker in ``raw.sentiments`` (one transaction); returns the rows stored.

    ``series`` maps ticker → an object with ``clean``, ``end_positions`` and
    ``window_end_dates`` (``tsrate.robustness.forecast.execute.TickerSeries``).
    """
    if "P6" not in study.perturbations:
        return 0
    from tsrate.inputs.windows import contexts as window_contexts
    from tsrate.platform.warehouse import transaction

    variables = multimodal_vars()
    system = default_sentiment_system(study.context_length, variables)
    system.prepare(progress)
    threshold = float(variables.get("sentiment_trend_threshold", 0.4))
    frames = [
        sentiment_rows(
            system,
            run_id,
            ticker,
            item.window_end_dates,
            window_contexts(item.clean, item.end_positions, study.context_length),
            threshold,
        )
        for ticker, item in series.items()
    ]
    frame = pd.concat(frames, ignore_index=True)
    with transaction(con):
        con.register("new_sentiments", frame)
        con.execute("insert into raw.sentiments by name select * from new_sentiments")
        con.unregister("new_sentiments")
    return len(frame)
