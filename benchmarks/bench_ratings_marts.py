"""Benchmark: build the robustness and rating marts from ``marts.window_errors``.

Times ``dbt build`` of every model downstream of ``window_errors`` (the WRS, treatment,
perturbation-effect, score, rating and summary marts, their data tests and unit tests) plus
``user_study_tests`` and its step, on a temporary DuckDB warehouse, in a child process; reports
the wall time, the peak resident memory of that process (``wait4`` max RSS: dbt runs its Python
models in-process, so this covers pandas and DuckDB alike) and the rows of every output mart.

Two modes:

* synthetic (default): a temporary copy of the project whose seeds are edited so the study has
  ``--tickers`` companies in ``--industries`` industries, ``--systems`` systems (the first ones
  of seeds/systems.csv with their accepted perturbation sets, then synthetic P0-P3 systems if
  more are asked for) and one confounder distribution per industry and per company; a
  synthetic ``marts.window_errors`` of about ``--rows`` rows (every ticker x window x accepted
  perturbation of every system) is written with realistic structure: per-company price
  levels and per-system x company offsets (statistical bias), per-system skill, a market
  volatility shared by all tickers on a date, industry effects, perturbation effects that
  differ by system, lognormal noise.
  The copy's ``int_confounder_distributions`` reads the study's tickers from that table (the
  synthetic warehouse has no windows upstream), so every causal mart is built and measured.
* ``--default-study [PATH]``: copies a warehouse already built for the default study
  (default /tmp/t1.duckdb: 6 tickers x 153 windows x P0-P3 x 4 systems) and times the same
  selection on it (target: under 30 s on 2 cores).

    .venv/bin/python benchmarks/bench_ratings_marts.py --rows 10000000        # 500 tickers, 11 systems
    .venv/bin/python benchmarks/bench_ratings_marts.py --rows 1000000 --repeats 3
    .venv/bin/python benchmarks/bench_ratings_marts.py --default-study --repeats 3

Seeding (``dbt seed``) and writing window_errors are not timed. Each repeat starts from a
fresh copy of the warehouse (the marts are rebuilt from scratch); dbt's partial-parse cache in
the temporary target folder is kept between repeats, as in normal use.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SELECT = "window_errors+ int_user_study_tests_recomputed+"
EXCLUDE = "window_errors"
#: Every model the selection builds, with its schema (rows are counted after each build).
MARTS = [
    "marts.accuracy_scores",
    "intermediate.int_perturbation_sets_derived",
    "intermediate.int_wrs_pairs_tested",
    "marts.wrs_pairs",
    "intermediate.int_wrs_scores_summed",
    "intermediate.int_confounder_distributions",
    "intermediate.int_treatments_assigned",
    "marts.treatment_assignments",
    "intermediate.int_perturbation_effects_estimated",
    "marts.perturbation_effects",
    "marts.perturbation_effect_draws",
    "intermediate.int_perturbation_effects_aggregated",
    "marts.robustness_scores",
    "intermediate.int_ratings_assigned",
    "marts.ratings",
    "marts.partial_orders",
    "marts.system_summary",
    "marts.perturbation_summary",
    "marts.confounder_comparison",
    "intermediate.int_ratings_bootstrapped",
    "marts.rating_stability",
    "intermediate.int_user_study_tests_recomputed",
    "marts.user_study_tests",
]
PROJECT_FILES = ["dbt_project.yml", "profiles.yml", "models", "python_models", "seeds", "macros"]
RUN_ID = "bench-00000000T000000"


# --------------------------------------------------------------------------------------
# Project copy and seeds
# --------------------------------------------------------------------------------------


def copy_project(dest: Path) -> Path:
    """The dbt project without .venv/.git/warehouse/target (library code stays importable
    from the editable install, so edits under src/ are what gets measured)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def tickers_from_window_errors(project: Path) -> None:
    """In the synthetic copy, ``int_confounder_distributions`` reads the study's tickers from
    ``window_errors`` instead of ``int_windows_located``: the synthetic warehouse has no
    windows or prices upstream, so it would derive no distribution and every treatment,
    APE/PIE and stability mart would be built empty (unmeasured). The same tickers either
    way: window_errors holds every window of the study."""
    model = project / "python_models" / "intermediate" / "int_confounder_distributions.py"
    text = model.read_text()
    ref = 'dbt.ref("int_windows_located")'
    if ref not in text:
        raise SystemExit(f"{model.name} no longer reads {ref}: update the benchmark")
    model.write_text(text.replace(ref, 'dbt.ref("window_errors")'))


