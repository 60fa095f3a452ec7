"""Plant scientific errors one at a time and say whether the named tests catch each one.

    git clone -q . /tmp/planted && ln -s "$PWD/.venv" /tmp/planted/.venv
    .venv/bin/python tests/planted/plant.py --repo /tmp/planted tests/planted/core_stats.json

Each spec file is a JSON list of planted errors: ``{"id", "file", "old", "new", "tests"}``
(``file`` relative to the repository, ``old`` the exact text replaced by ``new``, ``tests``
the pytest arguments that ought to catch it; optional ``nth`` when ``old`` occurs more than
once, optional ``desc``). For each, the file is changed in ``--repo`` (a clone: its files are
rewritten and always restored), the tests run with ``-x`` in one process, and one line says
CAUGHT (a test failed), MISSED (they passed: a gap in the tests), BAD TESTS (pytest could not
run them, e.g. a test file that does not exist) or SKIP (the text is gone:
the code moved on; update the spec). An error that changes nothing the code can produce
carries ``"equivalent": "why"`` and is reported as EQUIVALENT when missed. Results are also
appended as JSON lines to ``--out``. Exit status 1 when any other error was missed.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


def plant(text: str, old: str, new: str, nth: int | None) -> str | None:
    """``text`` with the ``nth`` (default: the only) occurrence of ``old`` replaced."""
    count = text.count(old)
    if count == 0 or (count > 1 and not nth) or (nth and nth > count):
        return None
    at = -1
    for _ in range(nth or 1):
        at = text.index(old, at + 1)
    return text[:at] + new + text[at + len(old) :]


def run_one(repo: Path, error: dict, timeout: int) -> dict:
    path = repo / error["file"]
    text = path.read_text()
    planted = plant(text, error["old"], error["new"], error.get("nth"))
    if planted is None:
        return {"id": error["id"], "status": "SKIP", "failed": []}
    # no bytecode: a stale .pyc of an earlier planted error of the same size and second
    # could stand in for the file
    env = dict(
        os.environ, PYTHONPATH=f"{repo / 'src'}{os.pathsep}{repo}", PYTHONDONTWRITEBYTECODE="1"
    )
    # one dbt target for every error of this process: dbt re-parses only the planted file
    # (tests/conftest.py's dbt_target), not the whole project in every pytest session
    env.setdefault("TSRATE_TEST_DBT_TARGET", f"/tmp/plant-{os.getpid()}-dbt-target")
    command = [str(repo / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-x"]
    command += ["-p", "no:cacheprovider", "-n", "0", *error["tests"]]
    started = time.perf_counter()
    try:
        path.write_text(planted)
        try:
            done = subprocess.run(
                command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout
            )
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            code, output = "timeout", ""
    finally:
        path.write_text(text)
    failed = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
    # pytest's exit 4 is a usage error (e.g. a test file that does not exist): nothing ran,
    # so nothing was caught
    status = {0: "MISSED", 4: "BAD TESTS", 5: "NO TESTS"}.get(code, "CAUGHT")
    if status == "MISSED" and error.get("equivalent"):
        status = "EQUIVALENT"
    seconds = round(time.perf_counter() - started, 1)
    return {"id": error["id"], "status": status, "failed": failed[:3], "seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", type=Path, help="spec files (JSON lists)")
    parser.add_argument("--repo", type=Path, required=True, help="a clone to plant errors in")
    parser.add_argument("--only", nargs="*", help="ids to run, by spaces or commas (default: all)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per planted error")
    parser.add_argument("--out", type=Path, help="append results here as JSON lines")
    options = parser.parse_args()
    repo = options.repo.resolve()
    if repo == Path(__file__).resolve().parents[2]:
        sys.exit("plant.py: --repo is this checkout; give it a clone (see the module doc)")
    if "TSRATE_TEST_DBT_TARGET" not in os.environ:  # ours: removed when the run ends
        target = f"/tmp/plant-{os.getpid()}-dbt-target"
        os.environ["TSRATE_TEST_DBT_TARGET"] = target
        atexit.register(shutil.rmtree, target, ignore_errors=True)
    only = {i for item in options.only or () for i in item.split(",") if i}
    known = {e["id"] for spec in options.specs for e in json.loads(spec.read_text())}
    if only - known:  # a typo or a comma-joined list must not pass as "nothing missed"
        unknown = ", ".join(sorted(only - known))
        sys.exit(f"plant.py: no entry with id {unknown} in the given specs; check --only")
    missed = 0
    for spec in options.specs:
        for error in json.loads(spec.read_text()):
            if only and error["id"] not in only:
                continue
            result = run_one(repo, error, options.timeout)
            missed += result["status"] in ("MISSED", "BAD TESTS")
            print(f"{spec.stem} {result['id']}: {result['status']} {result['failed']}", flush=True)
            if options.out:
                with options.out.open("a") as out:
                    out.write(json.dumps({"spec": spec.name, **result}) + "\n")
    return 1 if missed else 0


def _terminated(signum, frame):  # SIGTERM as Ctrl-C: the planted file is restored (finally)
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminated)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("plant.py: interrupted; the planted file was restored")
