"""Benchmark: scale check of a whole ``tsrate run`` on a synthetic study: how wall time and
memory grow with the number of tickers and years, stage by stage.

For each size of a ladder (``TICKERSxYEARS``), writes seeded geometric random walks of daily
closes on business days (per ticker: annual drift ~ N(7 %, 5 %), annual volatility
U(15 %, 45 %), start price lognormal around 50) to a Parquet file, and runs the same command
a user would, in a child process::

    tsrate run --file prices.parquet --tickers T0000,... --start ... --end ... \\
        --systems naive,random,biased --perturbations P0,P1,P2,P3

on a temporary warehouse (``TSRATE_WAREHOUSE``) and a temporary copy of the project
(``TSRATE_PROJECT_DIR``) whose companies seed lists the synthetic tickers in 10 industries,
with one confounder distribution per industry and per company as in the default study.

Measured per stage (ingest, inference, dbt build, publish) and in total:

* wall seconds: the durations the pipeline already logs ("ingested ... in Xs",
  "forecast: ... in Xs", "dbt build finished in Xs", "published ... in Xs"); each stage's
  window ends when its line reaches this process and starts that many seconds earlier.
  Total is the child's wall time (Prefect's local API start included);
* memory: the child's max RSS from ``os.wait4`` (the largest single process of its tree:
  the flow process, a forecast worker or the dbt child) and, per stage, the peak of the
  summed RSS of the whole process tree sampled every 0.5 s from /proc;
* rows per second: price rows (ingest), forecast rows (inference), ``window_errors`` rows
  (build), published rows (publish).

"Windows" below are forecast windows: ticker x window end x perturbation x system, i.e. the
rows of ``marts.window_errors``. Cost growth is reported as seconds per million windows per
stage at each size, plus a least-squares line seconds = intercept + slope x Mwindows and its
R^2. ``--predict 500x10`` extrapolates the fit to a size that was not run. The temporary
warehouse of each size is measured on disk and deleted before the next size.

    .venv/bin/python benchmarks/bench_scale.py --ladder 50x2,100x2,200x2 --predict 500x10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ratings_marts import copy_project, write_seeds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TSRATE = str(Path(sys.executable).parent / "tsrate")
STAGES = ("ingest", "inference", "build", "publish")
FIRST_DAY = "2010-01-04"
N_INDUSTRIES = 10

#: Log lines the pipeline prints at the end of each stage; group "s" is the stage's seconds.
STAGE_PATTERNS = {
    "ingest": re.compile(
        r"ingested (?P<rows>\d+) rows for (?P<tickers>\d+) tickers .* in (?P<s>[\d.]+)s"
    ),
    "inference": re.compile(
        r"forecast: (?P<partitions>\d+) partitions \((?P<reused>\d+) reused, "
        r"(?P<computed>\d+) computed, (?P<rows>\d+) rows\) in (?P<s>[\d.]+)s"
    ),
    "build": re.compile(r"dbt build finished in (?P<s>[\d.]+)s"),
    "publish": re.compile(
        r"published (?P<tables>\d+) tables \((?P<rows>\d+) rows\) .* in (?P<s>[\d.]+)s"
    ),
    "pipeline": re.compile(r"run \S+ succeeded in (?P<s>[\d.]+)s"),
}


# --------------------------------------------------------------------------------------
# Pure helpers
# --------------------------------------------------------------------------------------


def parse_size(text: str) -> tuple[int, int]:
    """``"500x10"`` -> (500 tickers, 10 years)."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match or int(match[1]) < 1 or int(match[2]) < 1:
        raise ValueError(f"size {text!r}: expected TICKERSxYEARS, e.g. 500x10")
    return int(match[1]), int(match[2])


def parse_stage_lines(lines: list[tuple[float, str]]) -> dict[str, dict]:
    """Stage results from time-stamped log lines ``(seconds since start, text)``.

    Returns ``{stage: {"seconds", "start", "end", <numeric groups of its pattern>}}`` for every
    stage whose end-of-stage line was seen (the last one wins); ``start = end - seconds``.
    """
    found: dict[str, dict] = {}
    for at, text in lines:
        for stage, pattern in STAGE_PATTERNS.items():
            match = pattern.search(text)
            if match:
                values = {k: float(v) if k == "s" else int(v) for k, v in match.groupdict().items()}
                seconds = values.pop("s")
                found[stage] = {"seconds": seconds, "start": at - seconds, "end": at, **values}
    return found


