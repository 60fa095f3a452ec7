"""fracast: a small pretrained time-series foundation model whose weights ship in its wheel.

``fracast`` (PyPI) bundles its checkpoints, so ``FracastModel.from_pretrained()`` loads
offline. What the model does with our windows (read from fracast 0.1.0's source):

- Context: up to ``W = 2048`` values; a longer context keeps its last 2048, a shorter one
  is left-padded and the padding marked unobserved. Each window is scaled by its own
  min/max before the network and back after.
- It needs at least 8 finite values per window, else it rejects the whole batch. Such a
  window (none in this project's P0–P3 studies) gets the last observed value instead and
  is counted in ``fallbacks``, like ARIMA's failed fits, and returned as a fallback window
  (``QuantileForecasts.fallbacks``, stored in ``raw.forecast_fallbacks``).
- Missing values (P3): the model takes NaN natively. A non-finite input is masked out:
  the encoder sees 0 with a "not observed" coverage flag at that position, and its
  periodogram (season detection) uses the window's mean of observed values there. So no
  filling is done here; NaN passes through unchanged.
- Output: 9 quantiles (0.1 … 0.9) over a native 48-step block; longer horizons roll
  forward on the median. The point forecast here is the median (0.5 quantile); all 9
  quantiles are stored beside it (a fallback window has none).
- Deterministic: no sampling, eval mode, no-grad; on CPU the result does not depend on
  the batch size (so the batch size is not part of the fingerprint). It runs on ``cuda``
  when torch sees a GPU, else on the CPU.
- Speed: fracast pads every window to 2048 steps and runs its encoder (ten dilated causal
  convolution stages) over all of them, about 37 ms a window on one core for an 80-value
  window. The padding's encoder states depend only on the periods the window's
  periodogram detects (the padding's value and coverage are 0; its other features are
  functions of the position and those periods), and the stages are causal, so the
  ``prefix`` encoder (:mod:`tsrate.systems.fracast_prefix`, the default on fracast 0.1.0)
  computes them once per (prefix length, periods) in each worker and runs the stages over
  the observed tail only. Same arithmetic, smaller tensors: its forecasts equal the full
  pass's to within 1e-6 relative (the stated tolerance, checked by the unit tests; on the
  default study's 3,672 windows they were bit-identical), at a fraction of the cost (the
  default study has 183 distinct period sets: 8.8 against 41.3 ms a window on one thread,
  fracast's model time in the default study's forecast phase 5.6–6.1× lower; ``benchmarks/bench_fracast.py
  diff``). A shorter padded length (cutting ``W``) was not taken: the recency
  channels, the periodogram's bins and the head's mean over all ``W`` states all depend on
  ``W``, so it would be another model. The prefix path runs on a GPU too, but was measured
  on the CPU only.

Settings (no study var; they do not change forecasts beyond float rounding):
``TSRATE_FRACAST_BATCH_SIZE`` (windows per forward pass; default 16 on CPU, 512 on a GPU),
``TSRATE_FRACAST_DEVICE`` (force ``cpu`` or ``cuda``) and ``TSRATE_FRACAST_ENCODER``
(``auto``, the default: ``prefix`` on the fracast versions in ``PREFIX_ENCODER_VERSIONS``,
else ``full``; ``prefix``: only that path, unavailable on another version; ``full``:
fracast's own ``forecast_batch``). The prefix path adds ``;encoder=prefix-cache`` to the
fingerprint, so its forecasts are never mixed with stored forecasts of the full path
(whose fingerprint is unchanged).
"""

from __future__ import annotations

import os

import numpy as np

from tsrate import TsrateError
from tsrate.systems.base import (
    QUANTILE_LEVELS,
    Availability,
    ForecastBatch,
    QuantileForecasts,
    WindowFallback,
)

INSTALL_HINT = (
    "install the CPU build of torch first, then fracast: "
    "`pip install torch==2.13.0` (or `pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu`), then `pip install fracast`"
)
#: fracast rejects a window with fewer finite values than this (its ``_MIN_FINITE``).
MIN_FINITE = 8
WEIGHT_VARIANTS = ("w8", "fp32")
#: how the encoder runs: ``prefix`` computes the padding's states once per detected periods
#: (:mod:`tsrate.systems.fracast_prefix`), ``full`` is fracast's own pass over all 2048
#: steps, ``auto`` is ``prefix`` on the fracast versions it supports, else ``full``
ENCODERS = ("auto", "prefix", "full")
#: fracast releases whose encoder :mod:`tsrate.systems.fracast_prefix` reproduces (read
#: from their source); the prefix path is built on their internals
PREFIX_ENCODER_VERSIONS = ("0.1.0",)


