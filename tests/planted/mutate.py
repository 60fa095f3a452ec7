"""Plant every small error of a few kinds in one file, one at a time, and list the ones no test catches.

The hand-written specs beside this script plant errors someone thought of; this sweep plants
all of a few mechanical kinds, so a gap nobody thought of shows up too:

* Python: ``+ -``, ``* /``, ``//`` -> ``/``, ``**`` -> ``*``, the comparisons (``<`` <-> ``<=``,
  ``>`` <-> ``>=``, ``==`` <-> ``!=``), ``+=`` <-> ``-=``, a unary minus dropped, ``not``
  dropped, integers +1 / -1, floats x 2, and the names ``True/False``, ``and/or``,
  ``min/max``, ``argmin/argmax``, ``mean/median``, ``floor/ceil``, ``any/all`` ... swapped;
* SQL (dbt models and macros; Jinja left alone): the same operators and numbers, ``asc/desc``,
  ``lag/lead``, ``stddev_samp/stddev_pop``, ``min/max``, ``avg/median``, ``and/or``,
  ``is null/is not null``, ``<>``/``=``, ``count(distinct`` -> ``count(``.

Strings, comments and docstrings are never changed. Each error is planted in ``--repo`` (a
clone, as for ``plant.py``; the file is always restored), the named tests run with ``-x``,
and one line says CAUGHT, MISSED or BROKEN (the planted file no longer compiles: skipped).
``--spec OUT.json`` writes the missed ones as a ``plant.py`` spec to triage: give each real
gap a test, mark the rest ``"equivalent": "why"``.

    git clone -q . /tmp/mut && ln -s "$PWD/.venv" /tmp/mut/.venv
    .venv/bin/python tests/planted/mutate.py --repo /tmp/mut src/tsrate/methods/noise.py \\
        --tests tests/unit/test_stats.py --spec /tmp/noise_missed.json
    .venv/bin/python tests/planted/mutate.py src/tsrate/methods/noise.py --list   # no run
"""

from __future__ import annotations

import argparse
import atexit
import io
import json
import keyword
import os
import re
import shutil
import signal
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

PY_OPERATORS = {
    "+": ["-"],
    "-": ["+"],
    "*": ["/"],
    "/": ["*"],
    "//": ["/"],
    "**": ["*"],
    "<": ["<="],
    "<=": ["<"],
    ">": [">="],
    ">=": [">"],
    "==": ["!="],
    "!=": ["=="],
    "+=": ["-="],
    "-=": ["+="],
}
PY_NAMES = {
    "True": "False",
    "False": "True",
    "and": "or",
    "or": "and",
    "min": "max",
    "max": "min",
    "argmin": "argmax",
    "argmax": "argmin",
    "nanmin": "nanmax",
    "nanmax": "nanmin",
    "idxmin": "idxmax",
    "idxmax": "idxmin",
    "mean": "median",
    "median": "mean",
    "nanmean": "nanmedian",
    "nanmedian": "nanmean",
    "floor": "ceil",
    "ceil": "floor",
    "any": "all",
    "all": "any",
    "nsmallest": "nlargest",
    "nlargest": "nsmallest",
    "cumsum": "cumprod",
    "std": "var",
    "var": "std",
}
#: tokens after which a ``-`` or ``*`` is unary or unpacking, not binary
OPENERS = {"(", "[", "{", ",", "=", ":", "return", "lambda", "yield", "else", "if", "in", "**"}
OPENERS |= {op for op in PY_OPERATORS} | {"and", "or", "not", "->", "%", "@", "|", "&"}

SQL_WORDS = {
    "asc": "desc",
    "desc": "asc",
    "lag": "lead",
    "lead": "lag",
    "stddev_samp": "stddev_pop",
    "stddev_pop": "stddev_samp",
    "var_samp": "var_pop",
    "var_pop": "var_samp",
    "min": "max",
    "max": "min",
    "avg": "median",
    "median": "avg",
    "and": "or",
    "or": "and",
    "true": "false",
    "false": "true",
    "least": "greatest",
    "greatest": "least",
    "floor": "ceil",
    "ceil": "floor",
    "preceding": "following",
    "following": "preceding",
    "arg_min": "arg_max",
    "arg_max": "arg_min",
}
SQL_OPERATORS = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "=": "<>",
    "<>": "=",
    "!=": "=",
}
SQL_TOKEN = re.compile(
    r"(?P<skip>--[^\n]*|'(?:[^']|'')*'|\"[^\"]*\"|\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\})"
    r"|(?P<phrase>\bis\s+not\s+null\b|\bis\s+null\b|\bcount\(\s*distinct\b)"
    r"|(?P<number>(?<![\w.])\d+(?:\.\d+)?(?![\w.]))"
    r"|(?P<word>\b[a-z_][a-z0-9_]*\b)"
    r"|(?P<op><=|>=|<>|!=|[-+*/<>=])"
    r"|(?P<punct>[(),.])",
    re.S | re.I,
)


