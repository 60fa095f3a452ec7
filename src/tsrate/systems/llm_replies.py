"""Reading a language model's reply as a forecast.

Parsing (:func:`parse_forecast`), tolerant of the common answer shapes: code fences and
``<think>…</think>`` blocks are dropped; a numbered list (``1. 101.2`` / ``Day 1: 101.2``)
gives its values (an item's point is followed by white space, so a line ``101.25`` is one
value, not item 101), and so does a table of index and value per line (``1<tab>101.2``,
``1 101.2``) when its indices count up by one; otherwise the longest run of numbers
separated by commas, semicolons or white space is the answer (so a sentence before it, such
as "the next 20 values:", does not count). A run goes on past the end of a line only when
that line holds nothing but numbers, or ends with a comma or semicolon after its last number
(a list wrapped over lines): a heading's last number ("Forecast for days 81-100", "t+1 to
t+5") is not the forecast's first step. Brackets of a JSON list are fine. Thousands separators are not supported (the comma
separates values). **Echoes** (:func:`echo_length`): a list whose leading values repeat the
context's last values as the prompt printed them (at least two, not all one value; e.g. the
model restates the last five prices, then continues) has that echo skipped: its forecast
is what follows, and lists are compared by their length without it (so a sentence quoting
the context does not win over the answer). One value equal to the last price is not an
echo (a forecast that holds the price looks the same). An echo followed by fewer than d
numbers fails the window ("echoed context: ..."), a reply that only repeats the context
included: tsrate does not rate context values as a forecast. Length policy: **more** than d
numbers → the first d are kept (models often continue the sequence); **fewer** than d, no
numbers, or a non-finite number → the window fails: the batch comes back as :class:`~tsrate.systems.failures.PartialForecasts`
and the run stores the raw reply and the reason in ``raw.forecast_failures`` (the window
is then left out of every system's scores under every perturbation, see
:mod:`tsrate.systems.failures`). Nothing is padded or zero-filled.

The endpoint systems (:mod:`tsrate.systems.llm`) and the local ones parse here.
"""

from __future__ import annotations

import re

import numpy as np

from tsrate.systems.failures import PartialForecasts, WindowFailure
from tsrate.systems.llm_prompts import format_values


class ReplyParseError(ValueError):
    """A reply holds no usable forecast; the message says why."""


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RUN = re.compile(rf"{_NUMBER}(?:(?:\s*[,;]\s*|\s+){_NUMBER})*")
_NUMBER_RE = re.compile(_NUMBER)
_LIST_LINE = re.compile(
    rf"^\s*[-*]?\s*(?:(?:day|step|t)\s*\+?\s*)?\d+\s*(?:[):]|\.(?=\s))\s*({_NUMBER})\s*[,;]?\s*$",
    re.IGNORECASE,
)
#: a table line: an index, white space, one value (``1<tab>101.2``); read as a list only when
#: the indices count up by one (:func:`_indexed_table`), so two values on a line stay values
_TABLE_LINE = re.compile(
    rf"^\s*(?:(?:day|step|t)\s*\+?\s*)?(\d+)\s+({_NUMBER})\s*[,;]?\s*$", re.IGNORECASE
)
#: a line of numbers only (separators, brackets and a final full stop allowed)
_NUMBERS_ONLY = re.compile(rf"^[\s\[\](),;]*(?:{_NUMBER}[\s\[\](),;]*)+\.?\s*$")
#: a line whose last number is followed by a comma or semicolon: a list going on
_GOES_ON = re.compile(rf"{_NUMBER}\s*[,;]\s*$")


#: the version of :func:`parse_forecast`'s rules, named in the stored partitions' keys of every
#: system that forecasts through it (:attr:`tsrate.systems.llm.LlmSystem.partition_tag`):
#: forecasts parsed by older rules are recomputed on the next run, their replies read back
#: from the response cache. 2: a line holding one decimal price (``101.25``) is that price,
#: no longer list item 101 with value 25. 3: a reply's leading echo of the context's last
#: values is skipped (:func:`echo_length`), no longer read as the first forecast values. 4: a
#: run of numbers no longer goes on from a line with words in it unless that line ends with a
#: separator (a heading's last number is not step 1), and an index-and-value table is a list.
FORECAST_PARSER = "reply_parser=4"


