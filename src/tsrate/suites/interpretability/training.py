"""Train one model on one dataset with one seed and collect what the warehouse stores.

Conventions (paper Section 3.2 unless marked "ours"):

* windows of ``window`` = 10 past values of all series forecast the next value of every
  series; the last ``test_length`` target steps (paper: 2,000) are the test set, all earlier
  target steps (with a full window) the training set;
* each series is standardised with the mean and std of its training part (ours; a
  constant series keeps std 1); losses train on that scale, while the reported MSE is on
  the ORIGINAL scale, per series, then averaged over series (the paper's experiment error);
* Adam, MSE loss, mini-batches drawn by a generator seeded with ``seed``; ``torch``
  is seeded with ``seed`` before the model is built, so (data, model, settings, seed)
  gives the same result on the same device;
* attention is averaged over the test windows (see :mod:`.models`);
* ``batch_size`` 0 means full-batch gradient descent (one step per epoch: TCDF's reference
  trains on the whole series at once);
* TCDF: its per-target loss before training and after it feed the permutation importance
  validation (PIVM, :meth:`.models.TCDF.validate`), on the latest <= 4,096 training windows.

Per-model settings (:data:`MODEL_SETTINGS`, the table in docs/suites/interpretability.md)
override a configuration's shared ``TrainSettings`` field by field (:func:`model_settings`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from tsrate.suites.interpretability.models import Attention, build_model


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters of one training run (a configuration's per-model settings)."""

    window: int = 10
    test_length: int = 2000
    hidden: int = 8
    epochs: int = 3
    batch_size: int = 128
    learning_rate: float = 0.01
    max_train_windows: int | None = None  # ours: cap on training windows (the latest ones)
    device: str = "cpu"
    #: torch CPU threads while training (0 = torch's default). Tiny models run several times
    #: faster on one thread: thread hand-offs cost more than the arithmetic.
    threads: int = 1
    #: TCDF's PIVM significance (reference default 0.8).
    tcdf_significance: float = 0.8


#: Per-model training settings from the papers and reference repositories, per configuration.
#: paper: IMV-LSTM (KurochkinAlexey/IMV_LSTM notebooks): 128 units, Adam lr 0.001, batch 128;
#: TCDF (M-Nauta/TCDF runTCDF.py defaults): Adam lr 0.01, the whole series as one batch,
#: 1,000 epochs, significance 0.8; DA-RNN (Qin et al. 2017, Sec. 4.2): 64 hidden units,
#: lr 0.001, batch 128; seq2graph (the benchmark paper, Sec. 4): Adam lr 0.01/3, batch 128,
#: 5 epochs. small: only the settings that cost no CPU time (TCDF full batch, seq2graph).
MODEL_SETTINGS: dict[str, dict[str, dict]] = {
    "paper": {
        "imv_full": {"hidden": 128, "learning_rate": 0.001, "batch_size": 128},
        "imv_tensor": {"hidden": 128, "learning_rate": 0.001, "batch_size": 128},
        "tcdf": {"learning_rate": 0.01, "batch_size": 0, "epochs": 1000},
        "darnn": {"hidden": 64, "learning_rate": 0.001, "batch_size": 128},
        "seq2graph": {"learning_rate": 0.01 / 3, "batch_size": 128, "epochs": 5},
    },
    "small": {
        "tcdf": {"learning_rate": 0.01, "batch_size": 0, "epochs": 100},
        "seq2graph": {"learning_rate": 0.01 / 3, "batch_size": 128, "epochs": 5},
    },
}


def model_settings(
    model_id: str, settings: dict, config_name: str, keep: tuple[str, ...] = ()
) -> dict:
    """``settings`` (a TrainSettings as a dict) with ``model_id``'s overrides of
    ``config_name`` applied, except the fields in ``keep`` (set by the caller); unknown
    configurations keep the shared settings."""
    own = MODEL_SETTINGS.get(config_name, {}).get(model_id, {})
    return {**settings, **{k: v for k, v in own.items() if k not in keep}}


@dataclasses.dataclass
class TrainResult:
    """One trained model: errors, test predictions and attention."""

    train_mse: np.ndarray  # per series, original scale
    test_mse: np.ndarray  # per series, original scale
    loss_history: list[float]  # mean training loss per epoch (standardised scale)
    test_targets: np.ndarray  # (test_length, N) time index of each row = test_start + row
    test_predictions: np.ndarray  # (test_length, N)
    test_start: int
    attention: Attention
    seconds: float
    #: the trained torch module, only when ``train_model(..., keep_model=True)``
    model: object | None = dataclasses.field(default=None, repr=False)