@dataclass(frozen=True)
class Mutant:
    line: int  # 1-based
    start: int  # offset in the file
    end: int
    new: str
    kind: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new + text[self.end :]


def _offsets(text: str) -> list[int]:
    starts, at = [0], 0
    for line in text.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


def _number_variants(token: str) -> list[str]:
    literal = token.replace("_", "")
    if re.fullmatch(r"\d+", literal):
        value = int(literal)
        return [str(value + 1)] + ([str(value - 1)] if value >= 1 else [])
    try:
        value = float(literal)
    except ValueError:
        return []  # hex, complex ...
    return [repr(value * 2) if value else "1.0"]


def python_mutants(text: str) -> list[Mutant]:
    """Every mutant of the kinds above in Python source ``text``."""
    starts = _offsets(text)
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    mutants: list[Mutant] = []
    previous = ""
    skip_line = -1
    for token in tokens:
        kind, string, (row, col), (erow, ecol), line = token
        offset, end = starts[row - 1] + col, starts[erow - 1] + ecol
        stripped = line.lstrip()
        if stripped.startswith(("import ", "from ", "@", "assert ")) or row == skip_line:
            previous = string if kind not in (tokenize.NL, tokenize.COMMENT) else previous
            continue
        if kind == tokenize.OP and string in PY_OPERATORS:
            unary = previous in OPENERS or previous == ""
            if string in ("-", "+") and unary:
                if string == "-":
                    mutants.append(Mutant(row, offset, end, "", "drop unary -"))
            elif string in ("*", "**") and unary:
                pass  # unpacking
            else:
                for new in PY_OPERATORS[string]:
                    mutants.append(Mutant(row, offset, end, new, f"{string} -> {new}"))
        elif kind == tokenize.NUMBER:
            for new in _number_variants(string):
                mutants.append(Mutant(row, offset, end, new, f"{string} -> {new}"))
        elif kind == tokenize.NAME and string in PY_NAMES:
            new = PY_NAMES[string]
            mutants.append(Mutant(row, offset, end, new, f"{string} -> {new}"))
        elif kind == tokenize.NAME and string == "not":
            mutants.append(Mutant(row, offset, end + 1, "", "drop not"))
        if kind not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT):
            previous = string
        if kind == tokenize.NAME and keyword.iskeyword(string) and string == "raise":
            skip_line = row  # error messages and their arithmetic are not the science
    return mutants


def sql_mutants(text: str) -> list[Mutant]:
    """Every mutant of the kinds above in a dbt SQL file (Jinja, strings, comments kept)."""
    starts = _offsets(text)
    mutants: list[Mutant] = []
    previous = ""
    for match in SQL_TOKEN.finditer(text):
        if match.lastgroup == "skip":
            if match.group().startswith(("{{", "'", '"')):
                previous = "operand"  # a Jinja expression or a literal stands for a value
            elif match.group().startswith("{%"):
                previous = ""
            continue
        string, start, end = match.group(), match.start(), match.end()
        row = next(i for i, s in enumerate(starts) if s > start)  # 1-based line
        if match.lastgroup == "phrase":
            low = re.sub(r"\s+", " ", string.lower())
            new = {"is null": "is not null", "is not null": "is null"}.get(low, "count(")
            mutants.append(Mutant(row, start, end, new, f"{low} -> {new}"))
        elif match.lastgroup == "number":
            for new in _number_variants(string):
                mutants.append(Mutant(row, start, end, new, f"{string} -> {new}"))
        elif match.lastgroup == "word" and string.lower() in SQL_WORDS:
            new = SQL_WORDS[string.lower()]
            if string.lower() in ("min", "max", "avg", "median", "lag", "lead", "least"):
                if not text[end:].lstrip().startswith("("):
                    previous = string
                    continue  # a column or alias named so
            mutants.append(Mutant(row, start, end, new, f"{string} -> {new}"))
        elif match.lastgroup == "punct":
            pass
        elif match.lastgroup == "op":
            unary = previous in ("", "(", ",", "=", "then", "else", "select", "when", "by")
            if string == "*" and (previous in ("", "(", ",", "select", ".") or unary):
                pass  # select *, count(*)
            elif string == "-" and unary:
                mutants.append(Mutant(row, start, end, "", "drop unary -"))
            elif string in SQL_OPERATORS:
                new = SQL_OPERATORS[string]
                mutants.append(Mutant(row, start, end, new, f"{string} -> {new}"))
        previous = string.lower()
    return mutants


