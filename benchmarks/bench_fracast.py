"""fracast on the default study: the prefix encoder against the full one, layouts, phase time.

Three parts, each printing the machine's load average before and after:

- ``diff``: every window of the default study (6 tickers × 153 windows × P0–P3) forecast
  by fracast's own full-length encoder and by the prefix-cached one (one process, one
  torch thread, batches of 16): the largest absolute and relative difference over all
  9 quantiles and over the median, and each path's seconds per window.
- ``layout``: seconds per window of the prefix path in one process for torch threads ×
  batch sizes, ``--repeats`` times each, alternated (medians printed), on the first
  ``--partitions`` partitions.
- ``phase``: the forecast phase (``run_forecasts``, no dbt) of the default study into a
  fresh temporary warehouse, with fracast alone or all five systems, for each encoder and
  worker count given, alternated, ``--repeats`` times: wall and summed model time.

    .venv/bin/python benchmarks/bench_fracast.py diff
    .venv/bin/python benchmarks/bench_fracast.py layout --repeats 3
    .venv/bin/python benchmarks/bench_fracast.py phase --systems all --encoders prefix,full \\
        --workers 2 --repeats 3
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from tsrate.config import Study, load_companies
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.forecast.execute import run_forecasts
from tsrate.robustness.forecast.plan import load_series, make_batch
from tsrate.robustness.forecast.workers import environment
from tsrate.robustness.sources import load_skfolio_sp500

ALL_SYSTEMS = ("naive", "arima", "random", "biased", "fracast")


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def study_batches(study: Study) -> list:
    """The default study's fracast batches (one per ticker × perturbation)."""
    with tempfile.TemporaryDirectory() as folder, connect(Path(folder) / "t.duckdb") as con:
        store_prices(con, load_skfolio_sp500(list(study.tickers)), "skfolio")
        series = load_series(con, study)
    return [make_batch(study, series[t], p) for t in study.tickers for p in study.perturbations]


def forecast_all(model, batches: list, batch_size: int) -> tuple[list[np.ndarray], float]:
    import torch

    out = []
    started = time.perf_counter()
    with torch.no_grad():
        for b in batches:
            out.append(
                np.concatenate(
                    [
                        model.forecast_batch(b.contexts[s : s + batch_size], horizon=b.horizon)
                        for s in range(0, b.n_windows, batch_size)
                    ]
                )
            )
    return out, time.perf_counter() - started


def diff(args: argparse.Namespace) -> None:
    import torch

    from tsrate.systems.fracast_model import FracastSystem

    torch.set_num_threads(1)
    batches = study_batches(Study.from_vars())
    windows = sum(b.n_windows for b in batches)
    system = FracastSystem(device="cpu", encoder="prefix")
    before = load()
    full, full_s = forecast_all(system.model, batches, 16)
    fast, fast_s = forecast_all(system.fast_model, batches, 16)
    a, b = np.concatenate(full).astype(float), np.concatenate(fast).astype(float)
    core = system.fast_model.core
    print(
        f"diff: {windows} windows; max |full - prefix| {np.abs(a - b).max():.3g} "
        f"(median: {np.abs(a - b)[:, :, 4].max():.3g}), max relative "
        f"{(np.abs(a - b) / np.abs(a)).max():.3g}; bit-identical {np.array_equal(a, b)}; "
        f"full {1000 * full_s / windows:.1f} ms/window, prefix {1000 * fast_s / windows:.1f} "
        f"ms/window ({full_s / fast_s:.1f}×); prefixes computed {core.computed}, reused "
        f"{core.reused}; 1 thread, batch 16; load {before} → {load()}"
    )


def layout(args: argparse.Namespace) -> None:
    import torch

    from tsrate.systems.fracast_model import FracastSystem

    batches = study_batches(Study.from_vars())[: args.partitions]
    windows = sum(b.n_windows for b in batches)
    combos = [(t, s) for t in args.threads for s in args.batch_sizes]
    times: dict[tuple[int, int], list[float]] = {c: [] for c in combos}
    before = load()
    for _ in range(args.repeats):
        for threads, size in combos:
            torch.set_num_threads(threads)
            system = FracastSystem(device="cpu", encoder=args.encoder)  # a cold prefix cache
            model = system.fast_model if args.encoder == "prefix" else system.model
            _, seconds = forecast_all(model, batches, size)
            times[(threads, size)].append(seconds)
    for (threads, size), runs in times.items():
        median = statistics.median(runs)
        print(
            f"layout: {args.encoder}, {threads} thread(s), batch {size}: "
            f"{1000 * median / windows:.1f} ms/window, {windows / median / threads:.0f} "
            f"windows/s per thread (median of {len(runs)}: "
            f"{', '.join(f'{r:.2f}' for r in runs)} s for {windows} windows)"
        )
    print(f"layout: load {before} → {load()}")


def phase(args: argparse.Namespace) -> None:
    systems = ALL_SYSTEMS if args.systems == "all" else tuple(args.systems.split(","))
    study = dataclasses.replace(Study.from_vars(), systems=systems)
    companies = load_companies()
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        for encoder in args.encoders:
            for workers in args.workers:
                with (
                    tempfile.TemporaryDirectory() as folder,
                    connect(Path(folder) / "tsrate.duckdb") as con,
                    environment(TSRATE_FRACAST_ENCODER=encoder),
                ):
                    store_prices(con, load_skfolio_sp500(list(study.tickers)), "skfolio")
                    before = load()
                    started = time.perf_counter()
                    summary = run_forecasts(
                        con, study, companies, workers=workers, progress=lambda line: None
                    )
                    wall = time.perf_counter() - started
                model = sum(summary.per_system_seconds.values())
                results.setdefault((encoder, workers), []).append((wall, model))
                per_system = ", ".join(
                    f"{s} {v:.1f}" for s, v in sorted(summary.per_system_seconds.items())
                )
                print(
                    f"phase: {encoder}, {workers} worker(s), systems {','.join(systems)}: "
                    f"wall {wall:.1f} s, model {model:.1f} s ({per_system}), "
                    f"{summary.forecast_rows} rows; load {before} → {load()}",
                    flush=True,
                )
    for (encoder, workers), runs in results.items():
        print(
            f"phase median: {encoder}, {workers} worker(s): wall "
            f"{statistics.median(w for w, _ in runs):.1f} s, model "
            f"{statistics.median(m for _, m in runs):.1f} s (of {len(runs)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part", required=True)
    parts.add_parser("diff")
    lay = parts.add_parser("layout")
    lay.add_argument("--encoder", default="prefix", choices=("prefix", "full"))
    lay.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2])
    lay.add_argument(
        "--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[16, 64, 153]
    )
    lay.add_argument("--partitions", type=int, default=4)
    lay.add_argument("--repeats", type=int, default=3)
    ph = parts.add_parser("phase")
    ph.add_argument("--systems", default="fracast", help="comma list, or all")
    ph.add_argument("--encoders", type=lambda s: s.split(","), default=["prefix"])
    ph.add_argument(
        "--workers", type=lambda s: [int(x) for x in s.split(",")], default=[os.cpu_count() or 1]
    )
    ph.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    {"diff": diff, "layout": layout, "phase": phase}[args.part](args)


if __name__ == "__main__":
    main()