def make_windows(values: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(inputs (T - window, window, N), targets (T - window, N)): row k forecasts step k + window."""
    values = np.asarray(values, dtype=np.float32)
    if values.ndim != 2:
        raise ValueError("values must be a (time x series) matrix")
    if values.shape[0] <= window:
        raise ValueError(f"a series of length {values.shape[0]} has no window of {window} steps")
    view = np.lib.stride_tricks.sliding_window_view(values, window, axis=0)  # (T-w+1, N, w)
    inputs = np.ascontiguousarray(view[:-1].transpose(0, 2, 1))
    return inputs, values[window:]


def pick_device(requested: str = "auto") -> str:
    """``cuda`` when requested as "auto" and torch sees a GPU, else the requested device."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def train_model(
    model_id: str,
    values: np.ndarray,
    settings: TrainSettings,
    seed: int,
    keep_model: bool = False,
) -> TrainResult:
    """Train ``model_id`` on ``values`` (time x series) and evaluate it on the test tail
    (``keep_model``: the result carries the trained module, for inspection)."""
    previous_threads = torch.get_num_threads()
    if settings.threads > 0:
        torch.set_num_threads(settings.threads)
    try:
        result = _train_model(model_id, values, settings, seed)
    finally:
        torch.set_num_threads(previous_threads)
    if not keep_model:
        result.model = None
    return result


def _train_model(
    model_id: str, values: np.ndarray, settings: TrainSettings, seed: int
) -> TrainResult:
    started = time.perf_counter()
    values = np.asarray(values, dtype=np.float64)
    length, n_series = values.shape
    if settings.test_length < 1 or length - settings.test_length <= settings.window + 1:
        raise ValueError(
            f"series of length {length} too short for window {settings.window} and "
            f"test length {settings.test_length}"
        )
    if not np.isfinite(values).all():
        raise ValueError("the series holds non-finite values (a diverging dataset?)")
    test_start = length - settings.test_length  # first test target step
    train_part = values[:test_start]
    mean = train_part.mean(0)
    std = train_part.std(0)
    std = np.where(std > 1e-12, std, 1.0)
    scaled = (values - mean) / std
    inputs, targets = make_windows(scaled, settings.window)
    n_train = test_start - settings.window
    x_train, y_train = inputs[:n_train], targets[:n_train]
    if settings.max_train_windows is not None and n_train > settings.max_train_windows:
        x_train = x_train[-settings.max_train_windows :]
        y_train = y_train[-settings.max_train_windows :]
    x_test, y_test = inputs[n_train:], targets[n_train:]

    device = torch.device(settings.device)
    torch.manual_seed(seed)
    model = build_model(model_id, n_series, settings.hidden, settings.window).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    xt = torch.from_numpy(x_train).to(device)
    yt = torch.from_numpy(y_train).to(device)
    history: list[float] = []
    validate = getattr(model, "validate", None)
    if validate is not None:  # TCDF's PIVM compares with the loss before training
        x_check, y_check = xt[-4096:], yt[-4096:]
        first_loss = model.per_target_loss(x_check, y_check)
    batch_size = settings.batch_size if settings.batch_size > 0 else len(xt)
    model.train()
    for _ in range(settings.epochs):
        order = torch.randperm(len(xt), generator=generator).to(device)
        total, count = 0.0, 0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            optimiser.zero_grad()
            prediction = model(xt[batch])
            # sum over targets of each target's MSE: independent models, one backward pass
            loss = ((prediction - yt[batch]) ** 2).mean(0).sum()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) / n_series * len(batch)
            count += len(batch)
        history.append(total / max(count, 1))
    model.eval()
    if validate is not None:
        validate(x_check, y_check, first_loss, settings.tcdf_significance, seed)
    chunk = 1024
    train_pred = _predict(model, x_train, device, chunk)
    test_pred = _predict(model, x_test, device, chunk)
    attention = _explain(model, x_test, device, chunk)
    unscale = lambda a: a * std + mean  # noqa: E731
    train_mse = ((unscale(train_pred) - unscale(y_train)) ** 2).mean(0)
    test_mse = ((unscale(test_pred) - unscale(y_test)) ** 2).mean(0)
    return TrainResult(
        train_mse=train_mse,
        test_mse=test_mse,
        loss_history=history,
        test_targets=unscale(y_test),
        test_predictions=unscale(test_pred),
        test_start=test_start,
        attention=attention,
        seconds=time.perf_counter() - started,
        model=model,
    )


@torch.no_grad()
def _predict(model, inputs: np.ndarray, device, batch: int) -> np.ndarray:
    out = [
        model(torch.from_numpy(inputs[i : i + batch]).to(device)).cpu().numpy()
        for i in range(0, len(inputs), batch)
    ]
    return np.concatenate(out).astype(np.float64)


@torch.no_grad()
def _explain(model, inputs: np.ndarray, device, batch: int) -> Attention:
    """Attention averaged over all test windows (batch means weighted by batch size)."""
    parts, sizes = [], []
    for i in range(0, len(inputs), batch):
        chunk = inputs[i : i + batch]
        parts.append(model.explain(torch.from_numpy(chunk).to(device)))
        sizes.append(len(chunk))
    w = np.asarray(sizes, dtype=float) / sum(sizes)
    beta = sum(wi * p.beta for wi, p in zip(w, parts, strict=True))
    alpha = None
    if parts[0].alpha is not None:
        alpha = sum(wi * p.alpha for wi, p in zip(w, parts, strict=True))
    return Attention(
        beta=np.asarray(beta),
        alpha=None if alpha is None else np.asarray(alpha),
        alpha_sources=parts[0].alpha_sources,
        picks=parts[0].picks,
    )
