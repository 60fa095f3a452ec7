"""Chronos (the paper's S_c, Chronos-T5-small) through the ``chronos-forecasting`` package.

Weights are never downloaded by tsrate. The checkpoint is a local directory or a model id
already in the Hugging Face cache (``HF_HOME`` / ``HF_HUB_CACHE``); it is resolved to a
directory with ``local_files_only=True`` before anything is loaded, so no network call is
made. A missing checkpoint makes the system unavailable with a message saying how to
provide it.

What the system does with our windows:

- Context: the window as is. Chronos scales each window by its mean absolute value and
  quantises it into tokens; a longer context than the model's (512 for the T5 models)
  keeps its last values.
- Missing values (P3): NaN is Chronos' native missing value. The tokenizer gives it the
  pad token and a 0 in the attention mask, and the scale ignores it. No filling here.
- Output: ``num_samples`` sampled paths per window (Chronos samples with the temperature,
  top-k and top-p of the checkpoint's config); the point forecast is their median
  (``torch.quantile`` at 0.5: the mean of the two middle samples when the count is even).
  A horizon longer than the model's prediction length is rolled forward on the median
  by the pipeline (with a warning from chronos). A Chronos-Bolt checkpoint is accepted
  too: it predicts quantiles directly, and its 0.5 quantile is used. The quantiles at
  levels 0.1 … 0.9 (of the samples, or Bolt's own) are stored beside the median.
- Seeded: ``torch.manual_seed(seed)`` at the start of every partition (one ticker under
  one perturbation), so forecasts do not depend on which partitions a worker ran before.
  Samples are drawn batch by batch, so the batch size and device change the draws and are
  part of the fingerprint.
- Device: ``cuda`` when torch sees a GPU (bfloat16 weights), else the CPU (float32).

Settings (environment variable, else dbt var, else default):

=========================  =========================  ==========================
environment                dbt var                    default
=========================  =========================  ==========================
TSRATE_CHRONOS_MODEL       chronos_model              amazon/chronos-t5-small
TSRATE_CHRONOS_NUM_SAMPLES chronos_num_samples        20
TSRATE_CHRONOS_BATCH_SIZE  chronos_batch_size         32 (256 on a GPU)
TSRATE_CHRONOS_DEVICE      chronos_device             cuda if present, else cpu
=========================  =========================  ==========================

The seed is the study's ``random_seed``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.systems._settings import int_setting, setting
from tsrate.systems.base import QUANTILE_LEVELS, Availability, ForecastBatch, QuantileForecasts

DEFAULT_MODEL = "amazon/chronos-t5-small"
INSTALL_HINT = (
    "install the CPU build of torch first (`pip install torch==2.13.0`), then "
    "`pip install 'tsrate[chronos]'` (chronos-forecasting)"
)
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")
SUPPORTED_PIPELINES = ("ChronosPipeline", "ChronosBoltPipeline")


class ChronosUnavailable(TsrateError):
    """The checkpoint cannot be found or is not a Chronos checkpoint."""


def how_to_provide(model: str) -> str:
    """The instructions shown when the checkpoint is missing."""
    repo = model if not _looks_like_path(model) else DEFAULT_MODEL
    return (
        f"on a machine with internet run `hf download {repo}` (older huggingface_hub: "
        f"`huggingface-cli download {repo}`) and copy the Hugging Face cache "
        "(~/.cache/huggingface, or set HF_HOME / HF_HUB_CACHE) here; or point "
        "TSRATE_CHRONOS_MODEL (or the dbt var chronos_model) at a local checkpoint directory "
        "holding config.json and model.safetensors"
    )


def _looks_like_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or "\\" in model or model.count("/") > 1


def resolve_checkpoint(model: str) -> Path:
    """The local directory of ``model`` (a path, or a model id in the Hugging Face cache).

    Never touches the network. Raises :class:`ChronosUnavailable` naming what is missing.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        directory = path
    elif _looks_like_path(model):
        raise ChronosUnavailable(
            f"Chronos checkpoint directory {model} does not exist; " + how_to_provide(model)
        )
    else:
        try:
            from huggingface_hub import snapshot_download
        except ImportError as exc:  # pragma: no cover - comes with transformers
            raise ChronosUnavailable(f"huggingface_hub is not installed; {INSTALL_HINT}") from exc
        try:
            directory = Path(snapshot_download(model, local_files_only=True))
        except Exception as exc:  # noqa: BLE001 - the hub raises several "not cached" types
            raise ChronosUnavailable(
                f"Chronos weights {model!r} are not in the Hugging Face cache "
                f"({type(exc).__name__}); " + how_to_provide(model)
            ) from exc
    config_file = directory / "config.json"
    if not config_file.is_file():
        raise ChronosUnavailable(f"{directory} holds no config.json; " + how_to_provide(model))
    try:
        config = json.loads(config_file.read_text())
    except json.JSONDecodeError as exc:
        raise ChronosUnavailable(f"{config_file} is not valid JSON: {exc}") from exc
    if "chronos_config" not in config and "chronos_pipeline_class" not in config:
        raise ChronosUnavailable(
            f"{directory} is not a Chronos checkpoint (config.json has no chronos_config)"
        )
    pipeline = config.get("chronos_pipeline_class", "ChronosPipeline")
    if pipeline not in SUPPORTED_PIPELINES:
        raise ChronosUnavailable(
            f"{directory}: pipeline {pipeline} is not supported here (supported: "
            f"{', '.join(SUPPORTED_PIPELINES)})"
        )
    if not any((directory / name).is_file() for name in WEIGHT_FILES):
        raise ChronosUnavailable(
            f"{directory} has a config.json but no weights ({' or '.join(WEIGHT_FILES)}); "
            + how_to_provide(model)
        )
    return directory


