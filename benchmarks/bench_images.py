"""Images and ViT-num-spec speed (the targets on this CPU).

1. Image building: ViT-num-spec images (numeric stripe + Morlet spectrogram), line plots
   and the P5 saturation, windows/s (target ≥ 2,000/s for the ViT image).
2. ViT inference at the default size (var ``vit_size``, ``small``): windows/s of the
   network alone and end to end (images + network, as ``VitNumSpecSystem.forecast``) at
   the CPU batch size 256 (target ≥ 200/s).
3. Training time per variant at the default settings (the dbt vars, default study): the
   real training data and :func:`tsrate.systems.vit_num_spec.train` (target < 10 min).

Windows are real: the default study's closes (bundled S&P sample), n = 80. Each speed is
the median of ``--repeats`` runs; training runs once per variant (minutes each). Prints
``uptime`` before and after: this is a shared, loaded 2-core machine.

    .venv/bin/python benchmarks/bench_images.py [--repeats 5] [--windows 2048] [--skip-training]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

import numpy as np

from tsrate.config import Study, project_vars
from tsrate.inputs.images import line_plot_images, vit_num_spec_images
from tsrate.inputs.perturbations import perturb_images
from tsrate.robustness.sources import load_skfolio_sp500


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def real_contexts(count: int, length: int) -> np.ndarray:
    """``count`` windows of ``length`` consecutive closes of the default study's tickers."""
    study = Study.from_vars()
    prices = load_skfolio_sp500(list(study.tickers))
    windows = []
    for _, rows in prices.groupby("ticker"):
        closes = rows.sort_values("price_date")["close"].to_numpy(dtype=float)[-2000:]
        ends = np.arange(length - 1, len(closes))
        windows.append(closes[ends[:, None] + np.arange(-length + 1, 1)])
    contexts = np.concatenate(windows)
    return contexts[np.linspace(0, len(contexts) - 1, count).astype(int)]


def median_rate(function, count: int, repeats: int) -> float:
    """Median windows/s of ``function()`` (which handles ``count`` windows) over repeats, by
    wall clock; also printed: windows per second of this process's CPU time (all threads),
    which the other sessions' load on the shared cores does not dilute."""
    function()  # warm-up (caches, lazy imports)
    seconds, cpu_seconds = [], []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        function()
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
    print(f"  ({count / statistics.median(cpu_seconds):,.0f} windows per CPU-second)")
    return count / statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--windows", type=int, default=2048)
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args()

    import torch

    from tsrate.inputs.sentiment import multimodal_vars
    from tsrate.systems import vit_num_spec as vit

    print(f"before: {uptime()}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    study = Study.from_vars()
    contexts = real_contexts(args.windows, study.context_length)
    count = len(contexts)
    images = vit_num_spec_images(contexts)

    rates = {
        "ViT-num-spec images": median_rate(
            lambda: vit_num_spec_images(contexts), count, args.repeats
        ),
        "line plots": median_rate(lambda: line_plot_images(contexts), count, args.repeats),
        "P5 saturation (on built images)": median_rate(
            lambda: perturb_images(images, "P5"), count, args.repeats
        ),
    }
    for name, rate in rates.items():
        print(f"{name}: {rate:,.0f} windows/s (median of {args.repeats}, {count} windows)")

    variables = multimodal_vars()
    size = str(variables.get("vit_size", "small"))
    torch.manual_seed(0)
    network = vit.build_network(vit.SIZES[size], study.horizon).eval()
    batch = 256

    def network_only() -> None:
        with torch.inference_mode():
            for start in range(0, count, batch):
                network(vit.image_tensor(images[start : start + batch]))

    def end_to_end() -> None:
        built = vit_num_spec_images(contexts)
        with torch.inference_mode():
            for start in range(0, count, batch):
                network(vit.image_tensor(built[start : start + batch]))

    for name, function in (("network only", network_only), ("images + network", end_to_end)):
        rate = median_rate(function, count, args.repeats)
        print(f"ViT {size} inference, {name}: {rate:,.0f} windows/s (batch {batch})")

    if not args.skip_training:
        for variant in sorted(vit.VARIANTS):
            settings = vit.settings_from_vars(
                variant,
                study.tickers,
                study.context_length,
                study.horizon,
                project_vars() | variables,
                study_period=(study.start, study.end),
            )
            prices = vit.training_prices(settings)
            started = time.perf_counter()
            _, meta = vit.train(settings, prices, "cpu")
            seconds = time.perf_counter() - started
            print(
                f"training {variant} ({size}): {seconds:.0f} s, {meta['training_windows']} + "
                f"{meta['validation_windows']} windows of {len(meta['tickers'])} tickers "
                f"{settings.train_start}..{settings.train_end}, epochs run "
                f"{len(meta['history'])}, best {meta['best_epoch']}, validation loss "
                f"{meta['validation_loss']:.4f}"
            )
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
