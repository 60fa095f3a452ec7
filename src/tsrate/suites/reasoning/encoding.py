"""How a series is written into a prompt, and how a forecast is read back.

LLMTime (Gruver et al. 2023; the paper's Appendix A.1), as in its reference code
(``llmtime/serialize.py``):

- Scaling (:func:`fit_scaler`), fitted on the values the model sees: with ``basic`` the
  values are divided by the alpha-quantile of |x|; otherwise ``offset = min(x) - beta x
  (max(x) - min(x))`` is subtracted first and the result divided by the alpha-quantile of
  ``x - offset`` (a zero quantile becomes 1).
- Fixed precision: a scaled value is written with ``precision`` digits after the (dropped)
  decimal point, by truncation toward zero (the reference's digit-by-digit ``astype(int)``;
  we add 1e-6 before the floor so that a value such as 1.052, stored as 1.05199999..., is
  not written 1051), leading zeros removed: 1.0522 -> ``1052`` (precision 3); the sign is
  written separately, so -1.0522 -> ``-1052``.
- Missing values: a NaN is written as the reference's ``missing_str`` (``" Nan"``, leading
  space included) and left out when the scaler is fitted, as the reference does; an
  infinite value cannot be written (error). A ``Nan`` in a reply is not a number: the reply
  is unparseable (strict; the reference's decoder would drop the step).
- Separators per model family (:data:`LLMTIME`): GPT-style tokenisers split numbers into
  multi-digit tokens, so every digit is separated by a space and values by ``" ,"``
  (``" 1 0 5 2 , 1 0 1 7 ,"``); LLaMA tokenises digits one by one, so digits are joined and
  values separated by ``","`` (``"1052,1017,"``). A trailing value separator ends the
  history, so the last value's digit count is unambiguous. Negative values get the
  family's minus sign (``" -"`` / ``"-"``).
- ``llmtime_gpt4``: the settings the reference uses for GPT-4 (``gpt4_hypers`` of its
  ``demo.py`` and ``experiments/run_darts.py``): basic scaling with alpha 0.3, precision
  3, digits not spaced, values separated by ``", "``, minus ``"-"`` (``"1052, 1017, "``).

Defaults:

- Forecasting (:data:`DEFAULT_FORECAST_ENCODING`): ``llmtime_gpt4``, the settings the
  paper's forecasting code ran GPT-4 with (``text_aid_forecast/tsllm/config/model/gpt-4.yaml``
  of behavioral-data/TSandLanguage: ``basic: True``, alpha 0.3, ``time_sep ", "``,
  ``bit_sep ""``). Basic scaling only divides, so the values shown keep the series'
  ratios, as the captions' multiplicative effects ("a promotion doubles the values") and
  the paper's Appendix A.1 example (20.88, 20.20, 20.48 -> 1052, 1017, 1032) need;
  ``llmtime_gpt``'s offset would hide them.
- Choice (:data:`DEFAULT_CHOICE_ENCODING`): ``llmtime_gpt4`` too, the settings of the
  reference's GPT question-answering scripts (``src/models/gpt_all.py``,
  ``src/data/gpt_all_2TS.py``: ``basic=True``, alpha 0.3, precision 3, ``time_sep ", "``,
  ``bit_sep ""``). The answer keys (the ``difference`` buckets, the equivalence test that
  keeps etiological distractors wrong) are computed on the raw values, and basic scaling
  keeps ratios, so they hold for the numbers shown (up to truncation); under
  ``llmtime_gpt``'s offset some did not (a series' ratio as written fell in another
  option's bucket, or a distractor's curve fitted the written series within the
  equivalence threshold). ``llmtime_gpt`` (offset, alpha 0.95, digits spaced) stays
  selectable (``--choice-encoding llmtime_gpt``). Plain values are an option (the paper
  found no difference, its Table A.3).
- Numeric options (``counterfactual_event`` / ``counterfactual_scale``: "about 547 units")
  are written, under an LLMTime encoding, with the scaler of the series in that prompt
  (:func:`encode_value`: "about 1052"), with and without the series; ``plain`` keeps the
  raw units, and so does ``plot``, whose vertical axis is labelled in raw units. The
  reference writes GPT-4's option texts in raw units beside a rescaled series; a model
  could not compare the two, so the question would not need the series.
- Two series in one prompt share one scaler, fitted on both. The reference's GPT
  question-answering scripts write only the original series (one scaler per sample);
  where it shows both (the multimodal tasks concatenate ``series`` and ``new_series`` into
  one input; GPT-4-Vision gets both lines in one plot) they share one scale. Scalers of
  their own would write both series near the same level (each divided by its own
  quantile), so a ``difference`` question could not be read from them.

Plain (:data:`PLAIN`): the values as they are, 2 decimals, separated by ``", "``.
Plot (``plot``): a line plot image with value labels on its vertical axis
(:func:`tsrate.inputs.plot_labels.labelled_line_plot`: the line as
:func:`tsrate.inputs.images.line_plot_images` draws it, in a 256 x 256 plot area, with 2-5
round values in the series' units written on its left) sent as a PNG data URL; for
vision-language models on the choice tasks only. The labels let raw-unit numeric options
("about 547 admissions") be read against the plot, as the text encodings write them on
the series' scale. The two series of a two-series prompt share one vertical scale
(:func:`plot_images`) and so one set of labels, as they share one scaler in text: drawn
each on its own scale, a series and its level-raised what-if are the same picture.

Decoding (:func:`decode`) is strict: the reply, split on the value separator, must start
with at least ``count`` well-formed encoded numbers (digit separators and surrounding
white space allowed, a trailing full stop ignored); the first ``count`` are kept (models
often continue the sequence). Anything else raises :class:`ReplyParseError` naming the
first bad value.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from tsrate import TsrateError

MAX_VALUE = 1e7  # LLMTime's max_val: scaled values at or above it cannot be written


class ReplyParseError(ValueError):
    """A reply holds no usable answer; the message says why."""


@dataclasses.dataclass(frozen=True)
class Scaler:
    """x -> (x - offset) / scale."""

    offset: float = 0.0
    scale: float = 1.0

    def transform(self, values: np.ndarray) -> np.ndarray:
        return (np.asarray(values, dtype=float) - self.offset) / self.scale

    def inverse(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float) * self.scale + self.offset


@dataclasses.dataclass(frozen=True)
class LlmTimeEncoding:
    name: str
    alpha: float
    beta: float
    basic: bool
    precision: int
    digit_separator: str
    value_separator: str
    minus_sign: str
    plus_sign: str = ""
    missing: str = " Nan"  # the reference's missing_str

    def describe(self) -> str:
        digits = "separated by spaces" if self.digit_separator else "written together"
        return (
            f"The values are rescaled and written as whole numbers (the last {self.precision} "
            f"digits are decimals, the point is left out), their digits {digits}, values "
            f"separated by '{self.value_separator.strip()}'."
        )


@dataclasses.dataclass(frozen=True)
class PlainEncoding:
    name: str = "plain"
    decimals: int = 2
    value_separator: str = ", "

    def describe(self) -> str:
        return f"The values are written as decimal numbers separated by '{self.value_separator.strip()}'."


LLMTIME: dict[str, LlmTimeEncoding] = {
    "llmtime_gpt": LlmTimeEncoding("llmtime_gpt", 0.95, 0.3, False, 3, " ", " ,", " -"),
    "llmtime_llama": LlmTimeEncoding("llmtime_llama", 0.99, 0.3, False, 3, "", ",", "-"),
    "llmtime_gpt4": LlmTimeEncoding("llmtime_gpt4", 0.3, 0.3, True, 3, "", ", ", "-"),
}
DEFAULT_CHOICE_ENCODING = "llmtime_gpt4"
DEFAULT_FORECAST_ENCODING = "llmtime_gpt4"
PLAIN = PlainEncoding()
TEXT_ENCODINGS = (*LLMTIME, "plain")
ENCODINGS = (*TEXT_ENCODINGS, "plot")


def get_encoding(name: str) -> LlmTimeEncoding | PlainEncoding:
    if name in LLMTIME:
        return LLMTIME[name]
    if name == "plain":
        return PLAIN
    raise TsrateError(f"unknown text encoding {name!r}: choose from {', '.join(TEXT_ENCODINGS)}")


def fit_scaler(history: np.ndarray, alpha: float, beta: float, basic: bool = False) -> Scaler:
    """LLMTime's scaler fitted on ``history`` (finite values only)."""
    values = np.asarray(history, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise TsrateError("cannot scale a series without finite values")
    if basic:
        return Scaler(0.0, float(max(np.quantile(np.abs(values), alpha), 0.01)))
    offset = float(values.min() - beta * (values.max() - values.min()))
    scale = float(np.quantile(values - offset, alpha))
    return Scaler(offset, scale if scale != 0 else 1.0)


def _digits(value: float, precision: int) -> str:
    """|value| with ``precision`` decimals, truncated, without point or leading zeros."""
    scaled = math.floor(abs(value) * 10**precision + 1e-6)
    return str(int(scaled))


def encode_llmtime(values: np.ndarray, encoding: LlmTimeEncoding, scaler: Scaler) -> str:
    """Scaled values in ``encoding``'s format, ending with the value separator."""
    scaled = scaler.transform(values)
    missing = np.isnan(scaled)
    if np.any(np.isinf(scaled)):
        raise TsrateError("LLMTime encoding cannot write an infinite value")
    if np.any(np.abs(scaled[~missing]) >= MAX_VALUE):
        raise TsrateError(f"a scaled value reaches {MAX_VALUE:g}: cannot encode it")
    parts = []
    for value in scaled:
        if np.isnan(value):
            parts.append(encoding.missing)
            continue
        digits = _digits(value, encoding.precision)
        if encoding.digit_separator:
            digits = "".join(encoding.digit_separator + d for d in digits)
        sign = encoding.minus_sign if value < 0 and digits.strip("0 ") else encoding.plus_sign
        parts.append(sign + digits)
    return encoding.value_separator.join(parts) + encoding.value_separator


def encode_plain(values: np.ndarray, encoding: PlainEncoding = PLAIN) -> str:
    return encoding.value_separator.join(f"{float(v):.{encoding.decimals}f}" for v in values)


def encode_text(name: str, values: np.ndarray, scaler: Scaler | None = None) -> tuple[str, Scaler]:
    """``values`` in text encoding ``name``; LLMTime fits its scaler on ``values`` unless
    one is given (two series compared in one prompt share one). Returns (text, scaler)."""
    encoding = get_encoding(name)
    if isinstance(encoding, PlainEncoding):
        return encode_plain(values, encoding), Scaler()
    scaler = scaler or fit_scaler(values, encoding.alpha, encoding.beta, encoding.basic)
    return encode_llmtime(values, encoding, scaler), scaler


def encode_value(name: str, value: float, scaler: Scaler) -> str:
    """One value as LLMTime encoding ``name`` writes it inside a series fitted with
    ``scaler`` (same scaling, truncation, digit separators and sign), without the value
    separator: the number of a numeric option shown beside that series."""
    encoding = get_encoding(name)
    if not isinstance(encoding, LlmTimeEncoding):
        raise TsrateError(f"encode_value needs an LLMTime encoding, got {name!r}")
    text = encode_llmtime(np.asarray([value], dtype=float), encoding, scaler)
    return text.removesuffix(encoding.value_separator).strip()


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_INTEGER = re.compile(r"^-?\d+$")
_DECIMAL = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)$")