def set_memory_limit(project: Path, limit: str) -> None:
    """DuckDB's memory_limit for the copy's profile (default: 80 % of RAM). DuckDB's buffer
    pool grows to the limit on big aggregations (the grain tests of treatment_assignments)
    and spills to disk beyond it, so the limit caps the build's peak memory."""
    profiles = yaml.safe_load((project / "profiles.yml").read_text())
    for output in profiles["tsrate"]["outputs"].values():
        output.setdefault("settings", {})["memory_limit"] = limit
    (project / "profiles.yml").write_text(yaml.safe_dump(profiles, sort_keys=False))


def synthetic_study(
    n_tickers: int, n_industries: int, n_systems: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(companies, systems) of the synthetic study; systems carry accepted_perturbations."""
    tickers = [f"T{i:04d}" for i in range(n_tickers)]
    industries = [f"Industry {j + 1:02d}" for j in range(n_industries)]
    companies = pd.DataFrame(
        {
            "ticker": tickers,
            "company_name": [f"Company {t}" for t in tickers],
            "industry": [industries[i % n_industries] for i in range(n_tickers)],
            "biased_offset": [100 * (i % 17) for i in range(n_tickers)],
        }
    )
    seed_systems = pd.read_csv(ROOT / "seeds" / "systems.csv", dtype=str, keep_default_na=False)
    systems = seed_systems.head(n_systems).copy()
    extra = n_systems - len(systems)
    if extra > 0:
        template = seed_systems.iloc[0]
        rows = []
        for k in range(extra):
            row = template.copy()
            row["system_id"] = f"synthetic_{k + 1:02d}"
            row["display_name"] = f"Synthetic {k + 1}"
            row["paper_symbol"] = ""
            row["accepted_perturbations"] = "P0 P1 P2 P3"
            row["implementation"] = ""
            row["description"] = "Benchmark-only synthetic system."
            rows.append(row)
        systems = pd.concat([systems, pd.DataFrame(rows)], ignore_index=True)
    return companies, systems


def write_seeds(project: Path, companies: pd.DataFrame, systems: pd.DataFrame) -> None:
    """Companies, systems and one confounder distribution per industry and per company."""
    seeds = project / "seeds"
    companies.to_csv(seeds / "companies.csv", index=False)
    all_systems = pd.read_csv(seeds / "systems.csv", dtype=str, keep_default_na=False)
    extra = systems.loc[~systems["system_id"].isin(all_systems["system_id"])]
    pd.concat([all_systems, extra], ignore_index=True).to_csv(seeds / "systems.csv", index=False)
    industries = sorted(companies["industry"].unique())
    rows = [(f"DI{i + 1}", "industry", ind) for i, ind in enumerate(industries)]
    ordered = companies.sort_values(["industry", "ticker"])
    rows += [(f"DC{j + 1}", "company", t) for j, t in enumerate(ordered["ticker"])]
    dists = pd.DataFrame(rows, columns=["distribution_id", "confounder", "favored_value"])
    dists["treated_weight"] = 2
    dists["control_weight"] = 1
    dists.to_csv(seeds / "confounder_distributions.csv", index=False)


# --------------------------------------------------------------------------------------
# Synthetic window_errors
# --------------------------------------------------------------------------------------

#: Typical extra error of a perturbation, as a share of the clean error (system-scaled).
PERTURBATION_EFFECT = {"P0": 0.0, "P1": 1.5, "P2": 0.6, "P3": 0.2, "P4": 0.3, "P5": 0.4, "P6": 0.1}


def write_window_errors(
    warehouse: Path,
    companies: pd.DataFrame,
    systems: pd.DataFrame,
    target_rows: int,
    seed: int = 7,
) -> tuple[int, int]:
    """Write marts.window_errors (one run); returns (rows, windows per ticker)."""
    rng = np.random.default_rng(seed)
    perts = [s.split() for s in systems["accepted_perturbations"]]
    per_unit = sum(len(p) for p in perts)
    n_tickers = len(companies)
    n_windows = max(3, math.ceil(target_rows / (n_tickers * per_unit)))
    dates = pd.bdate_range("2015-01-02", periods=n_windows).to_numpy().astype("datetime64[D]")
    industries = sorted(companies["industry"].unique())
    ind_code = companies["industry"].map({v: i for i, v in enumerate(industries)}).to_numpy()

    level = np.exp(rng.normal(np.log(80.0), 0.9, n_tickers))  # price level per company
    daily_vol = level * rng.uniform(0.01, 0.03, n_tickers)  # typical daily move
    industry_effect = np.exp(rng.normal(0.0, 0.15, len(industries)))
    market = np.exp(np.cumsum(rng.normal(0.0, 0.05, n_windows)))  # volatility regime by date
    market /= market.mean()

    con = duckdb.connect(str(warehouse))
    try:
        con.execute("create schema if not exists marts")
        con.execute("drop table if exists marts.window_errors")
        con.execute(
            """
            create table marts.window_errors (
                run_id varchar, system_id varchar, ticker varchar, company_name varchar,
                industry varchar, window_end_date date, perturbation_id varchar,
                max_abs_residual double, last_context_value double,
                relative_max_abs_residual double, mean_residual double, smape double,
                mase double, sign_accuracy double, n_steps integer, wql double,
                coverage_error_80 double
            )
            """
        )
        rows = 0
        tick = np.repeat(np.arange(n_tickers), n_windows)
        win = np.tile(np.arange(n_windows), n_tickers)
        n_units = tick.size
        for s, row in enumerate(systems.itertuples(index=False)):
            skill = rng.uniform(1.0, 4.0)  # clean error in daily moves
            bias_scale = 3.0 if row.system_id == "biased" else rng.uniform(0.0, 0.6)
            offset = bias_scale * daily_vol * rng.normal(0.0, 1.0, n_tickers)
            sensitivity = rng.uniform(0.2, 1.5)
            hit_rate = rng.uniform(0.45, 0.6)
            for pid in perts[s]:
                effect = PERTURBATION_EFFECT.get(pid, 0.3) * sensitivity
                clean = daily_vol[tick] * skill * market[win] * industry_effect[ind_code[tick]]
                noise = rng.lognormal(0.0, 0.45, n_units)
                max_abs = (
                    np.abs(offset[tick])
                    + clean * (1.0 + effect * rng.gamma(2.0, 0.5, n_units)) * noise
                )
                mean_res = offset[tick] + rng.normal(0.0, 0.4, n_units) * clean
                smape = np.clip(0.8 * max_abs / level[tick], 0.0, 2.0)
                mase = max_abs / (daily_vol[tick] * rng.uniform(0.8, 1.2, n_units))
                sign = 100.0 * rng.binomial(20, hit_rate, n_units) / 20.0
                # the probabilistic outcomes: WQL grows with the error relative to the price,
                # the 80 % interval covers fewer steps as the perturbation's effect grows
                wql = 0.3 * max_abs / level[tick] * rng.lognormal(0.0, 0.2, n_units)
                covered = rng.binomial(20, np.clip(0.8 - 0.1 * effect, 0.05, 1.0), n_units)
                frame = pd.DataFrame(
                    {
                        "run_id": RUN_ID,
                        "system_id": row.system_id,
                        "ticker": pd.Categorical.from_codes(tick, companies["ticker"]),
                        "company_name": pd.Categorical.from_codes(tick, companies["company_name"]),
                        "industry": pd.Categorical.from_codes(ind_code[tick], industries),
                        "window_end_date": dates[win],
                        "perturbation_id": pid,
                        "max_abs_residual": max_abs,
                        "last_context_value": level[tick],
                        "relative_max_abs_residual": max_abs / level[tick],
                        "mean_residual": mean_res,
                        "smape": smape,
                        "mase": mase,
                        "sign_accuracy": sign,
                        "n_steps": np.full(n_units, 20, dtype=np.int32),
                        "wql": wql,
                        "coverage_error_80": np.abs(covered / 20.0 - 0.8),
                    }
                )
                con.register("chunk", frame)
                con.execute(
                    """
                    insert into marts.window_errors
                    select run_id, system_id, cast(ticker as varchar), cast(company_name as varchar),
                        cast(industry as varchar), cast(window_end_date as date),
                        perturbation_id, max_abs_residual, last_context_value,
                        relative_max_abs_residual, mean_residual, smape, mase,
                        sign_accuracy, n_steps, wql, coverage_error_80
                    from chunk
                    """
                )
                con.unregister("chunk")
                rows += n_units
        con.execute("checkpoint")
    finally:
        con.close()
    return rows, n_windows


# --------------------------------------------------------------------------------------
# Running dbt and measuring it
# --------------------------------------------------------------------------------------


def dbt_env(warehouse: Path, target: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TSRATE_WAREHOUSE=str(warehouse),
        DBT_TARGET_PATH=str(target),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DO_NOT_TRACK="1",
    )
    return env


def run_dbt(project: Path, warehouse: Path, target: Path, args: list[str]) -> dict:
    """Run dbt in a child; return wall seconds, peak RSS (MiB) and an RSS timeline."""
    command = [PYTHON, "-m", "dbt.cli.main", *args, "--project-dir", str(project)]
    command += ["--profiles-dir", str(project), "--log-path", str(target / "logs")]
    log = open(target.parent / f"dbt-{args[0]}.log", "a")
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=project, env=dbt_env(warehouse, target), stdout=log, stderr=subprocess.STDOUT
    )
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        status = Path(f"/proc/{process.pid}/status")
        while not done.is_set():
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        samples.append((time.perf_counter() - started, int(line.split()[1]) / 1024))
            except (OSError, ValueError):
                pass
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    if process.returncode != 0:
        tail = (target.parent / f"dbt-{args[0]}.log").read_text().splitlines()[-60:]
        raise SystemExit(f"dbt {args[0]} failed (exit {process.returncode}):\n" + "\n".join(tail))
    return {"wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024, "samples": samples}


def node_timings(target: Path, started_wall: float) -> list[dict]:
    """Per-node execution time (and start/end relative to the build) from run_results.json."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    out = []
    for res in results:
        timing = {t["name"]: t for t in res.get("timing", [])}
        execute = timing.get("execute")
        start = end = None
        if execute and execute.get("started_at") and execute.get("completed_at"):
            start = pd.Timestamp(execute["started_at"]).timestamp() - started_wall
            end = pd.Timestamp(execute["completed_at"]).timestamp() - started_wall
        out.append(
            {
                "node": res["unique_id"],
                "status": res["status"],
                "seconds": float(res["execution_time"]),
                "start": start,
                "end": end,
            }
        )
    return out


def peak_during(
    samples: list[tuple[float, float]], start: float | None, end: float | None
) -> float:
    if start is None or end is None:
        return float("nan")
    inside = [rss for t, rss in samples if start - 0.2 <= t <= end + 0.2]
    return max(inside) if inside else float("nan")


def count_rows(warehouse: Path) -> dict[str, int]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {name: con.execute(f"select count(*) from {name}").fetchone()[0] for name in MARTS}
    finally:
        con.close()


def build_once(
    project: Path, warehouse: Path, target: Path, threads: int | None, block: int | None = None
) -> dict:
    args = ["build", "--select", SELECT, "--exclude", EXCLUDE, "--indirect-selection", "cautious"]
    if threads:
        args += ["--threads", str(threads)]
    if block:  # a study with fewer window dates than two blocks publishes no bootstrap
        args += ["--vars", json.dumps({"bootstrap_block_length": block})]
    load_before = os.getloadavg()[0]
    wall_start = time.time()
    result = run_dbt(project, warehouse, target, args)
    result["load_before"] = load_before
    result["nodes"] = node_timings(target, wall_start)
    for node in result["nodes"]:
        node["peak_rss_mib"] = peak_during(result["samples"], node["start"], node["end"])
    return result


def report(results: list[dict], rows: dict[str, int], top: int) -> None:
    walls = [r["wall_s"] for r in results]
    peaks = [r["peak_rss_mib"] for r in results]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for i, r in enumerate(results, 1):
        print(
            f"  build {i}/{len(results)}: {r['wall_s']:.1f} s wall, peak RSS "
            f"{r['peak_rss_mib']:.0f} MiB (1-min load average before: {r['load_before']:.2f})"
        )
    print(
        f"median wall {statistics.median(walls):.1f} s (min {min(walls):.1f}, max {max(walls):.1f}); "
        f"peak RSS median {statistics.median(peaks):.0f} MiB (max {max(peaks):.0f} MiB)"
    )
    last = results[len(results) // 2]
    nodes = sorted(last["nodes"], key=lambda n: -n["seconds"])
    total_tests = sum(n["seconds"] for n in last["nodes"] if not n["node"].startswith("model."))
    print(
        f"slowest nodes of build {len(results) // 2 + 1} (data/unit tests together: {total_tests:.1f} s):"
    )
    for node in nodes[:top]:
        print(f"  {node['seconds']:8.2f} s  RSS<= {node['peak_rss_mib']:7.0f} MiB  {node['node']}")
    print("rows per mart:")
    for name, n in rows.items():
        print(f"  {name:40s} {n:>14,d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="target rows of window_errors")
    parser.add_argument("--tickers", type=int, default=500)
    parser.add_argument("--industries", type=int, default=10)
    parser.add_argument("--systems", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="dbt threads (default: profile)")
    parser.add_argument(
        "--block-length",
        type=int,
        default=None,
        help="the bootstrap's block length in windows (default: the project's var, 20); "
        "with fewer window dates than two blocks the bootstrap is withheld, not timed",
    )
    parser.add_argument(
        "--default-study",
        nargs="?",
        const="/tmp/t1.duckdb",
        default=None,
        metavar="WAREHOUSE",
        help="time the selection on a copy of this built default-study warehouse",
    )
    parser.add_argument(
        "--memory-limit",
        default=None,
        help="DuckDB memory_limit (e.g. 4GB) for the build, set in the copy's profile "
        "(default: the project's profile as is)",
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="keep files here (default: temp)"
    )
    parser.add_argument("--top", type=int, default=12, help="slowest nodes to list")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args()

    tmp = (
        tempfile.TemporaryDirectory(prefix="bench_ratings_marts_") if args.workdir is None else None
    )
    work = Path(tmp.name) if tmp else args.workdir
    work.mkdir(parents=True, exist_ok=True)
    try:
        project = copy_project(work / "project")
        if args.memory_limit:
            set_memory_limit(project, args.memory_limit)
        target = work / "target"
        base = work / "base.duckdb"
        if args.default_study:
            source = Path(args.default_study)
            if not source.exists():
                raise SystemExit(f"{source} does not exist: build the default study first")
            shutil.copy2(source, base)
            header = f"default study: {source}"
        else:
            companies, systems = synthetic_study(args.tickers, args.industries, args.systems)
            write_seeds(project, companies, systems)
            tickers_from_window_errors(project)
            header = ""
        seeded = run_dbt(project, base, target, ["seed"])
        print(f"dbt seed: {seeded['wall_s']:.1f} s (not in the timings below)", flush=True)
        # the marts and their tests also read models outside window_errors+ (stg_systems: the
        # seed plus raw.imported_systems; int_confounder_distributions, ...): create the raw
        # tables, then build every ancestor of the selection that window_errors does not feed
        from tsrate.platform.dbt_runner import ensure_raw_schema

        ensure_raw_schema(base)
        upstream = ["run", "--select", "@window_errors", "--exclude", "window_errors+"]
        staged = run_dbt(project, base, target, upstream)
        print(f"dbt run of the other upstream models: {staged['wall_s']:.1f} s (not timed)")
        if not args.default_study:
            started = time.perf_counter()
            n_rows, n_windows = write_window_errors(base, companies, systems, args.rows)
            sets = systems["accepted_perturbations"].value_counts()
            header = (
                f"synthetic window_errors: {n_rows:,d} rows = {args.tickers} tickers x "
                f"{n_windows} windows x {len(systems)} systems "
                f"({', '.join(f'{n} x [{s}]' for s, n in sets.items())}); "
                f"{args.industries} industries; {args.industries + args.tickers} confounder "
                f"distributions in the seed (the default var confounder_distributions: derived "
                f"derives its own from the companies, bounded by max_company_distributions); "
                f"written in "
                f"{time.perf_counter() - started:.1f} s"
            )
        if args.memory_limit:
            header += f"; DuckDB memory_limit {args.memory_limit}"
        print(header, flush=True)
        con = duckdb.connect(str(base), read_only=True)
        input_rows = con.execute("select count(*) from marts.window_errors").fetchone()[0]
        con.close()

        results = []
        for index in range(args.repeats):
            warehouse = work / "tsrate.duckdb"
            shutil.copy2(base, warehouse)
            result = build_once(project, warehouse, target, args.threads, args.block_length)
            results.append(result)
            print(
                f"build {index + 1}/{args.repeats}: {result['wall_s']:.1f} s, "
                f"peak RSS {result['peak_rss_mib']:.0f} MiB",
                flush=True,
            )
            rows = count_rows(warehouse)
            if index + 1 < args.repeats:
                warehouse.unlink()
        report(results, rows, args.top)
        if args.json:
            payload = {
                "header": header,
                "window_errors_rows": input_rows,
                "walls_s": [r["wall_s"] for r in results],
                "peaks_rss_mib": [r["peak_rss_mib"] for r in results],
                "rows": rows,
                "nodes": results[len(results) // 2]["nodes"],
                "cores": os.cpu_count(),
                "memory_limit": args.memory_limit,
            }
            args.json.write_text(json.dumps(payload, indent=2, default=str))
    finally:
        if tmp:
            tmp.cleanup()


if __name__ == "__main__":
    main()
