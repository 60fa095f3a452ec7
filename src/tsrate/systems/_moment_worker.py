"""MOMENT worker: runs in a *separate* Python environment that has ``momentfm``.

``momentfm`` pins transformers 4.33 and numpy 1.25, which cannot live beside tsrate's
environment, so tsrate runs this script with the interpreter of that environment
(``TSRATE_MOMENT_PYTHON``). It imports only the standard library, numpy, and (for the
``momentfm`` backend) torch and momentfm — never tsrate.

Protocol (files in a temporary folder tsrate owns):

- input ``--input contexts.npy``: float64 array (windows × context steps), NaN = missing.
- output ``--output forecasts.npy``: float64 array (windows × ``--horizon``), written to a
  temporary name and renamed, so a half-written file is never seen. Exit status 0 on
  success; on failure a non-zero status and the reason on stderr.
- ``--probe`` prints one JSON line (python, numpy, whether momentfm and torch are
  importable) without importing torch, so tsrate can say what the environment lacks.

Backends:

- ``momentfm`` (the default; what tsrate runs): MOMENT zero-shot forecasting through its
  pretrained reconstruction head (``MOMENTPipeline.short_forecast``): the window (its last
  512 - 8 ceil(d / 8) values at most) is placed at the end of MOMENT's 512 steps, the steps
  before it zero and marked unobserved in ``input_mask``; ``short_forecast`` (momentfm's
  own path) makes room for ceil(d / 8) masked patches after the window, reconstructs them,
  and their first d values are the forecast. A missing value (NaN) is marked unobserved in ``input_mask`` (MOMENT's own
  convention; its normaliser ignores it and the 8-step patch holding it is not attended).
  Weights are read offline (``HF_HUB_OFFLINE=1``) from that environment's Hugging Face
  cache or a local directory (``--model``).
- ``last-observed``: a protocol check only, *not MOMENT*: every step is the window's last
  observed value. tsrate's tests use it to exercise the bridge (files, exit status,
  validation) with the test interpreter, where momentfm cannot be installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import sys

import numpy as np


def probe() -> dict:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "momentfm": importlib.util.find_spec("momentfm") is not None,
        "torch": importlib.util.find_spec("torch") is not None,
    }


def last_observed(contexts: np.ndarray, horizon: int) -> np.ndarray:
    out = np.empty((len(contexts), horizon))
    for row, context in enumerate(contexts):
        observed = context[np.isfinite(context)]
        out[row] = observed[-1] if len(observed) else np.nan
    return out


def moment_forecast(
    contexts: np.ndarray, horizon: int, model: str, batch_size: int, device: str
) -> np.ndarray:
    os.environ["HF_HUB_OFFLINE"] = "1"  # never download; before huggingface_hub is imported
    if importlib.util.find_spec("momentfm") is None:
        raise SystemExit(f"momentfm is not installed in {sys.executable}")
    import torch
    from momentfm import MOMENTPipeline

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    pipeline = MOMENTPipeline.from_pretrained(model, model_kwargs={"task_name": "reconstruction"})
    pipeline.init()
    pipeline = pipeline.to(device).eval()
    seq_len, patch_len = int(pipeline.seq_len), int(pipeline.patch_len)
    masked = math.ceil(horizon / patch_len) * patch_len
    if masked >= seq_len:
        raise SystemExit(f"horizon {horizon} does not fit MOMENT's {seq_len}-step input")
    keep = min(contexts.shape[1], seq_len - masked)
    out = np.empty((len(contexts), horizon))
    with torch.no_grad():
        for start in range(0, len(contexts), batch_size):
            chunk = contexts[start : start + batch_size, -keep:]
            values = np.zeros((len(chunk), 1, seq_len), dtype=np.float32)
            observed = np.zeros((len(chunk), seq_len), dtype=np.float32)
            finite = np.isfinite(chunk)
            values[:, 0, seq_len - keep :] = np.where(finite, chunk, 0.0)
            observed[:, seq_len - keep :] = finite
            result = pipeline.short_forecast(
                x_enc=torch.from_numpy(values).to(device),
                input_mask=torch.from_numpy(observed).to(device),
                forecast_horizon=horizon,
            )
            out[start : start + len(chunk)] = result.forecast[:, 0, :].float().cpu().numpy()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--input")
    parser.add_argument("--output")
    parser.add_argument("--horizon", type=int)
    parser.add_argument("--backend", choices=["momentfm", "last-observed"], default="momentfm")
    parser.add_argument("--model", default="AutonLab/MOMENT-1-large")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe()))
        return 0
    if not (args.input and args.output and args.horizon and args.horizon > 0):
        parser.error("--input, --output and a positive --horizon are required")
    contexts = np.load(args.input, allow_pickle=False)
    if contexts.ndim != 2:
        raise SystemExit(f"{args.input}: expected a 2-d array, got shape {contexts.shape}")
    if args.backend == "last-observed":
        forecasts = last_observed(contexts, args.horizon)
    else:
        forecasts = moment_forecast(
            contexts, args.horizon, args.model, max(1, args.batch_size), args.device
        )
    partial = args.output + ".partial.npy"
    np.save(partial, np.asarray(forecasts, dtype=np.float64), allow_pickle=False)
    os.replace(partial, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