class FracastSystem:
    system_id = "fracast"

    def __init__(
        self,
        weights: str = "w8",
        batch_size: int | None = None,
        device: str | None = None,
        encoder: str = "auto",
    ):
        if weights not in WEIGHT_VARIANTS:
            raise TsrateError(f"fracast weights must be one of {WEIGHT_VARIANTS}, got {weights!r}")
        if encoder not in ENCODERS:
            raise TsrateError(
                f"fracast encoder must be one of {ENCODERS}, got {encoder!r} "
                "(TSRATE_FRACAST_ENCODER)"
            )
        if batch_size is not None and batch_size < 1:
            raise TsrateError(f"fracast batch size must be at least 1, got {batch_size}")
        self.weights = weights
        self._batch_size = batch_size
        self._device = device
        self._encoder = encoder
        self._model = None
        self._fast_model = None
        self.fallbacks = 0

    # -- interface -------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """Package version, weights, point and (for the prefix path) the encoder: the prefix
        path agrees with the full one to float32 rounding, not provably bit for bit, so its
        forecasts are stored apart from those of the full path."""
        package = _fracast_version() or "not-installed"
        fingerprint = f"fracast={package};weights={self.weights};point=median"
        if self.encoder == "prefix":
            fingerprint += ";encoder=prefix-cache"
        return fingerprint

    @property
    def ms_per_window(self) -> float:
        """Model milliseconds per 80-value window on one core, for the scheduler's
        costliest-first order (default study: prefix ≈ 8 with its cache cold per worker,
        full ≈ 37; ARIMA ≈ 15)."""
        return 8.0 if self.encoder == "prefix" else 37.0

    @property
    def encoder(self) -> str:
        """``prefix`` or ``full``: what ``auto`` resolves to here (no torch import)."""
        if self._encoder != "auto":
            return self._encoder
        return "prefix" if _fracast_version() in PREFIX_ENCODER_VERSIONS else "full"

    def availability(self) -> Availability:
        """Whether torch and fracast are installed, without importing torch (seconds) unless
        a CUDA device was asked for: the workers import it when they forecast."""
        import importlib.util
        from importlib.metadata import PackageNotFoundError, version

        if importlib.util.find_spec("torch") is None:
            return Availability(False, f"torch is not installed; {INSTALL_HINT}")
        if importlib.util.find_spec("fracast") is None:
            return Availability(False, f"fracast is not installed; {INSTALL_HINT}")
        try:
            fracast_version, torch_version = _fracast_version() or "?", version("torch")
        except PackageNotFoundError:
            fracast_version = torch_version = "?"
        if self._encoder == "prefix" and fracast_version not in PREFIX_ENCODER_VERSIONS:
            return Availability(
                False,
                "TSRATE_FRACAST_ENCODER=prefix needs fracast "
                f"{' or '.join(PREFIX_ENCODER_VERSIONS)}, found {fracast_version}; "
                "use auto or full",
            )
        if self._device is None:
            device = "cuda when torch sees a GPU, else cpu"
        else:
            device = self.device
            if device.startswith("cuda"):
                import torch

                if not torch.cuda.is_available():
                    return Availability(
                        False, f"device {device!r} was asked for but torch sees no CUDA GPU"
                    )
        return Availability(
            True,
            f"fracast {fracast_version} ({self.weights} weights, {self.encoder} encoder) "
            f"on {device} (torch {torch_version})",
        )

    def warm_up(self) -> None:
        """Import torch and fracast and load the weights (with the prefix encoder, build it)
        once per worker, apart from the timed forecasts."""
        if self.encoder == "prefix":
            self.fast_model  # noqa: B018 - builds the model on first access
        else:
            self.model  # noqa: B018

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        return self.predict_quantiles(batch).point

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        contexts = np.asarray(batch.contexts, dtype=float)
        out = np.empty((batch.n_windows, batch.horizon))
        quantiles = np.full((batch.n_windows, batch.horizon, len(QUANTILE_LEVELS)), np.nan)
        finite = np.isfinite(contexts)
        usable = finite.sum(axis=1) >= MIN_FINITE
        fallbacks = []
        for row in np.flatnonzero(~usable):
            self.fallbacks += 1
            observed = contexts[row][finite[row]]
            out[row] = observed[-1] if len(observed) else np.nan
            reason = f"{len(observed)} finite value(s), fracast needs at least {MIN_FINITE}"
            fallbacks.append(WindowFallback(int(row), reason))
        rows = np.flatnonzero(usable)
        if len(rows):
            quantiles[rows] = self.forecast_quantiles(contexts[rows], batch.horizon)
            out[rows] = quantiles[rows][:, :, QUANTILE_LEVELS.index(0.5)]
        return QuantileForecasts(out, quantiles, tuple(fallbacks))

    # -- model -----------------------------------------------------------------------------

    @property
    def device(self) -> str:
        if self._device is None:
            import torch

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    @property
    def batch_size(self) -> int:
        if self._batch_size is None:
            return 512 if self.device.startswith("cuda") else 16
        return self._batch_size

    @property
    def model(self):  # noqa: ANN201 - fracast.FracastModel, imported lazily
        if self._model is None:
            FracastModel = import_fracast().FracastModel  # noqa: N806 - the class

            model = FracastModel.from_pretrained(weights=self.weights, device=self.device)
            model.core.eval()
            model.head.eval()
            self._model = model
        return self._model

    @property
    def fast_model(self):  # noqa: ANN201 - the model whose core is a PrefixCachedCore
        """The model with the prefix-cached encoder, built once (its cache lives with it)."""
        if self._fast_model is None:
            import copy

            import_fracast()  # before fracast_prefix imports fracast's modules
            from tsrate.systems.fracast_prefix import PrefixCachedCore, UnsupportedModel

            fast = copy.copy(self.model)
            try:
                fast.core = PrefixCachedCore(self.model.core)
            except UnsupportedModel as exc:
                raise TsrateError(
                    f"fracast's prefix encoder cannot run this model ({exc}); "
                    "set TSRATE_FRACAST_ENCODER=full"
                ) from exc
            self._fast_model = fast
        return self._fast_model

    def forecast(self, contexts: np.ndarray, horizon: int) -> np.ndarray:
        """Median forecasts (rows × horizon) of ``contexts`` (rows × time, NaN = missing)."""
        return self.forecast_quantiles(contexts, horizon)[:, :, QUANTILE_LEVELS.index(0.5)]

    def forecast_quantiles(self, contexts: np.ndarray, horizon: int) -> np.ndarray:
        """Quantile forecasts (rows × horizon × QUANTILE_LEVELS) of ``contexts``."""
        import torch

        model = self.fast_model if self.encoder == "prefix" else self.model
        native = np.asarray(model.quantiles, dtype=float)
        columns = [int(np.argmin(np.abs(native - level))) for level in QUANTILE_LEVELS]
        if not np.allclose(native[columns], QUANTILE_LEVELS):
            raise TsrateError(
                f"fracast's quantile levels {native.tolist()} do not include {QUANTILE_LEVELS}"
            )
        out = np.empty((len(contexts), horizon, len(QUANTILE_LEVELS)))
        with torch.no_grad():
            for start in range(0, len(contexts), self.batch_size):
                chunk = contexts[start : start + self.batch_size]
                quantiles = model.forecast_batch(chunk, horizon=int(horizon))
                out[start : start + len(chunk)] = np.asarray(quantiles)[:, :, columns]
        return out


def create(study, companies) -> FracastSystem:  # noqa: ANN001 - registry signature
    batch_size = os.environ.get("TSRATE_FRACAST_BATCH_SIZE")
    try:
        size = int(batch_size) if batch_size else None
    except ValueError as exc:
        raise TsrateError(
            f"TSRATE_FRACAST_BATCH_SIZE={batch_size!r} is not a whole number"
        ) from exc
    return FracastSystem(
        batch_size=size,
        device=os.environ.get("TSRATE_FRACAST_DEVICE") or None,
        encoder=os.environ.get("TSRATE_FRACAST_ENCODER") or "auto",
    )


def worker_imports() -> None:
    """torch, fracast (:func:`import_fracast`) and the prefix encoder: what a fracast worker
    loads (the workers' fork server loads them once: :mod:`tsrate.robustness.forecast.workers`)."""
    import torch  # noqa: F401

    import_fracast()
    import tsrate.systems.fracast_prefix  # noqa: F401


def _keep_function(fn=None, recursive=True, *, reason=None):  # noqa: ANN001, ANN202
    """``torch.compiler.disable``'s signature, returning the function unchanged."""
    return (lambda function: function) if fn is None else fn


def import_fracast():  # noqa: ANN201 - the fracast module
    """``import fracast`` without importing ``torch._dynamo`` (about 2 s of each worker's
    start here, as much as torch itself). fracast marks one function (its period
    detection) with ``torch.compiler.disable()``, and that decorator imports dynamo to wrap
    it. tsrate never compiles fracast's model, so while fracast's modules load the mark
    is kept as a no-op: the function runs exactly as it would unwrapped (the forecasts are
    the same bits, see tests/unit/test_fracast.py). A process that imported dynamo already
    (or fracast) imports as usual."""
    import sys

    if "fracast" in sys.modules or "torch._dynamo" in sys.modules:
        import fracast

        return fracast
    import torch.compiler

    original = torch.compiler.disable
    torch.compiler.disable = _keep_function
    try:
        import fracast
    finally:
        torch.compiler.disable = original
    return fracast


def _fracast_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fracast")
    except PackageNotFoundError:
        return None
