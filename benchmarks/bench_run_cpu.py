"""Benchmark: where a default `tsrate run`'s CPU goes, by process and phase.

Runs `tsrate run` once on a fresh warehouse (the dbt target folder given: empty for a first
run, the one a previous run left for the steady state), samples every process's CPU time
(``/proc/<pid>/stat``, utime + stime) every 0.1 s, and charges each increase to the process's
kind (the run itself, the dbt child, the forecast workers with their fork server) and to the
phase running then (the ``<phase>: started`` lines of the run's log). Then the run's budget:

* model compute: the forecasts' CPU seconds (``forecast CPU [...]``) and the dbt Python
  models' own time (``Python models' own time``), the floor ``bench_default_run.py`` uses;
* non-model CPU: everything else each kind of process spent, in core-seconds; on a busy
  machine of ``C`` cores it costs at least ``non-model / C`` seconds of wall.

A run overhead target of 10 % of the model compute (steady state) leaves
``0.10 x floor x C`` core-seconds for all of it: the table shows which process spends them.

    .venv/bin/python benchmarks/bench_run_cpu.py [--target DIR] [--keep DIR]

Linux only (``/proc``). Only the run's own processes (the ``tsrate run`` process and its
descendants, by parent pid) are charged; a descendant of no known kind is ``other``. The
rest of the machine (another session's dbt, a shell) is shown as ``outside the run`` and
left out of the budget: it costs the run wall time, not CPU of its own.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or imported
import bench_default_run  # noqa: E402 - the run benchmark's reading of the log

ROOT = Path(__file__).resolve().parents[1]
TSRATE = str(Path(sys.executable).parent / "tsrate")
PHASE = re.compile(r"^(\S+ \S+),(\d+) INFO \S+: ([a-z() ]+): started", re.M)


def kind(cmdline: str) -> str:
    """What a process is, from its command line."""
    if "dbt_child" in cmdline:
        return "dbt child"
    if "multiprocessing" in cmdline or "forkserver" in cmdline:
        return "forecast workers"  # the fork server and the workers forked from it
    if re.search(r"tsrate\S* run\b", cmdline):
        return "tsrate run"
    return "other"


#: processes that are not the run's (not its descendants): shown, never charged to it
OUTSIDE = "outside the run"


def descends(pid: int, root: int, parents: dict[int, int]) -> bool:
    """Whether ``pid`` is ``root`` or one of its descendants, by the parent pids known."""
    seen = set()
    while pid not in seen:
        if pid == root:
            return True
        seen.add(pid)
        pid = parents.get(pid, 0)
        if pid <= 1:
            return False
    return False


def phase_marks(log: str, started: float) -> list[tuple[str, float]]:
    """(phase, start time) in order: ``start`` at ``started``, then each ``<phase>: started``."""
    marks = [("start", started)]
    for match in PHASE.finditer(log):
        stamp = dt.datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").timestamp()
        marks.append((match.group(3), stamp + int(match.group(2)) / 1000))
    return marks


def attribute(
    events: list[tuple[float, str, float]], marks: list[tuple[str, float]]
) -> dict[tuple[str, str], float]:
    """CPU seconds by (phase, kind): each event (time, kind, seconds) goes to the last phase
    that started at or before it (events before the first mark are left out)."""
    table: dict[tuple[str, str], float] = collections.defaultdict(float)
    for at, what, seconds in events:
        current = None
        for name, start in marks:
            if at >= start:
                current = name
        if current is not None:
            table[(current, what)] += seconds
    return dict(table)


def model_compute(log: str) -> tuple[float, float]:
    """(forecast CPU seconds of every system, Python models' own time) from the run's log,
    read as ``bench_default_run.py`` reads it (which divides the CPU by the cores)."""
    per_core, python = bench_default_run.model_compute(log)
    return per_core * (os.cpu_count() or 1), python


def budget(
    table: dict[tuple[str, str], float], forecast_cpu: float, python_models: float
) -> dict[str, float]:
    """Non-model CPU seconds by kind: the workers' CPU less their forecasts, the dbt child's
    less the Python models' own time, the rest as it is."""
    by_kind: dict[str, float] = collections.defaultdict(float)
    for (_phase, what), seconds in table.items():
        by_kind[what] += seconds
    by_kind.pop(OUTSIDE, None)  # not the run's CPU
    by_kind["forecast workers"] -= forecast_cpu
    by_kind["dbt child"] -= python_models
    return dict(by_kind)


class Sampler:
    """Every process's CPU seconds, sampled; increases after ``start()`` become events."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.seen: dict[int, tuple[int, str]] = {}
        self.events: list[tuple[float, str, float]] = []
        self.parents: dict[int, int] = {}
        self.root = -1  # the run's pid, once started (:meth:`follow`)
        self.me = os.getpid()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def sample(self, record: bool) -> None:
        now = time.time()
        readings = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == self.me:
                continue
            pid = int(name)
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            self.parents[pid] = int(fields[1])  # every parent known before anything is judged
            readings.append((pid, int(fields[11]) + int(fields[12])))
        for pid, ticks in readings:
            old = self.seen.get(pid)
            if old is None or old[1] == "other":  # read again: a child between fork and
                what = self.kind_of(pid)  # exec still shows its parent's command line
            else:
                what = old[1]
            if old is None:
                self.seen[pid] = (ticks, what)
                if record and ticks:  # a process born since the last sample
                    self.events.append((now, what, ticks / self.ticks))
                continue
            if ticks > old[0] and record:
                self.events.append((now, what, (ticks - old[0]) / self.ticks))
            self.seen[pid] = (ticks, what)

    def kind_of(self, pid: int) -> str:
        if not descends(pid, self.root, self.parents):
            return OUTSIDE
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            raw = b""
        return kind(raw.replace(b"\0", b" ").decode(errors="replace"))

    def loop(self) -> None:
        while not self.stop.is_set():
            self.sample(record=True)
            time.sleep(self.interval)

    def start(self) -> None:
        self.sample(record=False)  # what runs already is not the run's

    def follow(self, root: int) -> None:
        """Sample from now on, charging ``root`` (the run) and its descendants."""
        self.root = root
        self.thread.start()

    def finish(self) -> None:
        time.sleep(self.interval * 1.5)
        self.stop.set()
        self.thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, help="dbt target folder (default: a new, empty one)")
    parser.add_argument("--keep", type=Path, help="folder for the warehouse and the run's log")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tsrate-cpu-"))
    work = options.keep or scratch / "run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    target = options.target or scratch / "target"
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(work / "tsrate.duckdb"),
        DBT_TARGET_PATH=str(target),
    )
    env.setdefault("PYTHONPATH", f"{ROOT / 'src'}{os.pathsep}{ROOT}")
    sampler = Sampler()
    sampler.start()
    started = time.time()
    run = subprocess.Popen(
        [TSRATE, "run"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    sampler.follow(run.pid)
    output, _ = run.communicate()
    ended = time.time()
    sampler.finish()
    log = output  # stderr went to stdout
    (work / "run.log").write_text(log)
    shutil.rmtree(scratch, ignore_errors=True)  # the warehouse too, unless --keep put it elsewhere
    if run.returncode != 0:
        raise SystemExit(f"tsrate run failed:\n{log[-3000:]}")
    marks = phase_marks(log, started)
    table = attribute(sampler.events, marks)
    forecast_cpu, python_models = model_compute(log)
    cores = os.cpu_count() or 1
    floor = forecast_cpu / cores + python_models
    wall = ended - started
    print(
        f"machine: {os.uname().sysname} {os.uname().machine}, {cores} cores; python {sys.version.split()[0]}"
    )
    print(f"wall {wall:.1f} s; model compute {floor:.1f} s (forecast CPU {forecast_cpu:.1f} s / "
          f"{cores} + Python models {python_models:.1f} s); overhead {wall - floor:.1f} s "
          f"({(wall - floor) / floor:.0%})")  # fmt: skip
    phases = [name for name, _ in marks]
    kinds = sorted({what for _, what in table})
    print(f"\n{'CPU s':>16} " + " ".join(f"{p[:11]:>11}" for p in phases) + f" {'total':>8}")
    for what in kinds:
        row = [table.get((p, what), 0.0) for p in phases]
        print(f"{what:>16} " + " ".join(f"{x:11.2f}" for x in row) + f" {sum(row):8.2f}")
    spent = budget(table, forecast_cpu, python_models)
    allowed = 0.10 * floor * cores
    print(
        "\nnon-model CPU (core-s): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(spent.items()))
    )
    print(f"all of it {sum(spent.values()):.2f} core-s = at least {sum(spent.values()) / cores:.1f} s "
          f"of wall on {cores} cores; a 10 % overhead allows {allowed:.1f} core-s")  # fmt: skip


if __name__ == "__main__":
    main()