def checkpoint_digest(directory: Path) -> str:
    """A short hash of the checkpoint: its config and the size, head and tail of its weights."""
    digest = hashlib.sha256((directory / "config.json").read_bytes())
    for name in WEIGHT_FILES:
        file = directory / name
        if file.is_file():
            size = file.stat().st_size
            digest.update(f"{name}:{size}".encode())
            with open(file, "rb") as handle:
                digest.update(handle.read(1 << 16))
                handle.seek(max(0, size - (1 << 16)))
                digest.update(handle.read())
    return digest.hexdigest()[:12]


class ChronosSystem:
    system_id = "chronos"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        num_samples: int = 20,
        seed: int = 42,
        batch_size: int | None = None,
        device: str | None = None,
    ):
        if num_samples < 1:
            raise TsrateError(f"chronos num_samples must be at least 1, got {num_samples}")
        if batch_size is not None and batch_size < 1:
            raise TsrateError(f"chronos batch size must be at least 1, got {batch_size}")
        self.model_name = str(model)
        self.num_samples = int(num_samples)
        self.seed = int(seed)
        self._batch_size = batch_size
        self._device = device
        self._pipeline = None

    # -- interface -------------------------------------------------------------------------

    def fingerprint(self) -> str:
        try:
            checkpoint = checkpoint_digest(resolve_checkpoint(self.model_name))
        except ChronosUnavailable:
            checkpoint = "missing"
        return (
            f"chronos={self._package_version()};model={self.model_name};checkpoint={checkpoint};"
            f"samples={self.num_samples};seed={self.seed};batch={self.batch_size};"
            f"device={self.device};point=median"
        )

    def availability(self) -> Availability:
        """Whether torch, chronos and the weights are here, without importing torch or chronos
        (seconds) unless a CUDA device was asked for: the workers import them to forecast."""
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            return Availability(False, f"torch is not installed; {INSTALL_HINT}")
        if importlib.util.find_spec("chronos") is None:
            return Availability(False, f"chronos-forecasting is not installed; {INSTALL_HINT}")
        try:
            directory = resolve_checkpoint(self.model_name)
        except ChronosUnavailable as exc:
            return Availability(False, str(exc))
        if self._device is None:
            where = "cuda (bfloat16) when torch sees a GPU, else cpu (float32)"
        else:
            if self.device.startswith("cuda"):
                import torch

                if not torch.cuda.is_available():
                    return Availability(
                        False, f"device {self.device!r} was asked for but torch sees no CUDA GPU"
                    )
            where = f"{self.device} ({self.dtype_name})"
        return Availability(
            True,
            f"{self.model_name} from {directory} on {where}, median of {self.num_samples} samples",
        )

    def warm_up(self) -> None:
        """Import chronos and load the checkpoint once per worker, apart from the timed
        forecasts."""
        self.pipeline  # noqa: B018 - loads on first access

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        return self.predict_quantiles(batch).point

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        quantiles = self.forecast_quantiles(np.asarray(batch.contexts, dtype=float), batch.horizon)
        return QuantileForecasts(quantiles[:, :, QUANTILE_LEVELS.index(0.5)], quantiles)

    # -- model -----------------------------------------------------------------------------

    @staticmethod
    def _package_version() -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("chronos-forecasting")
        except PackageNotFoundError:
            return "not-installed"

    @property
    def device(self) -> str:
        if self._device is None:
            try:
                import torch

                self._device = "cuda" if torch.cuda.is_available() else "cpu"
            except ImportError:
                self._device = "cpu"
        return self._device

    @property
    def dtype_name(self) -> str:
        return "bfloat16" if self.device.startswith("cuda") else "float32"

    @property
    def batch_size(self) -> int:
        if self._batch_size is None:
            return 256 if self.device.startswith("cuda") else 32
        return self._batch_size

    @property
    def pipeline(self):  # noqa: ANN201 - a chronos pipeline, imported lazily
        if self._pipeline is None:
            import torch
            from chronos import BaseChronosPipeline

            directory = resolve_checkpoint(self.model_name)
            dtype = torch.bfloat16 if self.dtype_name == "bfloat16" else torch.float32
            pipeline = BaseChronosPipeline.from_pretrained(
                str(directory), device_map=self.device, dtype=dtype, local_files_only=True
            )
            pipeline.inner_model.eval()
            self._pipeline = pipeline
        return self._pipeline

    def forecast(self, contexts: np.ndarray, horizon: int) -> np.ndarray:
        """Median forecasts (rows × horizon) of ``contexts`` (rows × time, NaN = missing)."""
        return self.forecast_quantiles(contexts, horizon)[:, :, QUANTILE_LEVELS.index(0.5)]

    def forecast_quantiles(self, contexts: np.ndarray, horizon: int) -> np.ndarray:
        """Quantile forecasts (rows × horizon × QUANTILE_LEVELS): of the seeded samples
        (``torch.quantile``, linear interpolation), or Chronos-Bolt's own quantiles."""
        import torch
        from chronos import ChronosPipeline

        pipeline = self.pipeline
        sampled = isinstance(pipeline, ChronosPipeline)
        options = {"num_samples": self.num_samples} if sampled else {}
        torch.manual_seed(self.seed)
        out = np.empty((len(contexts), horizon, len(QUANTILE_LEVELS)))
        with torch.no_grad():
            for start in range(0, len(contexts), self.batch_size):
                chunk = torch.tensor(contexts[start : start + self.batch_size], dtype=torch.float32)
                quantiles, _ = pipeline.predict_quantiles(
                    chunk,
                    prediction_length=int(horizon),
                    quantile_levels=list(QUANTILE_LEVELS),
                    **options,
                )
                out[start : start + len(chunk)] = quantiles.float().numpy()
        return out


def create(study, companies) -> ChronosSystem:  # noqa: ANN001 - registry signature
    batch = setting("TSRATE_CHRONOS_BATCH_SIZE", "chronos_batch_size", None)
    return ChronosSystem(
        model=str(setting("TSRATE_CHRONOS_MODEL", "chronos_model", DEFAULT_MODEL)),
        num_samples=int_setting("TSRATE_CHRONOS_NUM_SAMPLES", "chronos_num_samples", 20),
        seed=study.seed,
        batch_size=None
        if batch is None
        else int_setting("TSRATE_CHRONOS_BATCH_SIZE", "chronos_batch_size", 32),
        device=setting("TSRATE_CHRONOS_DEVICE", "chronos_device", None),
    )