def mutants_of(path: Path, text: str) -> list[Mutant]:
    return sql_mutants(text) if path.suffix == ".sql" else python_mutants(text)


def compiles(path: Path, text: str) -> bool:
    if path.suffix != ".py":
        return True
    try:
        compile(text, str(path), "exec")
    except SyntaxError:
        return False
    return True


SYMBOLS = {"+": "plus", "-": "minus", "*": "times", "/": "div", "<": "lt", ">": "gt"}
SYMBOLS |= {"=": "eq", "!": "not", "->": "to"}


def _slug(kind: str) -> str:
    words = re.sub("->|[-+*/<>=!]", lambda m: f" {SYMBOLS[m.group()]} ", kind.lower())
    return re.sub(r"[^a-z0-9]+", "_", words).strip("_")


def spec_entry(rel: str, text: str, mutant: Mutant, tests: list[str]) -> dict:
    """A ``plant.py`` entry: the whole line as ``old`` (``nth`` when it repeats)."""
    starts = _offsets(text)
    line_start, line_end = starts[mutant.line - 1], starts[mutant.line]
    old = text[line_start:line_end].rstrip("\n")
    new = mutant.apply(text)[line_start : line_end + len(mutant.new) - (mutant.end - mutant.start)]
    new = new.rstrip("\n")
    entry = {
        "id": f"{Path(rel).parent.name}_{Path(rel).stem}_L{mutant.line}c{mutant.start - line_start}"
        f"_{_slug(mutant.kind)}",
        "file": rel,
        "old": old,
        "new": new,
        "tests": tests,
        "desc": f"mutation sweep: {mutant.kind} on line {mutant.line}",
    }
    count = text.count(old)
    if count > 1:
        entry["nth"] = text[:line_start].count(old) + 1
    return entry


PRELOAD = ("numpy", "pandas", "scipy.stats", "scipy.optimize", "duckdb", "pyarrow")


