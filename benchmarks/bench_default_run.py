"""Benchmark: the default `tsrate run` from an empty warehouse (the README's main job).

Runs `tsrate run` REPEATS times in a child process, each on a fresh temporary warehouse
(so every forecast partition is computed; nothing is reused), and reports the median wall
time, the peak resident memory of the largest process (the children's max RSS), each
phase's time (the ``<phase>: done in`` lines), and the overhead above the model compute:

* model compute = forecast CPU-seconds of every system / forecast workers (the floor of
  the forecast phase on this many cores) + the dbt Python models' own time. The forecast
  CPU-seconds are measured in the workers around each system's forecasts alone (since
  session 16: before, the wall time, including each worker's first imports and weight
  loading and any time another process held the core);
* overhead = wall - model compute (Python start, ingest, workers' setup, dbt's own cost,
  publish, report).

After the repeats, on the last warehouse: a rerun (every forecast stored: reused) and a
`tsrate build --no-publish` (the build alone, as the figures before `tsrate build`
published), and their ratio; and how long a misspelled system and an empty query take
to be reported (median of 3).
The machine is shared: the load (``/proc/loadavg``) is printed before and after each step.

    .venv/bin/python benchmarks/bench_default_run.py [REPEATS]

``loads`` mode: a first run and a steady-state run at each background load, and
the overhead above the model compute as a ratio (targets: <= 15 % first, <= 10 % steady):

* first run: a fresh warehouse and a fresh dbt target folder (no manifest, no partial
  parse: dbt parses the project from scratch), as a fresh clone's first ``tsrate run``;
* steady state: another fresh warehouse (every forecast computed again) with the target
  folder the first run left (dbt's partial parse kept), as every later run of a new study;
* background load: ``N`` busy-looping processes started before and stopped after each pair
  (``--background 0,2`` gives load ~1 and ~3 on an otherwise idle 2-core machine).

    .venv/bin/python benchmarks/bench_default_run.py loads --background 0,2 [--repeats 1]

Bytecode caches stay warm (a fresh clone's ``make setup`` compiles the installed packages;
only tsrate's own modules would be compiled on its first import, ~1 s).
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TSRATE = str(Path(sys.executable).parent / "tsrate")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def tsrate(
    workdir: Path, *args: str, check: bool = True, target: Path | None = None
) -> tuple[float, str]:
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(workdir / "tsrate.duckdb"),
        DBT_TARGET_PATH=str(target or workdir / "target"),
    )
    env.setdefault("PYTHONPATH", f"{ROOT / 'src'}{os.pathsep}{ROOT}")
    started = time.perf_counter()
    result = subprocess.run([TSRATE, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    output = result.stdout + result.stderr
    if check and result.returncode != 0:
        raise SystemExit(f"tsrate {' '.join(args)} failed:\n{output[-3000:]}")
    return wall, output


def phases(output: str) -> dict[str, float]:
    return {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"INFO \S+: ([a-z() ]+): done in ([\d.]+)s", output)
    }


def _bracket(line: str, label: str) -> float:
    """Sum of the ``<system> <seconds>s`` items in the ``label [ ... ]`` part of ``line``."""
    match = re.search(re.escape(label) + r" \[([^\]]*)\]", line)
    return (
        sum(float(s) for s in re.findall(r" ([\d.]+)s\b", " " + match.group(1))) if match else 0.0
    )


def model_compute(output: str) -> tuple[float, float]:
    """(forecast CPU-s / workers, Python models' own seconds) from the run's log. The
    forecasts' CPU seconds leave out each worker's one-time setup (imports, weights) and
    time lost to other processes on the cores: both are overhead."""
    line = next((ln for ln in output.splitlines() if " forecast: " in ln and "[" in ln), "")
    cpu = _bracket(line, "forecast CPU")
    python = re.search(r"Python models' own time ([\d.]+)s", output)
    return cpu / (os.cpu_count() or 1), float(python.group(1)) if python else 0.0


def worker_setup(output: str) -> float:
    """The workers' one-time setup seconds (summed over workers) from the run's log."""
    line = next((ln for ln in output.splitlines() if " forecast: " in ln and "[" in ln), "")
    return _bracket(line, "worker setup")


def timed_run(workdir: Path, target: Path, extra: tuple[str, ...] = ()) -> dict[str, float]:
    """One ``tsrate run`` into ``workdir``'s fresh warehouse with dbt's ``target``: wall,
    model compute (forecast CPU-s / cores + the Python models' own time), overhead."""
    wall, output = tsrate(workdir, "run", *extra, target=target)
    forecast_floor, python_s = model_compute(output)
    compute = forecast_floor + python_s
    return {
        "wall": wall,
        "compute": compute,
        "overhead": (wall - compute) / compute,
        "setup": worker_setup(output),
    }


@contextlib.contextmanager
def background_load(n: int):  # noqa: ANN201 - a context manager
    """``n`` busy-looping processes for the duration of the block."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(20 if n else 0)  # let the load average climb
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


def loads(backgrounds: list[int], repeats: int, extra: tuple[str, ...] = ()) -> None:
    keep = Path(tempfile.mkdtemp(prefix="bench-loads-"))
    rows = []
    try:
        for n in backgrounds:
            for repeat in range(repeats):
                with background_load(n):
                    target = keep / f"target-{n}-{repeat}"
                    before = load()
                    first = timed_run(keep / f"first-{n}-{repeat}", target, extra)
                    steady = timed_run(keep / f"steady-{n}-{repeat}", target, extra)
                    after = load()
                for kind, row in (("first run", first), ("steady state", steady)):
                    rows.append((n, kind, row))
                    print(
                        f"background {n} (load {before} -> {after}) {kind}: {row['wall']:.1f}s "
                        f"wall, model compute {row['compute']:.1f}s, overhead "
                        f"{row['overhead']:.0%} (workers' setup {row['setup']:.1f} worker-s)",
                        flush=True,
                    )
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for n in backgrounds:
        for kind, target in (("first run", 0.15), ("steady state", 0.10)):
            chosen = [r for m, k, r in rows if m == n and k == kind]
            wall = statistics.median(r["wall"] for r in chosen)
            ratio = statistics.median(r["overhead"] for r in chosen)
            verdict = "meets" if ratio <= target else "misses"
            print(
                f"background {n}: {kind} median {wall:.1f}s, overhead above model compute "
                f"{ratio:.0%} ({verdict} the {target:.0%} target)"
            )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "loads":
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("mode")
        parser.add_argument(
            "--background", type=lambda s: [int(x) for x in s.split(",")], default=[0, 2]
        )
        parser.add_argument("--repeats", type=int, default=1)
        parser.add_argument(
            "--run-args", default="", help="extra `tsrate run` flags (a smoke check: a tiny study)"
        )
        args = parser.parse_args()
        loads(args.background, args.repeats, tuple(args.run_args.split()))
        return
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    walls, peaks, overheads = [], [], []
    keep = Path(tempfile.mkdtemp(prefix="bench-run-"))
    try:
        for index in range(repeats):
            workdir = keep / f"run{index}"
            before = load()
            wall, output = tsrate(workdir, "run")
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            forecast_floor, python_s = model_compute(output)
            overhead = wall - forecast_floor - python_s
            walls.append(wall)
            peaks.append(peak)
            overheads.append(overhead)
            steps = ", ".join(f"{k} {v:.1f}s" for k, v in phases(output).items())
            print(
                f"run {index + 1}/{repeats}: {wall:.1f}s wall (load {before} -> {load()}), "
                f"peak RSS {peak:.0f} MiB; model compute {forecast_floor:.1f}s forecasts "
                f"(CPU-s / {os.cpu_count()} cores) + {python_s:.1f}s Python models; "
                f"overhead {overhead:.1f}s (workers' setup {worker_setup(output):.1f} "
                f"worker-s); phases: {steps}",
                flush=True,
            )
        last = keep / f"run{repeats - 1}"
        rerun, output = tsrate(last, "run")
        steps = ", ".join(f"{k} {v:.1f}s" for k, v in phases(output).items())
        build, _ = tsrate(last, "build", "--no-publish")  # the build alone, as before
        print(
            f"rerun (all forecasts stored): {rerun:.1f}s; tsrate build: {build:.1f}s; "
            f"ratio {rerun / build:.2f} (load {load()}); rerun phases: {steps}",
            flush=True,
        )
        for args, word in ((("run", "--systems", "arma"), "arma"), (("query", ""), "SQL")):
            timed = [tsrate(last, *args, check=False) for _ in range(3)]
            output = timed[0][1]
            first = next((ln for ln in output.splitlines() if word in ln), output[-200:])
            print(
                f"`tsrate {' '.join(repr(a) if not a else a for a in args)}` reported in "
                f"{statistics.median(t for t, _ in timed):.2f}s (median of 3, load {load()}): "
                f"{first.strip()[:160]}",
                flush=True,
            )
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(
        f"median wall {statistics.median(walls):.1f}s (min {min(walls):.1f}s, max {max(walls):.1f}s); "
        f"median overhead above model compute {statistics.median(overheads):.1f}s; "
        f"peak RSS {max(peaks):.0f} MiB"
    )


if __name__ == "__main__":
    main()