def linear_fit(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """Least-squares line ``y = intercept + slope * x``; returns (slope, intercept, R^2).

    R^2 is 1 - SS_res / SS_tot (1.0 when every y is equal and fitted exactly). Needs at least
    two distinct x values.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.size < 2 or np.unique(xs).size < 2:
        raise ValueError("a linear fit needs at least two distinct sizes")
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = float(np.sum((ys - (intercept + slope * xs)) ** 2))
    total = float(np.sum((ys - ys.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else (1.0 if residual < 1e-12 else 0.0)
    return float(slope), float(intercept), r2


def peak_between(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """Largest sampled value with ``start - 0.5 <= t <= end + 0.5`` (NaN if none)."""
    inside = [v for t, v in samples if start - 0.5 <= t <= end + 0.5]
    return max(inside) if inside else float("nan")


# --------------------------------------------------------------------------------------
# Synthetic study
# --------------------------------------------------------------------------------------


def synthetic_companies(n_tickers: int) -> pd.DataFrame:
    tickers = [f"T{i:04d}" for i in range(n_tickers)]
    return pd.DataFrame(
        {
            "ticker": tickers,
            "company_name": [f"Company {t}" for t in tickers],
            "industry": [f"Industry {i % N_INDUSTRIES + 1:02d}" for i in range(n_tickers)],
            "biased_offset": [100 * (i % 17) for i in range(n_tickers)],
        }
    )


def synthetic_prices(tickers: list[str], years: int, seed: int = 7) -> pd.DataFrame:
    """Geometric random walks on business days from FIRST_DAY for ``years`` years.

    Per ticker: annual drift ~ N(0.07, 0.05), annual volatility ~ U(0.15, 0.45), daily log
    returns (mu - sigma^2/2)/252 + sigma/sqrt(252) * N(0, 1), start ~ lognormal(log 50, 0.8).
    """
    rng = np.random.default_rng(seed)
    days = pd.bdate_range(FIRST_DAY, periods=252 * years)
    n, t = len(tickers), len(days)
    mu = rng.normal(0.07, 0.05, n)
    sigma = rng.uniform(0.15, 0.45, n)
    start = np.exp(rng.normal(np.log(50.0), 0.8, n))
    steps = (mu - sigma**2 / 2)[:, None] / 252 + (sigma / np.sqrt(252))[:, None] * rng.normal(
        0.0, 1.0, (n, t)
    )
    steps[:, 0] = 0.0
    close = start[:, None] * np.exp(np.cumsum(steps, axis=1))
    return pd.DataFrame(
        {
            "ticker": np.repeat(np.asarray(tickers), t),
            "date": np.tile(days.to_numpy(), n),
            "close": np.round(close.ravel(), 4),
        }
    )


# --------------------------------------------------------------------------------------
# Running and measuring one size
# --------------------------------------------------------------------------------------


def _tree_rss_mib(pid: int) -> float:
    """Summed VmRSS of ``pid`` and all its descendants (MiB)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def run_size(n_tickers: int, years: int, systems: str, workers: int | None, work: Path) -> dict:
    """Write the study, run ``tsrate run`` in a child, measure it, delete the warehouse."""
    companies = synthetic_companies(n_tickers)
    project = copy_project(work / "project")
    seed_systems = pd.read_csv(ROOT / "seeds" / "systems.csv", dtype=str, keep_default_na=False)
    write_seeds(project, companies, seed_systems.head(0))
    prices = synthetic_prices(list(companies["ticker"]), years)
    price_file = work / "prices.parquet"
    prices.to_parquet(price_file, index=False)
    first, last = prices["date"].min().date(), prices["date"].max().date()
    warehouse = work / "wh" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    command = [
        TSRATE, "run", "--file", str(price_file), "--tickers", ",".join(companies["ticker"]),
        "--start", str(first), "--end", str(last), "--systems", systems,
        "--perturbations", "P0,P1,P2,P3",
    ]  # fmt: skip
    if workers:
        command += ["--workers", str(workers)]
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(warehouse),
        TSRATE_PROJECT_DIR=str(project),
        DBT_TARGET_PATH=str(work / "target"),
        PYTHONUNBUFFERED="1",
    )
    load_before = os.getloadavg()
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[tuple[float, str]] = []
    samples: list[tuple[float, float]] = []
    done = threading.Event()
    log = open(work / "run.log", "w")

    def read() -> None:
        for line in child.stdout:
            lines.append((time.perf_counter() - started, line.rstrip()))
            log.write(line)

    def sample() -> None:
        while not done.is_set():
            samples.append((time.perf_counter() - started, _tree_rss_mib(child.pid)))
            done.wait(0.5)

    threads = [threading.Thread(target=f, daemon=True) for f in (read, sample)]
    for thread in threads:
        thread.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    for thread in threads:
        thread.join()
    log.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = "\n".join(text for _, text in lines[-60:])
        raise SystemExit(f"tsrate run failed for {n_tickers}x{years} (exit {code}):\n{tail}")
    stages = parse_stage_lines(lines)
    missing = [s for s in (*STAGES, "pipeline") if s not in stages]
    if missing:
        raise SystemExit(f"{n_tickers}x{years}: no end-of-stage log line for {missing}")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        count = lambda table: con.execute(f"select count(*) from {table}").fetchone()[0]  # noqa: E731
        rows = {
            "prices": count("raw.prices"),
            "forecasts": count("raw.forecasts"),
            "window_errors": count("marts.window_errors"),
            "windows_per_ticker": con.execute(
                "select count(distinct window_end_date) from marts.window_errors"
            ).fetchone()[0],
        }
    finally:
        con.close()
    disk = sum(f.stat().st_size for f in warehouse.parent.rglob("*") if f.is_file())
    results_file = work / "target" / "run_results.json"
    run_results = json.loads(results_file.read_text())["results"] if results_file.exists() else []
    slowest = sorted(run_results, key=lambda n: -float(n["execution_time"]))[:6]
    shutil.rmtree(warehouse.parent)
    for stage in STAGES:
        stages[stage]["tree_rss_mib"] = peak_between(
            samples, stages[stage]["start"], stages[stage]["end"]
        )
    stage_rows = {
        "ingest": rows["prices"],
        "inference": stages["inference"]["rows"],
        "build": rows["window_errors"],
        "publish": stages["publish"]["rows"],
    }
    return {
        "tickers": n_tickers,
        "years": years,
        "period": f"{first}..{last}",
        "wall_s": wall,
        "pipeline_s": stages["pipeline"]["seconds"],
        "max_rss_mib": usage.ru_maxrss / 1024,
        "tree_rss_peak_mib": max(v for _, v in samples) if samples else float("nan"),
        "stages": {s: stages[s] for s in STAGES},
        "stage_rows": stage_rows,
        "rows": rows,
        "windows": rows["window_errors"],
        "disk_mib": disk / 2**20,
        "slowest_nodes": [(n["unique_id"], float(n["execution_time"])) for n in slowest],
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def print_size(r: dict) -> None:
    mw = r["windows"] / 1e6
    print(
        f"\n### {r['tickers']} tickers x {r['years']} years ({r['period']}): "
        f"{r['rows']['windows_per_ticker']} windows per ticker, {r['windows']:,d} windows "
        f"(window_errors rows), {r['rows']['prices']:,d} price rows, "
        f"{r['rows']['forecasts']:,d} forecast rows"
    )
    print(
        f"load average before {r['load_before'][0]:.2f}, after {r['load_after'][0]:.2f}; "
        f"warehouse folder on disk {r['disk_mib']:.0f} MiB (deleted)\n"
    )
    print("| stage | wall s | s per M windows | rows | rows/s | peak RSS, process tree |")
    print("|---|---|---|---|---|---|")
    for stage in STAGES:
        s = r["stages"][stage]
        n = r["stage_rows"][stage]
        print(
            f"| {stage} | {s['seconds']:.1f} | {s['seconds'] / mw:.1f} | {n:,d} | "
            f"{n / s['seconds'] if s['seconds'] else float('nan'):,.0f} | "
            f"{s['tree_rss_mib']:.0f} MiB |"
        )
    other = r["wall_s"] - sum(r["stages"][s]["seconds"] for s in STAGES)
    print(f"| other (Prefect start, report, bookkeeping) | {other:.1f} | {other / mw:.1f} | | | |")
    print(
        f"| total | {r['wall_s']:.1f} | {r['wall_s'] / mw:.1f} | {r['windows']:,d} | "
        f"{r['windows'] / r['wall_s']:,.0f} | {r['tree_rss_peak_mib']:.0f} MiB "
        f"(largest process {r['max_rss_mib']:.0f} MiB) |"
    )
    if r.get("slowest_nodes"):
        print(
            "\nslowest dbt nodes: "
            + ", ".join(f"{name.split('.')[-1]} {sec:.1f} s" for name, sec in r["slowest_nodes"])
        )


def print_fit(results: list[dict], predict: list[tuple[int, int]]) -> dict:
    x = [r["windows"] / 1e6 for r in results]
    series = {s: [r["stages"][s]["seconds"] for r in results] for s in STAGES}
    series["total"] = [r["wall_s"] for r in results]
    fits = {name: linear_fit(x, y) for name, y in series.items()}
    print("\n### Linear fit: seconds = intercept + slope x million windows\n")
    print("| stage | slope (s per M windows) | intercept s | R^2 |")
    print("|---|---|---|---|")
    for name, (slope, intercept, r2) in fits.items():
        print(f"| {name} | {slope:.1f} | {intercept:.1f} | {r2:.4f} |")
    for tickers, years in predict:
        # windows per ticker grow with trading days less one context+horizon; take it from
        # the measured sizes of the same period if any, else scale the first size's.
        same = [r for r in results if r["years"] == years]
        if same:
            w = same[0]["windows"] / same[0]["tickers"] * tickers
        else:
            first = results[0]
            lost = 252 * first["years"] - first["rows"]["windows_per_ticker"]
            w = (
                (252 * years - lost)
                * tickers
                * first["windows"]
                / (first["tickers"] * first["rows"]["windows_per_ticker"])
            )
        parts = {n: fits[n][1] + fits[n][0] * w / 1e6 for n in fits}
        print(
            f"\nextrapolated {tickers} x {years} y ({w / 1e6:.2f} M windows): "
            + ", ".join(f"{n} {v / 60:.0f} min" for n, v in parts.items())
        )
    return {
        name: dict(zip(("slope", "intercept", "r2"), f, strict=True)) for name, f in fits.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", default="50x2,100x2,200x2", help="sizes TICKERSxYEARS")
    parser.add_argument("--systems", default="naive,random,biased")
    parser.add_argument("--workers", type=int, default=None, help="forecast processes")
    parser.add_argument("--predict", default="500x10", help="sizes to extrapolate ('' for none)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    parser.add_argument(
        "--previous",
        type=Path,
        action="append",
        default=[],
        help="a --json file of an earlier invocation: its sizes join the fit (not rerun)",
    )
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.ladder.split(",")]
    predict = [parse_size(s) for s in args.predict.split(",") if s.strip()]

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}; load average at start "
        + " ".join(f"{v:.2f}" for v in os.getloadavg()),
        flush=True,
    )
    results = [r for p in args.previous for r in json.loads(p.read_text())["results"]]
    for tickers, years in sizes:
        with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
            result = run_size(tickers, years, args.systems, args.workers, Path(tmp))
        results.append(result)
        print_size(result)
        sys.stdout.flush()
    fits = print_fit(results, predict) if len({r["windows"] for r in results}) > 1 else {}
    print("\nload average at end " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    if args.json:
        args.json.write_text(json.dumps({"results": results, "fits": fits}, indent=2, default=str))


if __name__ == "__main__":
    main()