def decode(text: str | None, name: str, scaler: Scaler, count: int) -> np.ndarray:
    """The first ``count`` values of a reply in encoding ``name``, on the original scale."""
    if text is None or not text.strip():
        raise ReplyParseError("empty reply")
    encoding = get_encoding(name)
    body = _THINK.sub("", text).strip()
    separator = encoding.value_separator.strip()
    pieces = body.split(separator)
    values: list[float] = []
    for position, piece in enumerate(pieces):
        if len(values) == count:
            break
        token = piece.strip()
        if position == len(pieces) - 1:
            token = token.rstrip(".").strip()
        if isinstance(encoding, LlmTimeEncoding):
            token = re.sub(r"\s+", "", token)
            if not _INTEGER.match(token):
                raise ReplyParseError(
                    f"value {len(values) + 1}: {piece.strip()[:40]!r} is not an encoded number"
                    if token
                    else f"only {len(values)} of {count} values"
                )
            try:  # a runaway digit run: past a double, or past Python's int digit limit
                values.append(int(token) / 10**encoding.precision)
            except (OverflowError, ValueError) as exc:
                raise ReplyParseError(
                    f"value {len(values) + 1}: a number of {len(token)} digits is too large"
                ) from exc
        else:
            if not _DECIMAL.match(token):
                raise ReplyParseError(
                    f"value {len(values) + 1}: {piece.strip()[:40]!r} is not a number"
                    if token
                    else f"only {len(values)} of {count} values"
                )
            values.append(float(token))
    if len(values) < count:
        raise ReplyParseError(f"only {len(values)} of {count} values")
    return scaler.inverse(np.asarray(values, dtype=float))


def plot_data_url(*series: np.ndarray, size: int | None = None) -> list[str]:
    """One line-plot PNG data URL per series (:func:`plot_images`)."""
    from tsrate.systems.llm_prompts import png_data_url

    return [png_data_url(image) for image in plot_images(*series, size=size)]


def plot_images(*series: np.ndarray, size: int | None = None) -> list[np.ndarray]:
    """One line plot with value labels on its vertical axis per series
    (:func:`tsrate.inputs.plot_labels.labelled_line_plot`; plot area ``size`` x ``size``,
    default 256, with the label panel on its left). A lone series fills its plot's height;
    the series of one prompt share ONE vertical scale (the lowest and highest value over
    all of them) and so the same labels, so a series 1.5 times another is drawn higher,
    not as the same picture."""
    from tsrate.inputs.plot_labels import LABELLED_PLOT_SIZE, labelled_line_plot, value_limits

    arrays = [np.asarray(values, dtype=float) for values in series]
    if not arrays:
        return []
    limits = value_limits(*arrays)
    size = LABELLED_PLOT_SIZE if size is None else size
    return [labelled_line_plot(a, limits, size) for a in arrays]
