"""Importer of the paper's public dataset (JSON Lines), validated before anything is stored.

One JSON object per line; blank lines are skipped. Three kinds of rows, told apart by
their fields:

- **series** (no ``question``): ``uuid`` (text, unique in the file), ``description``,
  ``description_short``, ``description_tiny`` (text), ``characteristics`` (text or list of
  texts), ``metadata`` (object), ``series`` (list of at least :data:`MIN_LENGTH` finite
  numbers); optional ``category`` (the scenario's domain).
- **question**: ``category``, ``question`` (text), the options (``options``, a list of 2-10
  distinct texts, or ``option_0``, ``option_1``, ... as separate fields, or both when they
  hold the same texts, as the public question files do), the answer and the
  series it asks about: its own ``series`` or the ``uuid`` of a series row of the same file.
  The answer, in any of the shapes the reference repository (behavioral-data/TSandLanguage)
  writes or reads: ``answer_index`` (its MCQ builders), ``label_index`` (its QA writer's
  examples) or ``label`` (its evaluation files: a 0-based index; a text equal to one option
  is looked up, as its loader does) -- 0-based integers within the options; when several are
  given they must agree. Optional ``description_tiny`` and ``metadata`` (the paper's QA
  context; else the series row's).
- **two-series question**: a question row with ``counterfactual`` (the what-if, text)
  and ``new_series`` (the series under the what-if, as long as the original).

Fields the schema does not use (e.g. a recorded model prediction, ``ts_qid``) are ignored
and reported: :attr:`ImportedRows.ignored_fields` counts the rows carrying each one, and
every item records them in its ``params`` (``ignored_fields``), so the import says what it
left out.

Question categories are normalised to lower-case words joined by ``_`` (the reference's
evaluation files name five: ``counterfactual_reasoning``, ``explanation``,
``argumentation``, ``analogical_reasoning``, ``fact_checking``); each becomes its own
category of the ``qa_single`` / ``qa_two`` tasks (rsn_accuracy reports per category).

Every problem is reported as ``file:line: field 'name': what is wrong`` (up to
:data:`MAX_REPORTED` of them at once) in a :class:`DatasetError`; a file with any problem
yields no items at all, so nothing is half-imported.

Items made (:func:`items_from_rows`): per series row, an etiological item (its description
and three others of the file, drawn with ``seed``; needs four distinct descriptions) and a
forecasting item (the first ``context_share`` of the values as history, the description as
context; its ``params["context_pieces"]``: description, characteristics and metadata, for
the Figure A.5 context combinations); per question row, a ``qa_single`` or ``qa_two`` item whose context is, as in the paper's
QA task configuration, the series' ``description_tiny`` followed by its ``metadata`` (JSON,
keys sorted) on the next line; without a tiny description, its ``description_short``
(two-series: plus the what-if).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.scenarios import ETIOLOGICAL_QUESTION

log = logging.getLogger(__name__)

MIN_LENGTH = 10
MAX_REPORTED = 10
ANSWER_FIELDS = ("answer_index", "label_index", "label")
QUESTION_FIELDS = (
    "uuid",
    "category",
    "question",
    "options",
    *ANSWER_FIELDS,
    "series",
    "counterfactual",
    "new_series",
    "description_short",
    "description_tiny",
    "metadata",
)
SERIES_FIELDS = (
    "uuid",
    "description",
    "description_short",
    "description_tiny",
    "characteristics",
    "metadata",
    "series",
)


class DatasetError(TsrateError):
    """An import file breaks the schema; the message names file, line and field."""


@dataclasses.dataclass(frozen=True)
class SeriesRow:
    line: int
    uuid: str
    description: str
    description_short: str
    description_tiny: str
    characteristics: str
    metadata: dict
    series: tuple[float, ...]
    category: str | None
    ignored: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class QuestionRow:
    line: int
    category: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    series: tuple[float, ...]
    description_short: str
    uuid: str | None
    counterfactual: str | None = None
    new_series: tuple[float, ...] | None = None
    description_tiny: str = ""
    metadata: dict | None = None
    ignored: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ImportedRows:
    path: str
    series: tuple[SeriesRow, ...]
    questions: tuple[QuestionRow, ...]
    #: field -> rows carrying it, for fields the schema does not use (ignored)
    ignored_fields: dict[str, int] = dataclasses.field(default_factory=dict)


class _Problems:
    def __init__(self, path: Path):
        self.path = path
        self.messages: list[str] = []

    def add(self, line: int, field: str | None, problem: str) -> None:
        where = f"{self.path}:{line}"
        self.messages.append(
            f"{where}: field {field!r}: {problem}" if field else f"{where}: {problem}"
        )

    def raise_if_any(self) -> None:
        if not self.messages:
            return
        shown = self.messages[:MAX_REPORTED]
        more = len(self.messages) - len(shown)
        tail = f"\n... and {more} more problem(s)" if more else ""
        raise DatasetError(
            f"{self.path}: {len(self.messages)} problem(s); nothing was imported:\n"
            + "\n".join(shown)
            + tail
        )


def _text(row: dict, field: str, line: int, problems: _Problems, required: bool = True):
    if field not in row:
        if required:
            problems.add(line, field, "missing")
        return None
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        problems.add(line, field, f"must be non-empty text, got {type(value).__name__}")
        return None
    return value.strip()


def _numbers(row: dict, field: str, line: int, problems: _Problems):
    if field not in row:
        problems.add(line, field, "missing")
        return None
    value = row[field]
    if not isinstance(value, list):
        problems.add(line, field, f"must be a list of numbers, got {type(value).__name__}")
        return None
    for position, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            problems.add(line, field, f"value {position} is not a number: {number!r}"[:120])
            return None
        if not math.isfinite(number):
            problems.add(line, field, f"value {position} is not finite: {number!r}")
            return None
    if len(value) < MIN_LENGTH:
        problems.add(line, field, f"has {len(value)} values; at least {MIN_LENGTH} needed")
        return None
    return tuple(float(v) for v in value)


def _characteristics(row: dict, line: int, problems: _Problems):
    value = row.get("characteristics")
    if "characteristics" not in row:
        problems.add(line, "characteristics", "missing")
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(v.strip() for v in value)
    problems.add(line, "characteristics", "must be text or a list of texts")
    return None


#: what an import file is and what names it, said in the hint of a missing one
IMPORT_FILE = (
    "the import, --import PATH or the flow's import_path, is a JSONL file in the public "
    "dataset's schema"
)

#: what a row of an import file is, said in the hint of a file without one
ROW = (
    "a row is one JSON object per line in the public dataset's schema: a series (uuid, "
    "description, ..., series) or a question (category, question, options, the answer, its "
    "series or a series row's uuid); blank lines are skipped"
)


def read_rows(path: str | Path) -> ImportedRows:
    """Parse and validate ``path``; raise :class:`DatasetError` listing every problem. A
    missing file, a folder or anything else but a regular file is one line in the command
    line's own words for it (:func:`tsrate.commands.usage.not_a_file`), with what the file
    must be. A file with no rows says what a row is (:data:`ROW`)."""
    from tsrate.commands.usage import not_a_file

    path = Path(path)
    refusal = not_a_file(path, IMPORT_FILE)
    if refusal:
        raise DatasetError(refusal)
    problems = _Problems(path)
    raw: list[tuple[int, dict]] = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(line_number, None, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(row, dict):
                problems.add(line_number, None, f"must be a JSON object, got {type(row).__name__}")
                continue
            raw.append((line_number, row))
    if not raw and not problems.messages:
        raise DatasetError(f"{path}: no rows (hint: {ROW})")
    series_rows: list[SeriesRow] = []
    by_uuid: dict[str, SeriesRow] = {}
    for line, row in raw:
        if "question" in row:
            continue
        values = {field: _text(row, field, line, problems) for field in SERIES_FIELDS[:4]}
        characteristics = _characteristics(row, line, problems)
        metadata = row.get("metadata")
        if "metadata" not in row:
            problems.add(line, "metadata", "missing")
        elif not isinstance(metadata, dict):
            problems.add(line, "metadata", f"must be an object, got {type(metadata).__name__}")
        series = _numbers(row, "series", line, problems)
        category = _text(row, "category", line, problems, required=False)
        uuid = values["uuid"]
        if uuid is not None and uuid in by_uuid:
            problems.add(line, "uuid", f"{uuid!r} repeats line {by_uuid[uuid].line}")
            continue
        if None in values.values() or characteristics is None or series is None:
            continue
        if not isinstance(metadata, dict):
            continue
        series_row = SeriesRow(
            line=line,
            uuid=uuid,
            description=values["description"],
            description_short=values["description_short"],
            description_tiny=values["description_tiny"],
            characteristics=characteristics,
            metadata=metadata,
            series=series,
            category=category,
            ignored=_ignored(row, (*SERIES_FIELDS, "category")),
        )
        by_uuid[uuid] = series_row
        series_rows.append(series_row)
    questions: list[QuestionRow] = []
    for line, row in raw:
        if "question" not in row:
            continue
        category = _text(row, "category", line, problems)
        question = _text(row, "question", line, problems)
        options = _options(row, line, problems)
        answer = _answer(row, options, line, problems)
        uuid = row.get("uuid")
        parent = None
        if "series" in row:
            series = _numbers(row, "series", line, problems)
        elif isinstance(uuid, str) and uuid in by_uuid:
            parent = by_uuid[uuid]
            series = parent.series
        else:
            problems.add(
                line,
                "series",
                "missing: give the series or the uuid of a series row of this file"
                + (f" (no series row has uuid {uuid!r})" if uuid is not None else ""),
            )
            series = None
        counterfactual = new_series = None
        if "counterfactual" in row or "new_series" in row:
            counterfactual = _text(row, "counterfactual", line, problems)
            new_series = _numbers(row, "new_series", line, problems)
            if new_series is not None and series is not None and len(new_series) != len(series):
                problems.add(
                    line,
                    "new_series",
                    f"has {len(new_series)} values, the series has {len(series)}",
                )
                new_series = None
            if counterfactual is None or new_series is None:
                continue
        if None in (category, question, options, answer, series):
            continue
        short = parent.description_short if parent else (row.get("description_short") or "")
        tiny = row.get("description_tiny") or (parent.description_tiny if parent else "")
        metadata = row.get("metadata")
        if not isinstance(metadata, dict):
            metadata = parent.metadata if parent else None
        questions.append(
            QuestionRow(
                line=line,
                category=normal_category(category),
                question=question,
                options=tuple(o.strip() for o in options),
                answer_index=answer,
                series=series,
                description_short=str(short).strip(),
                uuid=uuid if isinstance(uuid, str) else None,
                counterfactual=counterfactual,
                new_series=new_series,
                description_tiny=str(tiny).strip(),
                metadata=metadata,
                ignored=_ignored(row, QUESTION_FIELDS, option_fields=True),
            )
        )
    problems.raise_if_any()
    ignored: dict[str, int] = {}
    for row in (*series_rows, *questions):
        for field in row.ignored:
            ignored[field] = ignored.get(field, 0) + 1
    return ImportedRows(str(path), tuple(series_rows), tuple(questions), ignored)


def _ignored(row: dict, known: tuple[str, ...], option_fields: bool = False) -> tuple[str, ...]:
    """The row's fields the schema does not use, sorted."""
    return tuple(
        sorted(f for f in row if f not in known and not (option_fields and f.startswith("option_")))
    )


