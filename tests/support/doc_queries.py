"""The SQL the docs hand a reader, found where a reader copies it, and the dbt YAML it names.

Queries: every ```sql block (split into statements), every `tsrate query "..."` of a shell
block, every `con.sql(...)` string of a Python block, and every inline `select ...` span of
README.md and docs/**/*.md. A query that is deliberately not runnable (a template with
placeholders) carries `<!-- not run: why -->` on the line just above its block or just
before its inline span; nothing else is left out.

Which warehouse a page assumes: the core pages (README.md, docs/*.md) the core build; a
suite's page (docs/suites/<suite>.md) that suite's build; docs/suites/README.md shows the
reasoning suite's marts. Nothing here starts a process."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import yaml

from tsrate.config import project_dir

NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>[^>]*?)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[A-Za-z]*)\s*$")
SHELL_QUERY = re.compile(r'tsrate query(?P<before>[^"\n]*)"(?P<sql>[^"]+)"(?P<after>[^\n]*)')
PYTHON_QUERY = re.compile(r'\.(?:sql|execute)\(\s*"""(?P<sql>.*?)"""', flags=re.S)
INLINE = re.compile(r"`(?P<sql>select\s[^`]+)`", flags=re.I)
SHELL = {"bash", "sh", "shell", "console", ""}
#: The suite whose build a suite page's queries read.
SUITE_OF_PAGE = {
    "docs/suites/README.md": "reasoning",
    "docs/suites/reasoning.md": "reasoning",
    "docs/suites/understanding.md": "understanding",
    "docs/suites/interpretability.md": "interpretability",
}
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The schema each folder of models/ and python_models/ builds into.
LAYERS = ("staging", "intermediate", "marts")


@dataclass(frozen=True)
class DocQuery:
    page: str  # relative to the project, e.g. docs/ratings.md
    line: int  # 1-based line of the statement's first line
    sql: str
    live: bool  # `tsrate query --live`: reads raw, staging and intermediate too
    kind: str = "sql"  # sql (a block), shell (`tsrate query`), python, inline

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class NotRun:
    page: str
    line: int
    why: str
    sql: str


def doc_pages(root: Path | None = None) -> list[Path]:
    root = root or project_dir()
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def warehouse_of(page: str) -> str:
    """'core' or the suite whose build the page's queries read."""
    return SUITE_OF_PAGE.get(page, "core")


def _marker_above(lines: list[str], index: int) -> str | None:
    """The `not run` reason when the nearest non-blank line above line `index` (0-based)
    is that marker alone."""
    for previous in range(index - 1, -1, -1):
        if lines[previous].strip():
            found = NOT_RUN.fullmatch(lines[previous].strip())
            return found.group("why") if found else None
    return None


def _statements(block: str, first_line: int) -> list[tuple[int, str]]:
    """(line, statement) per `;`-separated statement of a SQL block, comments dropped."""
    found, current, start = [], [], None
    for offset, raw in enumerate(block.splitlines()):
        code = re.sub(r"--.*", "", raw)
        for piece_index, piece in enumerate(code.split(";")):
            if piece_index:
                if current and "".join(current).strip():
                    found.append((start, "\n".join(current).strip()))
                current, start = [], None
            if piece.strip() and start is None:
                start = first_line + offset
            current.append(piece)
    if current and "".join(current).strip():
        found.append((start, "\n".join(current).strip()))
    return found


