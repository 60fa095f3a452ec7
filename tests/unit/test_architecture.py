"""The shape of the code, checked with the standard library's ast only (no import of tsrate).

- zero import cycles among tsrate's modules and the flows, counting function-local imports;
- the library (src/tsrate) never imports the top-level `flows` package;
- no private name (`_x`) is imported from another module;
- no module in src/tsrate is over MAX_LINES lines, but the listed exceptions.

An import edge goes to the module named, or to `pkg.name` when `from pkg import name` names a
submodule. Importing a package's `__init__` implicitly is not an edge (the `__init__`s are light).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 700
# Known debt: over the limit and not split yet (none left). Each entry must still be over the
# limit (a test checks), so the list only shrinks; a module not listed here fails at once.
LONG_MODULE_EXCEPTIONS: dict[str, str] = {}
# Known debt: import cycles not broken yet (none left). The test fails on any cycle not listed
# here, and on a listed one that is gone (then delete it here); the list only shrinks.
KNOWN_CYCLES: list[set[str]] = []


def _module_files() -> dict[str, Path]:
    """Every module of tsrate and of flows/, by dotted name."""
    found: dict[str, Path] = {}
    for base, top in ((ROOT / "src", "tsrate"), (ROOT, "flows")):
        for path in sorted((base / top).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _module_files()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, level: int, current: str) -> str:
    """The absolute name of a (possibly relative) `from ... import`."""
    if level == 0:
        return module
    package = current if _is_package(current) else current.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{module}" if module else package


def _known(name: str) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(name: str, tree: ast.AST | None = None) -> list[tuple[str, list[str], int]]:
    """(target module, names imported from it, line) for every import in a module, at any depth."""
    if tree is None:
        tree = ast.parse(MODULES[name].read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name)
                if target:
                    found.append((target, [], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, name)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:
                    found.append((sub, [], node.lineno))
                else:
                    target = _known(base)
                    if target:
                        found.append((target, [alias.name], node.lineno))
    return found


def import_graph(extra: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    graph = {
        name: {target for target, _, _ in imports_of(name) if target != name} for name in MODULES
    }
    for name, targets in (extra or {}).items():
        graph.setdefault(name, set()).update(targets)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_no_import_cycles():
    found = [set(c) for c in cycles(import_graph())]
    unexpected = [sorted(c) for c in found if c not in KNOWN_CYCLES]
    assert not unexpected, f"import cycles (function-local imports count): {unexpected}"
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"a known cycle is gone: delete it from KNOWN_CYCLES: {gone}"


def test_a_planted_cycle_is_found():
    """The checker itself can fail: one extra edge back up the stack makes a cycle."""
    planted = import_graph({"tsrate.platform.warehouse": {"tsrate.cli"}})
    assert any("tsrate.cli" in c and "tsrate.platform.warehouse" in c for c in cycles(planted))


def test_the_library_never_imports_flows():
    offenders = [
        f"{name}:{line}"
        for name in MODULES
        if name.startswith("tsrate")
        for target, _, line in imports_of(name)
        if target == "flows" or target.startswith("flows.")
    ]
    assert not offenders, f"src/tsrate imports the flows package: {offenders}"


def test_no_private_name_crosses_a_module_boundary():
    offenders = []
    for name in MODULES:
        for target, names, line in imports_of(name):
            if target == name:
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            # a private module (`pkg._settings`) is shared within its own package only
            package, _, last = target.rpartition(".")
            if last.startswith("_") and not name.startswith(package + "."):
                private.append(target)
            if private:
                offenders.append(f"{name}:{line} imports {private} from {target}")
    assert not offenders, "private names imported across modules:\n" + "\n".join(offenders)


def test_no_module_is_too_long():
    long = {
        name: len(path.read_text().splitlines())
        for name, path in MODULES.items()
        if name.startswith("tsrate") and len(path.read_text().splitlines()) > MAX_LINES
    }
    unexpected = {name: n for name, n in long.items() if name not in LONG_MODULE_EXCEPTIONS}
    assert not unexpected, f"modules over {MAX_LINES} lines: {unexpected}"
    fixed = sorted(set(LONG_MODULE_EXCEPTIONS) - set(long))
    assert not fixed, (
        f"no longer over {MAX_LINES} lines: delete from LONG_MODULE_EXCEPTIONS: {fixed}"
    )


# Known debt: unit test modules that still start a process (none left). Each entry must still
# do so (a test checks), so the list only shrinks; a unit module not listed here that starts
# one fails.
SUBPROCESS_EXCEPTIONS: dict[str, str] = {}
#: Modules whose import means a test can start a process.
PROCESS_MODULES = ("subprocess", "multiprocessing")
#: tsrate.platform.dbt_runner's functions that start a dbt child process.
DBT_CHILD_STARTERS = {"run_dbt", "prepare_build", "build", "docs"}


def _starts_a_process(path: Path) -> bool:
    """Whether a test module imports a process module, or calls one of the dbt runner's
    functions that start a child (through ``dbt_runner`` or a name imported from it)."""
    tree = ast.parse(path.read_text())
    runner_aliases: set[str] = set()
    starters: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROCESS_MODULES:
                    return True
                if alias.name == "tsrate.platform.dbt_runner":
                    runner_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in PROCESS_MODULES:
                return True
            for alias in node.names:
                if module == "tsrate.platform" and alias.name == "dbt_runner":
                    runner_aliases.add(alias.asname or alias.name)
                elif module == "tsrate.platform.dbt_runner" and alias.name in DBT_CHILD_STARTERS:
                    starters.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        # a worker pool of tsrate's own (run_forecasts(..., workers=2) and the like)
        for keyword in node.keywords:
            value = keyword.value
            if (
                keyword.arg == "workers"
                and isinstance(value, ast.Constant | ast.Name)
                and not (isinstance(value, ast.Constant) and value.value in (0, 1, None))
            ):
                return True
        func = node.func
        if isinstance(func, ast.Name) and func.id in starters:
            return True
        if (
            isinstance(func, ast.Attribute)
            and func.attr in DBT_CHILD_STARTERS
            and isinstance(func.value, ast.Name)
            and func.value.id in runner_aliases
        ):
            return True
    return False


def test_unit_tests_start_no_processes():
    """A unit test runs in this process; one that starts a child (the CLI as a user runs it,
    a fresh interpreter, a dbt build, a process pool it imports) is an integration test
    (tests/integration/). The helpers unit tests import from tests/support/ start none
    either."""
    folders = (ROOT / "tests" / "unit", ROOT / "tests" / "support")
    starting = {p.stem for f in folders for p in f.glob("*.py") if _starts_a_process(p)}
    unexpected = sorted(starting - set(SUBPROCESS_EXCEPTIONS))
    assert not unexpected, (
        f"unit tests that start processes (move them to integration): {unexpected}"
    )
    fixed = sorted(set(SUBPROCESS_EXCEPTIONS) - starting)
    assert not fixed, f"no longer start a process: delete from SUBPROCESS_EXCEPTIONS: {fixed}"


def test_the_process_guard_sees_each_way_a_test_starts_one(tmp_path):
    """The guard's probe on small sources: every way named above is seen; reading the dbt
    runner's constants or a function of the same name elsewhere is not."""
    cases = {
        "import subprocess": True,
        "from subprocess import run": True,
        "import multiprocessing.pool": True,
        "from tsrate.platform import dbt_runner as dbt\ndbt.build(None)": True,
        "import tsrate.platform.dbt_runner as runner\nrunner.run_dbt(['parse'])": True,
        "from tsrate.platform.dbt_runner import prepare_build\nprepare_build()": True,
        "from tsrate.platform.dbt_runner import RETIRED_MARTS, ensure_raw_schema\n"
        "ensure_raw_schema()": False,
        "from tsrate.platform import dbt_runner as dbt\ndbt.log_folder()": False,
        "def build():\n    pass\nbuild()": False,
        "run_forecasts(con, study, companies, workers=2)": True,
        "for n in (1, 2):\n    run_forecasts(con, study, companies, workers=n)": True,
        "run_forecasts(con, study, companies, workers=1)": False,
    }
    for number, (source, starts) in enumerate(cases.items()):
        path = tmp_path / f"case{number}.py"
        path.write_text(source + "\n")
        assert _starts_a_process(path) == starts, source