class Runner:
    """Runs the tests in a child forked from a process that has imported pytest and the heavy
    third-party libraries once (never tsrate: each child imports the planted file afresh);
    about 3x faster than a new interpreter per mutant. Bytecode is never written, so a stale
    ``.pyc`` of an earlier mutant of the same size cannot stand in for the file."""

    def __init__(self, repo: Path, tests: list[str], preload: tuple[str, ...]) -> None:
        self.repo, self.tests = repo, tests
        sys.dont_write_bytecode = True
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        import importlib

        import pytest  # noqa: F401 - loaded once, before the forks

        for name in preload:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        self.log = Path(f"/tmp/mutate-{os.getpid()}.log")
        # one dbt target for every mutant: dbt re-parses only the planted file, not the whole
        # project in each child (tests/conftest.py's dbt_target); a SQL mutant 8 -> 6 s here
        if "TSRATE_TEST_DBT_TARGET" not in os.environ:  # ours: removed when the sweep ends
            target = f"/tmp/mutate-{os.getpid()}-dbt-target"
            os.environ["TSRATE_TEST_DBT_TARGET"] = target
            atexit.register(shutil.rmtree, target, ignore_errors=True)
        atexit.register(self.log.unlink, missing_ok=True)
        self.child: int | None = None

    def stop(self) -> None:
        """Kill the pytest child under way, if any (on SIGTERM or Ctrl-C)."""
        if self.child:
            try:
                os.kill(self.child, 9)
                os.waitpid(self.child, 0)
            except OSError:
                pass
            self.child = None

    def __call__(self, timeout: float) -> tuple[str, list[str]]:
        pid = os.fork()
        if pid == 0:  # the child: run pytest in the clone, output to the log
            try:
                os.chdir(self.repo)
                sys.path[:0] = [str(self.repo / "src"), str(self.repo)]
                # and in the processes the tests start (a dbt child, a fresh interpreter):
                # without it they import the checkout of the venv's editable install
                os.environ["PYTHONPATH"] = f"{self.repo / 'src'}{os.pathsep}{self.repo}"
                fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                import pytest

                args = ["-q", "-x", "-p", "no:cacheprovider", "-n", "0", *self.tests]
                code = int(pytest.main(args))
            except BaseException:
                code = 3
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
        self.child = pid
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return "CAUGHT", ["timeout"]
            time.sleep(0.02)
        self.child = None
        code = os.waitstatus_to_exitcode(status)
        output = self.log.read_text(errors="replace")
        failed = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
        if code == 5:
            return "NO TESTS", []
        return ("MISSED" if code == 0 else "CAUGHT"), failed[:2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="the file to mutate, relative to the repository")
    parser.add_argument("--repo", type=Path, help="a clone to plant errors in")
    parser.add_argument(
        "--tests", nargs="+", default=[], help="pytest arguments (options such as --deselect too)"
    )
    parser.add_argument("--lines", help="only lines A-B (1-based, inclusive)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--out", type=Path, help="append every result here as JSON lines")
    parser.add_argument("--spec", type=Path, help="write the missed ones here as a plant.py spec")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default 4x baseline)")
    parser.add_argument(
        "--preload", nargs="*", default=list(PRELOAD), help="third-party modules imported once"
    )
    options, extra = parser.parse_known_args()
    options.tests += extra  # pytest options given with the tests (--deselect ID, -k EXPR)
    here = Path(__file__).resolve().parents[2]
    source_root = options.repo.resolve() if options.repo else here
    path = source_root / options.file
    text = path.read_text()
    mutants = mutants_of(path, text)
    if options.lines:
        first, last = (int(x) for x in options.lines.split("-"))
        mutants = [m for m in mutants if first <= m.line <= last]
    if options.list:
        for m in mutants:
            print(f"{options.file}:{m.line}: {m.kind}")
        print(f"{len(mutants)} mutants")
        return 0
    if not options.repo or source_root == here:
        sys.exit("mutate.py: --repo must be a clone, not this checkout (see the module doc)")
    if not options.tests:
        sys.exit("mutate.py: name the tests that ought to catch errors in this file (--tests)")
    for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        cached.unlink()  # a stale .pyc must not stand in for a planted file
    run_tests = Runner(source_root, options.tests, tuple(options.preload))
    started = time.perf_counter()
    status, failed = run_tests(timeout=3600)
    baseline = time.perf_counter() - started
    if status != "MISSED":
        sys.exit(f"mutate.py: the tests fail before any mutation ({status}: {failed})")
    timeout = options.timeout or max(30.0, 4 * baseline)
    print(f"{len(mutants)} mutants; the tests take {baseline:.1f} s unmutated", flush=True)
    missed, counts = [], {}

    def terminated(signum, frame):  # SIGTERM: restore the file (finally below), then exit
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)
    try:
        for mutant in mutants:
            planted = mutant.apply(text)
            if not compiles(path, planted):
                status, failed = "BROKEN", []
            else:
                path.write_text(planted)
                try:
                    status, failed = run_tests(timeout)
                finally:
                    path.write_text(text)
            counts[status] = counts.get(status, 0) + 1
            entry = spec_entry(options.file, text, mutant, options.tests)
            print(
                f"{status:7} {options.file}:{mutant.line}: {mutant.kind} {failed[:1]}", flush=True
            )
            if status == "MISSED":
                missed.append(entry)
            if options.out:
                with options.out.open("a") as out:
                    out.write(json.dumps({"status": status, "failed": failed, **entry}) + "\n")
    finally:
        run_tests.stop()
        path.write_text(text)
        if options.spec:
            options.spec.write_text(json.dumps(missed, indent=1) + "\n")
    print(" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if missed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("mutate.py: interrupted; the planted file was restored")