def documented_queries(page: Path, root: Path | None = None) -> tuple[list[DocQuery], list[NotRun]]:
    """The queries of one page, and those marked `not run` (with why)."""
    root = root or project_dir()
    name = page.relative_to(root).as_posix()
    lines = page.read_text().splitlines()
    queries: list[DocQuery] = []
    skipped: list[NotRun] = []
    prose: list[str] = []  # the lines outside fences; fence lines blanked, numbering kept
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            prose.append(lines[index])
            index += 1
            continue
        lang, opening = fence.group("lang").lower(), index
        end = opening + 1
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        body = "\n".join(lines[opening + 1 : end])
        prose.extend([""] * (end + 1 - opening))
        index = end + 1
        found: list[tuple[int, str, bool]] = []
        kind = {"sql": "sql", "python": "python"}.get(lang, "shell")
        if lang == "sql":
            found = [(line, sql, False) for line, sql in _statements(body, opening + 2)]
        elif lang in SHELL:
            for match in SHELL_QUERY.finditer(body):
                flags = match.group("before") + match.group("after")
                line = opening + 2 + body.count("\n", 0, match.start())
                found.append((line, match.group("sql"), "--live" in flags))
        elif lang == "python":
            for match in PYTHON_QUERY.finditer(body):
                sql = match.group("sql")
                start = match.start("sql") + len(sql) - len(sql.lstrip())
                line = opening + 2 + body.count("\n", 0, start)
                found.append((line, match.group("sql").strip(), False))
        why = _marker_above(lines, opening)
        for line, sql, live in found:
            if why is not None:
                skipped.append(NotRun(name, line, why, sql))
            else:
                queries.append(DocQuery(name, line, sql, live, kind))
    text = "\n".join(prose)
    for match in INLINE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        sql = re.sub(r"\s+", " ", match.group("sql")).strip()
        before = text[: match.start()].rstrip()
        marker = re.search(NOT_RUN.pattern + r"$", before[-300:])
        if marker is not None:
            skipped.append(NotRun(name, line, marker.group("why"), sql))
        else:
            live = bool(re.search(r"\bfrom\s+(raw|staging|intermediate)\.", sql, flags=re.I))
            queries.append(DocQuery(name, line, sql, live, "inline"))
    queries.sort(key=lambda query: query.line)
    skipped.sort(key=lambda marked: marked.line)
    return queries, skipped


def all_documented_queries(root: Path | None = None) -> tuple[list[DocQuery], list[NotRun]]:
    queries, skipped = [], []
    for page in doc_pages(root):
        found, marked = documented_queries(page, root)
        queries.extend(found)
        skipped.extend(marked)
    return queries, skipped


def queries_for(warehouse: str, root: Path | None = None) -> list[DocQuery]:
    """The runnable queries of the pages that assume `warehouse` ('core' or a suite)."""
    queries, _ = all_documented_queries(root)
    return [query for query in queries if warehouse_of(query.page) == warehouse]


def failures(con: duckdb.DuckDBPyConnection, queries: list[DocQuery]) -> list[str]:
    """Each query run as written on `con`: 'page:line: DuckDB's error' per one that fails."""
    problems = []
    for query in queries:
        try:
            con.execute(query.sql).fetchall()
        except duckdb.Error as error:
            first = str(error).splitlines()[0]
            problems.append(f"{query.where}: {first}\n    {query.sql[:200]}")
    return problems


def run_documented_queries(warehouse: Path, which: str) -> list[tuple[DocQuery, int]]:
    """Run every query of the pages assuming `which` on the warehouse file; fail naming each
    page, line and DuckDB error. Returns each query with its row count."""
    queries = queries_for(which)
    if not queries:
        return []
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        problems = failures(con, queries)
        assert not problems, "documented SQL that fails as written:\n" + "\n".join(problems)
        return [(query, len(con.execute(query.sql).fetchall())) for query in queries]
    finally:
        con.close()


# --- the dbt YAML: every model, seed and source with its declared columns -------------------


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    columns: dict[str, str | None]  # column -> declared data_type (None: not declared)
    declares_columns: bool


@functools.cache
def declared_relations(root: Path | None = None) -> dict[tuple[str, str], Relation]:
    """(schema, name) -> Relation for every model, seed and source table in the YAML."""
    root = root or project_dir()
    found: dict[tuple[str, str], Relation] = {}
    files = [
        *sorted((root / "models").rglob("*.yml")),
        *sorted((root / "python_models").rglob("*.yml")),
        *sorted((root / "seeds").rglob("*.yml")),
    ]
    for path in files:
        spec = yaml.load(path.read_text(), Loader=LOADER) or {}
        parts = path.relative_to(root).parts
        layer = next((part for part in parts if part in LAYERS), None)
        for kind in ("models", "seeds"):
            for entry in spec.get(kind) or []:
                schema = "seeds" if kind == "seeds" else layer
                if schema is None:
                    continue
                columns = {c["name"]: c.get("data_type") for c in entry.get("columns") or []}
                found[(schema, entry["name"])] = Relation(
                    schema, entry["name"], columns, bool(columns)
                )
        for source in spec.get("sources") or []:
            schema = source.get("schema", source["name"])
            for table in source.get("tables") or []:
                columns = {c["name"]: c.get("data_type") for c in table.get("columns") or []}
                found[(schema, table["name"])] = Relation(
                    schema, table["name"], columns, bool(columns)
                )
    return found


def assert_documented_queries_return_rows(warehouse: Path, which: str) -> None:
    """A suite's page: every query runs on the suite's build and returns rows."""
    empty = [query.where for query, rows in run_documented_queries(warehouse, which) if not rows]
    assert not empty, f"documented {which} queries without rows: {empty}"
