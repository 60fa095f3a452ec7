"""``tsrate docs``'s dbt child: ``dbt docs generate`` with tsrate's progress lines.

Run by :mod:`tsrate.platform.dbt_child` for its first argument :data:`DOCS` (the rest are
dbt's flags), which hands it its ``say`` (a :data:`~tsrate.platform.dbt_child.SUMMARY`
line, which the parent always prints) and its way to close dbt's DuckDB file. dbt's own
log goes to stdout as ever (the parent keeps it in a log file and shows it with
``--verbose``); the summary lines, from dbt's events, are:

- ``docs: parsed in <s>s (<how>): <dbt's counts>``, ``<how>`` saying whether dbt reused the
  saved parse in the target folder (``partial parse: nothing changed``, ``partial parse:
  3 files changed, ...``) or parsed everything, and why (``full parse: <dbt's reason>``);
- ``docs: compiled <n> nodes in <s>s; reading the catalog from the warehouse``;
- ``docs: catalog read in <s>s``;
- on a failure, ``docs: failed: <dbt's first error, on one line>``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: First argument of the dbt child that runs :func:`generate`.
DOCS = "tsrate-docs"
_PARTIAL = "partial parse"


class Progress:
    """A dbt event callback: says each step of ``dbt docs generate`` as it ends."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.step_started = time.perf_counter()
        self.parse: str | None = None
        self.compiled = 0
        self.errors: list[str] = []

    def _lap(self) -> float:
        now = time.perf_counter()
        elapsed, self.step_started = now - self.step_started, now
        return elapsed

    def __call__(self, event: object) -> None:
        name = event.info.name  # type: ignore[attr-defined]
        data = event.data  # type: ignore[attr-defined]
        if name == "UnableToPartialParse":  # may follow PartialParsingEnabled (a macro)
            reason = data.reason.split(". Starting full parse")[0].rstrip(".")
            self.parse = f"full parse: {reason}"
        elif name == "PartialParsingEnabled":
            self.parse = (
                f"{_PARTIAL}: {data.changed} files changed, {data.added} added, "
                f"{data.deleted} deleted"
            )
        elif name == "PartialParsingSkipParsing":
            self.parse = f"{_PARTIAL}: nothing changed"
        elif name == "PartialParsingNotEnabled":
            self.parse = "full parse: partial parsing is off"
        elif name == "FoundStats":
            how = self.parse or "full parse"
            self.say(f"docs: parsed in {self._lap():.1f}s ({how}): {data.stat_line}")
        elif name == "NodeFinished":
            self.compiled += 1
        elif name == "BuildingCatalog":
            self.say(
                f"docs: compiled {self.compiled} nodes in {self._lap():.1f}s; "
                "reading the catalog from the warehouse"
            )
        elif name == "CatalogWritten":
            self.say(f"docs: catalog read in {self._lap():.1f}s")
        elif event.info.level == "error":  # type: ignore[attr-defined]
            self.errors.append(event.info.msg)  # type: ignore[attr-defined]


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def generate(argv: list[str], say: Callable[[str], None], close: Callable[[], None]) -> int:
    """``dbt docs generate <argv>`` with :class:`Progress` saying its steps by ``say``; dbt's
    exit status (0 done, 1 a failure dbt reported, 2 an exception), after a ``docs:
    failed:`` line on a failure. ``close`` (closing the DuckDB file the catalog read) is
    called before returning."""
    from dbt.cli.main import dbtRunner

    progress = Progress(say)
    try:
        result = dbtRunner(callbacks=[progress]).invoke(["docs", "generate", *argv])
    finally:
        close()
    if result.success:
        return 0
    problems = [p for p in progress.errors if p.strip()]
    if result.exception is not None:
        problems.append(str(result.exception))
    problem = _one_line(problems[0]) if problems else "dbt reported a failure without a message"
    say(f"docs: failed: {problem}")
    return 2 if result.exception is not None else 1
