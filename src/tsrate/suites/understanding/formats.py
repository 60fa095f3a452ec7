"""The time-series text formats of the paper's Appendix F, one function each, and their
inverses (:func:`parse_formatted`), which the statistical analyst uses to read a prompt's
series back.

Every function takes the dates and an ordered mapping column name -> values (``Value`` for
one series, ``Series1``/``Series2`` for a pair) and prints values with ``decimals`` places
(2 by default; the paper's examples are integers, ``decimals=0``). Layouts follow Appendix F
exactly for one column; with several columns each format repeats its value field per column
(``symbol`` adds one ``<name>Direction`` column per series, ``DirectionIndicator`` for one).
``spaces`` separates every character of a number (Gruver et al.): ``103.25`` -> ``1 0 3 . 2 5``.
``symbol`` marks each row's move from the previous printed value: ↑, ↓ or → (first row →).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence

from tsrate import TsrateError

Columns = Mapping[str, Sequence[float]]


def number(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` places (``-0.00`` printed as ``0.00``)."""
    text = f"{float(value):.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text


def _rows(dates: Sequence[dt.date], columns: Columns, decimals: int) -> list[tuple[str, list[str]]]:
    names = list(columns)
    if not names:
        raise TsrateError("a time series needs at least one column")
    n = len(dates)
    for name in names:
        if len(columns[name]) != n:
            raise TsrateError(f"column {name!r} has {len(columns[name])} values for {n} dates")
    return [
        (str(dates[i]), [number(columns[name][i], decimals) for name in names]) for i in range(n)
    ]


def format_csv(dates, columns: Columns, decimals: int = 2) -> str:
    """``Date,Value\\n2020-01-01,100\\n...`` (trailing newline)."""
    header = ",".join(["Date", *columns])
    return (
        header + "\n" + "".join(f"{d},{','.join(v)}\n" for d, v in _rows(dates, columns, decimals))
    )


def format_plain(dates, columns: Columns, decimals: int = 2) -> str:
    """``Date:2020-01-01,Value:100`` lines joined by newlines (no trailing newline)."""
    names = list(columns)
    return "\n".join(
        "Date:" + d + "".join(f",{name}:{x}" for name, x in zip(names, v, strict=True))
        for d, v in _rows(dates, columns, decimals)
    )


def format_tsv(dates, columns: Columns, decimals: int = 2) -> str:
    """``Date\\tValue\\n2020-01-01\\t100\\n...`` (trailing newline)."""
    header = "\t".join(["Date", *columns])
    return (
        header
        + "\n"
        + "".join(f"{d}\t{chr(9).join(v)}\n" for d, v in _rows(dates, columns, decimals))
    )


def format_json(dates, columns: Columns, decimals: int = 2) -> str:
    """One JSON object per line, ``{"Date":"2020-01-01","Value":100}`` (trailing newline)."""
    names = list(columns)
    return "".join(
        '{"Date":"'
        + d
        + '"'
        + "".join(f',"{name}":{x}' for name, x in zip(names, v, strict=True))
        + "}\n"
        for d, v in _rows(dates, columns, decimals)
    )


def format_markdown(dates, columns: Columns, decimals: int = 2) -> str:
    """A markdown table ``|Date|Value|\\n|---|---|\\n|2020-01-01|100|\\n...``."""
    names = ["Date", *columns]
    head = "|" + "|".join(names) + "|\n" + "|" + "|".join("---" for _ in names) + "|\n"
    return head + "".join(f"|{d}|{'|'.join(v)}|\n" for d, v in _rows(dates, columns, decimals))


def _spaced(text: str) -> str:
    return " ".join(text)


def format_spaces(dates, columns: Columns, decimals: int = 2) -> str:
    """CSV with every character of a number separated by a space: ``2020-01-01,1 0 0``."""
    header = ",".join(["Date", *columns])
    return (
        header
        + "\n"
        + "".join(
            f"{d},{','.join(_spaced(x) for x in v)}\n" for d, v in _rows(dates, columns, decimals)
        )
    )


def format_context(dates, columns: Columns, decimals: int = 2) -> str:
    """CSV with every value in brackets: ``2020-01-01,[100]``."""
    header = ",".join(["Date", *columns])
    return (
        header
        + "\n"
        + "".join(
            f"{d},{','.join(f'[{x}]' for x in v)}\n" for d, v in _rows(dates, columns, decimals)
        )
    )


def _arrow(previous: str | None, current: str) -> str:
    if previous is None or float(current) == float(previous):
        return "→"
    return "↑" if float(current) > float(previous) else "↓"


