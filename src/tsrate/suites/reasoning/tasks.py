"""Prompts of the three tasks and strict parsing of the replies.

Conditions (what the prompt holds):

- etiological: ``with_series`` only: the series and four captions (no metadata, as the
  paper: the model must judge from the values).
- qa_single / qa_two: ``with_series`` (context + series + question) and ``without_series``
  (context + question): the accuracy gap between the two shows whether the model uses the
  series at all (paper eq. 2).
- forecast: ``without_context`` (the history only) and ``with_context`` (the item's context
  text first, which states something about the future; paper eq. 4), plus the other
  context combinations of the paper's Figure A.5 (:data:`FORECAST_CONTEXTS`): the
  caption (``Ca``, the item's description; ``with_context``), the characteristics
  (``Ch``), either with the metadata (``Me``) and all three. The pieces are the item's
  ``params["context_pieces"]`` (``description``, ``characteristics``, ``metadata``),
  joined in that order, one per line (a piece's own line breaks become spaces; the
  reference joins the pieces with a space, in the same order); the metadata is written as
  one sentence (:func:`metadata_sentence`).

Templates are package data under ``prompts/`` (``choice.txt``, ``forecast.txt``, blocks
``context.txt``, ``series_one.txt``, ``series_two.txt``, ``plot_one.txt``,
``plot_two.txt``, and ``system.txt``); their digest is part of every language model's
prompt hash, so editing a template re-asks.

Parsing is strict (:func:`parse_choice`): the reply must name exactly one option letter,
as the whole reply ("B", "(B)", "B."), as a stated answer ("Answer: B", "the answer is
B") or at the start of a restated option ("B. about 547 units"). A lowercase "a" followed
by a word ("the answer is a steady rise") is the article, not option A. Anything else, or
two different letters, is unparseable; the raw text and the reason are stored and counted.
Forecasts are decoded with :func:`tsrate.suites.reasoning.encoding.decode`.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

import numpy as np

from tsrate import TsrateError
from tsrate.suites.reasoning.encoding import (
    LLMTIME,
    ReplyParseError,
    Scaler,
    decode,
    encode_text,
    encode_value,
    get_encoding,
    plot_data_url,
)
from tsrate.suites.reasoning.items import LETTERS, Item

#: forecasting condition -> the context pieces its prompt holds (paper Fig. A.5; the
#: reference's experiment names in brackets: wo_context, wi_Ca, wi_Ch, wi_CaMe, wi_ChMe, wi_all)
FORECAST_CONTEXTS = {
    "without_context": (),
    "with_context": ("description",),
    "with_characteristics": ("characteristics",),
    "with_context_metadata": ("description", "metadata"),
    "with_characteristics_metadata": ("characteristics", "metadata"),
    "with_all_context": ("description", "characteristics", "metadata"),
}
CONTEXT_PIECES = ("description", "characteristics", "metadata")
#: conditions whose context holds the caption (which states the event's step and size)
CAPTION_CONDITIONS = tuple(c for c, pieces in FORECAST_CONTEXTS.items() if "description" in pieces)

CONDITIONS = {
    "etiological": ("with_series",),
    "qa_single": ("with_series", "without_series"),
    "qa_two": ("with_series", "without_series"),
    "qa_perturbed": ("with_series", "without_series"),
    "forecast": tuple(FORECAST_CONTEXTS),
}
TEMPLATE_NAMES = (
    "system",
    "choice",
    "forecast",
    "context",
    "series_one",
    "series_two",
    "plot_one",
    "plot_two",
)


def load_template(name: str) -> str:
    """``prompts/<name>.txt``; the two full templates and the system prompt lose their final
    newline, blocks keep theirs (they end with a blank line)."""
    path = resources.files("tsrate.suites.reasoning") / "prompts" / f"{name}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TsrateError(f"reasoning prompt template {name!r} not found at {path}") from exc
    return text.removesuffix("\n") if name in ("system", "choice", "forecast") else text


TEMPLATES = {name: load_template(name) for name in TEMPLATE_NAMES}


def templates_digest() -> str:
    text = "\x00".join(TEMPLATES[name] for name in TEMPLATE_NAMES)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _context_block(context: str) -> str:
    return TEMPLATES["context"].format(context=context) if context else ""


def _messages(user: str, images: list[str] | None = None) -> list[dict]:
    system = {"role": "system", "content": TEMPLATES["system"]}
    if not images:
        return [system, {"role": "user", "content": user}]
    parts = [{"type": "text", "text": user}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in images]
    return [system, {"role": "user", "content": parts}]


#: put before the question when numeric options are written on the series' scale
ENCODED_OPTIONS_NOTE = (
    "The options are written like the series' values: on the same scale, in the same format."
)


def choice_options(item: Item, encoding: str) -> tuple[str, tuple[str, ...]]:
    """The question and option texts a choice prompt in ``encoding`` shows. Numeric options
    (``params["option_values"]``, raw values in option order) under an LLMTime encoding
    are written with the scaler of the item's series, as the series' values are ("about
    1052"), and a sentence before the question says so, under both conditions (the prompts
    differ only by the series); otherwise the stored texts (raw units: readable beside
    ``plain`` values, and against a ``plot``'s vertical-axis labels)."""
    values = item.params.get("option_values")
    if values is None or encoding not in LLMTIME:
        return item.question, item.options
    if len(values) != len(item.options):
        raise TsrateError(
            f"item {item.item_id} has {len(values)} option values for {len(item.options)} "
            "options; hint: regenerate the procedural items"
        )
    _, scaler = encode_text(encoding, np.asarray(item.series))
    options = tuple(f"about {encode_value(encoding, float(v), scaler)}" for v in values)
    return f"{ENCODED_OPTIONS_NOTE} {item.question}", options


def choice_messages(item: Item, condition: str, encoding: str) -> list[dict]:
    """The chat for a choice item under ``condition`` (``with_series`` / ``without_series``);
    ``encoding``: a text encoding or ``plot``."""
    if condition not in CONDITIONS[item.task]:
        raise TsrateError(f"task {item.task} has no condition {condition!r}")
    series_block, images = "", None
    if condition == "with_series":
        if encoding == "plot":
            pair = item.series_b is not None
            series_block = TEMPLATES["plot_two" if pair else "plot_one"]
            images = plot_data_url(*((item.series, item.series_b) if pair else (item.series,)))
        else:
            note = get_encoding(encoding).describe()
            if item.series_b is None:
                text, _ = encode_text(encoding, np.asarray(item.series))
                series_block = TEMPLATES["series_one"].format(
                    n=len(item.series), format=note, series=text
                )
            else:
                both = np.concatenate([item.series, item.series_b])
                _, scaler = encode_text(encoding, both)  # one scale for both series
                first, _ = encode_text(encoding, np.asarray(item.series), scaler)
                second, _ = encode_text(encoding, np.asarray(item.series_b), scaler)
                series_block = TEMPLATES["series_two"].format(
                    n=len(item.series), format=note, series=first, series_b=second
                )
    question, options = choice_options(item, encoding)
    letters = LETTERS[: len(options)]
    user = TEMPLATES["choice"].format(
        context_block=_context_block(item.context),
        series_block=series_block,
        question=question,
        options="\n".join(
            f"{letter}. {text}" for letter, text in zip(letters, options, strict=True)
        ),
        letters=", ".join(letters),
    )
    return _messages(user, images)


def metadata_sentence(metadata: dict, horizon: int | None) -> str:
    """The metadata as the reference's forecasting prompt writes it (start, end, frequency,
    units, and how many values to predict); a metadata object without those four keys is
    written as JSON (keys sorted)."""
    keys = ("start", "end", "frequency", "units")
    if isinstance(metadata, dict) and all(k in metadata for k in keys):
        text = (
            f"The time series was collected between {metadata['start']} and {metadata['end']} "
            f"with a collection frequency of {metadata['frequency']}, and the data unit is "
            f'"{metadata["units"]}".'
        )
    else:
        text = "Metadata: " + json.dumps(metadata, sort_keys=True)
    return text + (f" You will predict the next {horizon} data points." if horizon else "")


def forecast_context(item: Item, condition: str) -> str:
    """The context text of a forecasting prompt under ``condition``: its pieces
    (:data:`FORECAST_CONTEXTS`) one per line; ``description`` falls back to
    ``item.context``. A piece the item lacks is an error (the prompt would silently equal
    another condition's)."""
    if condition not in FORECAST_CONTEXTS:
        raise TsrateError(
            f"forecasting has no condition {condition!r}: choose from "
            + ", ".join(FORECAST_CONTEXTS)
        )
    given = dict(item.params.get("context_pieces") or {})
    given.setdefault("description", item.context)
    parts = []
    for piece in FORECAST_CONTEXTS[condition]:
        value = given.get(piece)
        if value is None or value == "":
            raise TsrateError(
                f"forecasting item {item.item_id} has no {piece} for condition {condition!r}; "
                "hint: procedural and imported items carry params.context_pieces"
            )
        if piece == "metadata":
            parts.append(metadata_sentence(value, item.horizon))
        else:  # one line per piece: a list of characteristics becomes one line
            parts.append(" ".join(str(value).split()))
    return "\n".join(parts)


def forecast_messages(item: Item, condition: str, encoding: str) -> tuple[list[dict], Scaler]:
    """The chat for a forecasting item and the scaler to decode the reply with."""
    context = forecast_context(item, condition)
    text, scaler = encode_text(encoding, np.asarray(item.series))
    user = TEMPLATES["forecast"].format(
        context_block=_context_block(context),
        n=len(item.series),
        format=get_encoding(encoding).describe(),
        series=text,
        horizon=item.horizon,
    )
    return _messages(user), scaler


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def parse_choice(reply: str | None, n_options: int) -> int:
    """The 0-based option a reply names (see the module docstring); raises
    :class:`ReplyParseError` with the reason."""
    if reply is None or not reply.strip():
        raise ReplyParseError("empty reply")
    letters = LETTERS[:n_options]
    body = _THINK.sub("", reply).strip().strip("*").strip()
    alone = re.fullmatch(rf"\(?([{letters}])\)?[.):]?", body, re.IGNORECASE)
    if alone:
        return letters.index(alone.group(1).upper())
    stated = [
        match.group(1)
        for match in re.finditer(
            rf"\b(?:answer|option|choice)\s*(?:is|:)?\s*:?\s*\**\(?([{letters}])\)?(?![\w])",
            body,
            re.IGNORECASE,
        )
        # "the answer is a steady rise": the article, not option A
        if not (
            match.group(1) == "a"
            and match.end() == match.end(1)
            and re.match(r"\s+\w", body[match.end() :])
        )
    ]
    named = sorted({letter.upper() for letter in stated})
    if len(named) == 1:
        return letters.index(named[0])
    if len(named) > 1:
        raise ReplyParseError(f"several options named: {', '.join(named)}")
    leading = re.match(rf"\(?([{letters}])[.):]\s", body)
    if leading:
        return letters.index(leading.group(1))
    raise ReplyParseError(f"no option letter ({', '.join(letters)}) in the reply")


def parse_forecast(reply: str | None, encoding: str, scaler: Scaler, horizon: int) -> np.ndarray:
    """The forecast in a reply (strict decoding, first ``horizon`` values)."""
    values = decode(reply, encoding, scaler, horizon)
    if not np.all(np.isfinite(values)):
        raise ReplyParseError("non-finite value")
    return values