def normal_category(text: str) -> str:
    """'Counterfactual reasoning' / 'counterfactual-reasoning' -> 'counterfactual_reasoning'."""
    return "_".join(text.replace("-", " ").replace("_", " ").lower().split())


def _options(row: dict, line: int, problems: _Problems):
    """``options`` (a list) or ``option_0``, ``option_1``, ... (contiguous from 0), or both
    when they agree (the public question files carry both, with the same texts)."""
    numbered = sorted((f for f in row if f.startswith("option_")), key=lambda f: (len(f), f))
    if "options" in row and numbered:
        listed = row["options"]
        fields = [row[f] for f in numbered]
        if not isinstance(listed, list) or [_strip(o) for o in listed] != [
            _strip(o) for o in fields
        ]:
            item = f" of item {row['uuid']!r}" if isinstance(row.get("uuid"), str) else ""
            problems.add(
                line,
                "options",
                f"options and {', '.join(numbered)}{item} differ; give one of them, or both "
                "with the same texts",
            )
            return None
        numbered = []  # the same texts: validated once, as ``options``
    if "options" in row:
        options = row["options"]
        field = "options"
    elif numbered:
        expected = [f"option_{i}" for i in range(len(numbered))]
        if numbered != expected:
            problems.add(
                line, "option_0", f"numbered options must run option_0..option_{len(numbered) - 1}"
            )
            return None
        options = [row[f] for f in expected]
        field = "option_0"
    else:
        problems.add(line, "options", "missing (give options or option_0, option_1, ...)")
        return None
    if (
        not isinstance(options, list)
        or not 2 <= len(options) <= 10
        or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        problems.add(line, field, "must be a list of 2 to 10 non-empty texts")
        return None
    if len({o.strip() for o in options}) != len(options):
        problems.add(line, field, "options repeat")
        return None
    return options


def _strip(value):
    return value.strip() if isinstance(value, str) else value


def _answer(row: dict, options, line: int, problems: _Problems):
    """The 0-based answer from answer_index, label_index or label (they must agree)."""
    given = [f for f in ANSWER_FIELDS if f in row]
    if not given:
        problems.add(line, "answer_index", "missing (give answer_index, label_index or label)")
        return None
    found: dict[str, int] = {}
    for field in given:
        value = row[field]
        if field == "label" and isinstance(value, str):
            if options is None:
                continue
            stripped = [o.strip() for o in options]
            if value.strip() not in stripped:
                problems.add(line, field, f"{value!r} is not one of the options"[:120])
                return None
            found[field] = stripped.index(value.strip())
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            problems.add(line, field, f"must be an integer, got {value!r}"[:80])
            return None
        if options is not None and not 0 <= value < len(options):
            problems.add(line, field, f"{value} is outside the {len(options)} options (0-based)")
            return None
        found[field] = value
    if len(set(found.values())) > 1:
        detail = ", ".join(f"{f} = {v}" for f, v in found.items())
        problems.add(line, given[0], f"answer fields disagree ({detail})")
        return None
    return next(iter(found.values()), None)


def items_from_rows(rows: ImportedRows, seed: int = 0, context_share: float = 0.8) -> list[Item]:
    """The items of a validated file (see the module docstring)."""
    rng = np.random.default_rng(seed)
    items: list[Item] = []
    descriptions = list(dict.fromkeys(r.description for r in rows.series))
    for row in rows.series:
        provenance = {"file": rows.path, "line": row.line, "uuid": row.uuid}
        if row.ignored:
            provenance["ignored_fields"] = list(row.ignored)
        category = row.category or "uncategorised"
        others = [d for d in descriptions if d != row.description]
        if len(others) >= 3:
            chosen = [others[i] for i in rng.choice(len(others), 3, replace=False)]
            options = [row.description, *chosen]
            order = rng.permutation(4)
            items.append(
                Item(
                    task="etiological",
                    category=category,
                    domain=row.category,
                    series=row.series,
                    question=ETIOLOGICAL_QUESTION,
                    options=tuple(options[i] for i in order),
                    answer_index=int(np.flatnonzero(order == 0)[0]),
                    source="import",
                    params=provenance,
                )
            )
        history = int(round(len(row.series) * context_share))
        if 2 <= history < len(row.series):
            items.append(
                Item(
                    task="forecast",
                    category=category,
                    domain=row.category,
                    series=row.series[:history],
                    future=row.series[history:],
                    context=row.description,
                    source="import",
                    params={
                        **provenance,
                        "context_pieces": {
                            "description": row.description,
                            "characteristics": row.characteristics,
                            "metadata": row.metadata,
                        },
                    },
                )
            )
    for question in rows.questions:
        provenance = {"file": rows.path, "line": question.line, "uuid": question.uuid}
        if question.ignored:
            provenance["ignored_fields"] = list(question.ignored)
        context = question.description_short
        if question.description_tiny:
            context = question.description_tiny
            if question.metadata:
                context += "\n" + json.dumps(question.metadata, sort_keys=True)
        if question.counterfactual:
            context = f"{context} What-if: {question.counterfactual}".strip()
        items.append(
            Item(
                task="qa_two" if question.new_series is not None else "qa_single",
                category=question.category,
                series=question.series,
                series_b=question.new_series,
                question=question.question,
                options=question.options,
                answer_index=question.answer_index,
                context=context,
                source="import",
                params=provenance,
            )
        )
    return items


def import_items(path: str | Path, seed: int = 0, context_share: float = 0.8) -> list[Item]:
    """Validate ``path`` and return its items (raises :class:`DatasetError`); fields the
    schema does not use are logged (and kept in each item's params)."""
    rows = read_rows(path)
    if rows.ignored_fields:
        shown = ", ".join(f"{f} ({n} rows)" for f, n in sorted(rows.ignored_fields.items()))
        log.warning("%s: fields ignored (not part of the schema): %s", rows.path, shown)
    return items_from_rows(rows, seed, context_share)