def format_symbol(dates, columns: Columns, decimals: int = 2) -> str:
    """CSV plus a direction column per series (↑ up, ↓ down, → unchanged or first row):
    ``Date,Value,DirectionIndicator\\n2020-01-01,100,→\\n2020-01-02,105,↑``."""
    names = list(columns)
    directions = ["DirectionIndicator"] if len(names) == 1 else [f"{n}Direction" for n in names]
    lines = [",".join(["Date", *names, *directions])]
    previous: list[str | None] = [None] * len(names)
    for d, v in _rows(dates, columns, decimals):
        arrows = [_arrow(p, x) for p, x in zip(previous, v, strict=True)]
        lines.append(",".join([d, *v, *arrows]))
        previous = list(v)
    return "\n".join(lines) + "\n"


def format_custom(dates, columns: Columns, decimals: int = 2) -> str:
    """The paper's "Custom" format: ``Date|Value\n2020-01-01|100\n...`` (trailing newline)."""
    header = "|".join(["Date", *columns])
    return (
        header + "\n" + "".join(f"{d}|{'|'.join(v)}\n" for d, v in _rows(dates, columns, decimals))
    )


FORMATS: dict[str, Callable[..., str]] = {
    "csv": format_csv,
    "plain": format_plain,
    "tsv": format_tsv,
    "json": format_json,
    "markdown": format_markdown,
    "spaces": format_spaces,
    "context": format_context,
    "symbol": format_symbol,
    "custom": format_custom,
}


def format_series(fmt: str, dates, columns: Columns, decimals: int = 2) -> str:
    """The series in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise TsrateError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    return FORMATS[fmt](dates, columns, decimals)


# --------------------------------------------------------------------------------------
# Reading a formatted series back
# --------------------------------------------------------------------------------------

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _date(text: str, fmt: str) -> dt.date:
    text = text.strip()
    if not _DATE.match(text):
        raise TsrateError(f"{fmt}: {text!r} is not a YYYY-MM-DD date")
    return dt.date.fromisoformat(text)


def _value(text: str, fmt: str) -> float:
    try:
        return float(text.strip())
    except ValueError as exc:
        raise TsrateError(f"{fmt}: {text!r} is not a number") from exc


def parse_formatted(fmt: str, text: str) -> tuple[list[dt.date], dict[str, list[float]]]:
    """Dates and columns of a series printed by ``FORMATS[fmt]`` (raises TsrateError naming
    the line that does not fit)."""
    if fmt not in FORMATS:
        raise TsrateError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    lines = [line for line in text.strip("\n").split("\n") if line.strip()]
    if not lines:
        raise TsrateError(f"{fmt}: no rows")
    dates: list[dt.date] = []
    if fmt == "plain":
        names: list[str] = []
        rows: list[list[float]] = []
        for line in lines:
            fields = [f.split(":", 1) for f in line.split(",")]
            if any(len(f) != 2 for f in fields) or fields[0][0] != "Date":
                raise TsrateError(f"plain: cannot read line {line!r}")
            dates.append(_date(fields[0][1], fmt))
            names = [f[0] for f in fields[1:]]
            rows.append([_value(f[1], fmt) for f in fields[1:]])
        return dates, {n: [r[i] for r in rows] for i, n in enumerate(names)}
    if fmt == "json":
        records = []
        for line in lines:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TsrateError(f"json: cannot read line {line!r}") from exc
        names = [k for k in records[0] if k != "Date"]
        return (
            [_date(r["Date"], fmt) for r in records],
            {n: [float(r[n]) for r in records] for n in names},
        )
    if fmt == "markdown":
        table = [[c for c in line.strip().strip("|").split("|")] for line in lines]
        header, body = table[0], table[2:]
        names = header[1:]
        return (
            [_date(r[0], fmt) for r in body],
            {n: [_value(r[i + 1], fmt) for r in body] for i, n in enumerate(names)},
        )
    separator = {"tsv": "\t", "custom": "|"}.get(fmt, ",")
    header = lines[0].split(separator)
    names = [h for h in header[1:] if not h.endswith("Direction") and h != "DirectionIndicator"]
    columns: dict[str, list[float]] = {n: [] for n in names}
    for line in lines[1:]:
        fields = line.split(separator)
        if len(fields) != len(header):
            raise TsrateError(
                f"{fmt}: line {line!r} has {len(fields)} fields, header {len(header)}"
            )
        dates.append(_date(fields[0], fmt))
        for i, name in enumerate(names):
            raw = fields[i + 1]
            if fmt == "spaces":
                raw = raw.replace(" ", "")
            elif fmt == "context":
                raw = raw.strip()
                if not (raw.startswith("[") and raw.endswith("]")):
                    raise TsrateError(f"context: value {raw!r} is not in brackets")
                raw = raw[1:-1]
            columns[name].append(_value(raw, fmt))
    return dates, columns