def echo_length(numbers: list[str], context: np.ndarray, decimals: int) -> int:
    """How many leading ``numbers`` of a reply repeat the context's last values, as the
    prompt printed them (:func:`format_values`, ``decimals`` places): the longest k with
    ``numbers[:k]`` equal to the printed context's last k values and not all one value, so
    at least two (one value equal to the last price, like a flat run equal to a flat
    context's end, is as likely a forecast that holds the price); 0 when there is none."""
    printed = format_values(np.asarray(context, dtype=float), decimals).split(", ")
    head = [f"{float(x):.{decimals}f}" for x in numbers[: len(printed)]]
    for k in range(len(head), 1, -1):
        if head[:k] == printed[-k:] and len(set(head[:k])) > 1:
            return k
    return 0


def _indexed_table(lines: list[str]) -> list[str]:
    """The values of the longest block of consecutive table lines (:data:`_TABLE_LINE`)
    whose indices count up by one; [] when there is none."""
    best: list[str] = []
    block: list[str] = []
    last = None
    for line in lines:
        match = _TABLE_LINE.match(line)
        if match and (last is None or int(match.group(1)) == last + 1):
            block.append(match.group(2))
            last = int(match.group(1))
            continue
        best = max(best, block, key=len)
        block, last = ([match.group(2)], int(match.group(1))) if match else ([], None)
    return max(best, block, key=len)


def _runs(text: str) -> list[list[str]]:
    """The runs of numbers of ``text`` (see the module doc): within a line as
    :data:`_RUN` finds them; a line's last run goes on into the next line's first one only
    when the line holds numbers only or ends with a separator after its last number."""
    runs: list[list[str]] = []
    open_run: list[str] | None = None  # the run that may go on into the next line
    for line in text.splitlines():
        found = [_NUMBER_RE.findall(run) for run in _RUN.findall(line)]
        if not found:
            if line.strip():
                open_run = None  # words alone end a run
            continue
        if open_run is not None and _NUMBER_RE.match(line.lstrip(" \t[(")):
            open_run.extend(found[0])
            found = found[1:]
        runs.extend(found)
        pure = _NUMBERS_ONLY.match(line) is not None
        if found:
            open_run = found[-1] if pure or _GOES_ON.search(line) else None
        elif not (pure or _GOES_ON.search(line)):
            open_run = None
    return runs


def parse_forecast(
    reply: str | None, horizon: int, context: np.ndarray | None = None, decimals: int = 2
) -> np.ndarray:
    """The first ``horizon`` numbers of a reply after any echo of ``context`` (the window's
    values as the prompt gave them, ``decimals`` places; see the module doc); raises
    :class:`ReplyParseError`. Without ``context`` no echo is looked for."""
    if reply is None or not reply.strip():
        raise ReplyParseError("empty reply")
    text = re.sub(r"<think>.*?</think>", " ", reply, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"```[a-zA-Z]*", " ", text)
    lines = text.splitlines()
    listed = [m.group(1) for m in map(_LIST_LINE.match, lines) if m]
    table = _indexed_table(lines)
    if len(listed) >= horizon:
        candidates = [listed]
    elif len(table) >= horizon:
        candidates = [table]
    else:
        candidates = _runs(text)
        if not candidates:
            raise ReplyParseError("no numbers in the reply")
    echoes = [0 if context is None else echo_length(c, context, decimals) for c in candidates]
    # the longest list once its echo is dropped (the first of equals, as before)
    best = max(range(len(candidates)), key=lambda i: len(candidates[i]) - echoes[i])
    echo, numbers = echoes[best], candidates[best][echoes[best] :]
    if len(numbers) < horizon and echo:
        raise ReplyParseError(
            f"echoed context: the reply repeats the context's last {echo} values, then has "
            f"{len(numbers)} value(s), expected {horizon}"
        )
    if len(numbers) < horizon:
        raise ReplyParseError(
            f"short answer: the longest list of numbers has {len(numbers)} value(s), "
            f"expected {horizon}"
        )
    values = np.array([float(x) for x in numbers[:horizon]])
    if not np.isfinite(values).all():
        raise ReplyParseError("a forecast value is not finite")
    return values


def parse_replies(
    replies: list[str | None],
    horizon: int,
    contexts: np.ndarray | None = None,
    decimals: int = 2,
) -> np.ndarray | PartialForecasts:
    """Parse one reply per window (``contexts[row]``: the window's values the prompt gave,
    at ``decimals`` places, whose echo is skipped): an array when all parse, else
    :class:`PartialForecasts` (failed rows NaN, each failure with its reason and the raw
    reply)."""
    out = np.full((len(replies), horizon), np.nan)
    failures = []
    for row, reply in enumerate(replies):
        context = None if contexts is None else contexts[row]
        try:
            out[row] = parse_forecast(reply, horizon, context, decimals)
        except ReplyParseError as exc:
            failures.append(WindowFailure(row, f"unparseable reply: {exc}", reply or ""))
    return PartialForecasts(out, tuple(failures)) if failures else out
