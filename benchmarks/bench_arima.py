"""ARIMA warm starts against statsmodels' cold fits, window by window.

Every window of the default study (or the ``--tickers`` / ``--perturbations`` / first
``--windows`` given) is fitted twice with the ARIMA system's settings (``SARIMAX(order,
concentrate_scale=True)``, L-BFGS, on the window's unit-free copy as the system fits it):
cold (statsmodels' own start parameters) and warm (the previous window's warm estimates as
``start_params``, what the system does). The two fits alternate which goes first, so both
see the same machine load.

With ``--raw`` the two chains are instead the system's warm fits on the raw prices (what it
did before it fitted a unit-free copy) and on the unit-free copy (what it does now): the
same figures, "cold" read as raw and "warm" as unit-free.

Printed per ticker x perturbation and overall: milliseconds per fit (fit + 20-step forecast;
median over windows), the warm/cold ratio, and the relative forecast difference
max_h |warm_h - cold_h| / |cold_h| per window (max, median, share over 1 %). With
``--reference`` each window also gets a reference optimum (the better of the two fits,
polished by Nelder-Mead): how far each fit's forecast is from it, and how often each fit's
log-likelihood is below it by more than 0.01 (landed elsewhere on the ridge).

    .venv/bin/python benchmarks/bench_arima.py --reference
    .venv/bin/python benchmarks/bench_arima.py --tickers AAPL,JPM --perturbations P0,P3 --windows 60
    .venv/bin/python benchmarks/bench_arima.py --raw --windows 60
"""

from __future__ import annotations

import os

# one BLAS thread, as the forecast workers run (tsrate.robustness.forecast.execute): OpenBLAS's
# own threads oversubscribe a loaded 2-core machine and make every fit many times slower
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from tsrate.config import Study  # noqa: E402
from tsrate.systems.arima import ArimaSystem, unit_free  # noqa: E402


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.abs(b)))


def main() -> None:
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    from benchmarks.bench_fracast import study_batches

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", default=None, help="comma list (default: the study's)")
    parser.add_argument("--perturbations", default=None, help="comma list (default: the study's)")
    parser.add_argument("--windows", type=int, default=None, help="first N windows of each")
    parser.add_argument("--reference", action="store_true", help="also a polished optimum")
    parser.add_argument("--raw", action="store_true", help="raw-price vs unit-free warm fits")
    args = parser.parse_args()
    study = Study.from_vars()
    tickers = set(args.tickers.split(",")) if args.tickers else set(study.tickers)
    perturbations = set(args.perturbations.split(",")) if args.perturbations else None
    system = ArimaSystem(study.arima_order)
    print(f"load before {os.getloadavg()[0]:.1f}; ARIMA{system.order}, horizon {study.horizon}")
    a, b = ("raw", "unit-free") if args.raw else ("cold", "warm")
    all_cold, all_warm, all_diff, all_ref = [], [], [], {"cold": [], "warm": []}
    elsewhere = {"cold": 0, "warm": 0}
    warnings.simplefilter("ignore")
    for batch in study_batches(study):
        if batch.ticker not in tickers or (
            perturbations and batch.perturbation_id not in perturbations
        ):
            continue
        contexts = batch.contexts[: args.windows] if args.windows else batch.contexts
        previous = previous_raw = None
        cold_ms, warm_ms, diffs = [], [], []
        for row, values in enumerate(contexts):
            started = time.perf_counter()
            context, scale = unit_free(values)
            copy_ms = 1000 * (time.perf_counter() - started)
            model = SARIMAX(context, order=system.order, concentrate_scale=True)
            fits = {}
            for kind in ("cold", "warm") if row % 2 == 0 else ("warm", "cold"):
                started = time.perf_counter()
                if kind == "cold" and args.raw:
                    fitted, previous_raw = system.fit_window(values, previous_raw)
                elif kind == "cold":
                    fitted = SARIMAX(context, order=system.order, concentrate_scale=True).fit(
                        disp=False
                    )
                else:
                    fitted, following = system.fit_window(context, previous)
                unit = 1.0 if kind == "cold" and args.raw else scale
                forecast = unit * np.asarray(fitted.forecast(batch.horizon), dtype=float)
                (cold_ms if kind == "cold" else warm_ms).append(
                    1000 * (time.perf_counter() - started) + (copy_ms if kind == "warm" else 0)
                )
                fits[kind] = (fitted, forecast)
            previous = following
            diffs.append(relative(fits["warm"][1], fits["cold"][1]))
            if args.reference and not args.raw:
                best = max((f for f, _ in fits.values()), key=lambda f: f.llf)
                polished = model.fit(
                    disp=False,
                    start_params=best.params,
                    method="nm",
                    maxiter=4000,
                    xtol=1e-10,
                    ftol=1e-12,
                )
                reference = polished if polished.llf > best.llf else best
                target = scale * np.asarray(reference.forecast(batch.horizon), dtype=float)
                for kind, (fitted, forecast) in fits.items():
                    all_ref[kind].append(relative(forecast, target))
                    elsewhere[kind] += fitted.llf < reference.llf - 0.01
        d = np.array(diffs)
        print(
            f"{batch.ticker} {batch.perturbation_id}: {len(d)} windows, {a} "
            f"{statistics.median(cold_ms):.1f} ms, {b} {statistics.median(warm_ms):.1f} ms "
            f"(x{statistics.median(warm_ms) / statistics.median(cold_ms):.2f}); forecast diff "
            f"max {d.max():.2e} median {np.median(d):.2e} over 1 %: {(d > 0.01).sum()}",
            flush=True,
        )
        all_cold += cold_ms
        all_warm += warm_ms
        all_diff += diffs
    d = np.array(all_diff)
    cold, warm = statistics.median(all_cold), statistics.median(all_warm)
    print(
        f"ALL: {len(d)} windows; ms per fit {a} {cold:.1f} (mean {statistics.mean(all_cold):.1f}),"
        f" {b} {warm:.1f} (mean {statistics.mean(all_warm):.1f}); {b}/{a} x{warm / cold:.2f} "
        f"(means x{statistics.mean(all_warm) / statistics.mean(all_cold):.2f}); forecast diff "
        f"max {d.max():.2e}, median {np.median(d):.2e}, p95 {np.quantile(d, 0.95):.2e}, "
        f"over 1 %: {(d > 0.01).mean():.1%} of windows"
    )
    if args.reference:
        for kind in ("cold", "warm"):
            r = np.array(all_ref[kind])
            print(
                f"  {kind} vs the reference optimum: forecast diff max {r.max():.2%}, median "
                f"{np.median(r):.4%}, over 1 %: {(r > 0.01).mean():.1%}; log-likelihood below "
                f"it by > 0.01 in {elsewhere[kind]} of {len(r)} windows"
            )
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
