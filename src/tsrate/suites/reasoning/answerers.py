"""Who answers: language models and offline references, behind one small interface.

An answerer turns items into :class:`Request` s (one per item and condition it takes part
in), each named by a prompt hash of everything that decides the answer (system,
fingerprint, item, condition, the exact chat), and answers a list of requests.

- :class:`LanguageModelAnswerer`: any :mod:`tsrate.systems.language` model (``endpoint:ID``
  through an OpenAI-compatible server with its concurrency, retries and response cache;
  ``hf_local:ID`` from a local checkpoint). Every task and condition. Choice items in
  ``choice_encoding`` (default ``llmtime_gpt4``, the reference's GPT QA settings; plain
  values an option, the paper found no difference, Table A.3; numeric options are written
  on the series' scale, :func:`tsrate.suites.reasoning.tasks.choice_options`), forecasts in
  ``forecast_encoding`` (default ``llmtime_gpt4`` too). ``forecast_samples`` > 1: that many sampled replies per
  forecast prompt (LLMTime's 20-sample mode, :mod:`tsrate.suites.reasoning.sampling`), each
  its own request (``sample_index`` 0..N-1, at ``forecast_temperature``) with its own hash,
  so a rerun asks only the samples not stored yet.
- :class:`RandomChoice` (``random``): a uniform choice per request, seeded by the prompt
  hash; the chance level, with and without the series.
- :class:`ForecastReference`: ``naive`` (last value), ``median`` (the paper's "predict
  median" of the history), ``arima`` and ``fracast`` (the robustness suite's systems in
  :mod:`tsrate.systems`, given a :class:`~tsrate.systems.base.ForecastBatch` per history
  length), without context: they cannot read text.
- :class:`ContextRule` (``context_rule``): what reading the context is worth on procedural
  items: without context the mean of the last :data:`RECENT` values repeated; with context
  that level times the stated effect from the stated step on (taken from the generator's
  parameters, so only procedural items).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Sequence

import numpy as np

from tsrate import TsrateError
from tsrate.suites.reasoning.encoding import (
    DEFAULT_CHOICE_ENCODING,
    DEFAULT_FORECAST_ENCODING,
    ENCODINGS,
    TEXT_ENCODINGS,
    ReplyParseError,
    Scaler,
)
from tsrate.suites.reasoning.items import CHOICE_TASKS, LETTERS, Item
from tsrate.suites.reasoning.sampling import reference_temperature
from tsrate.suites.reasoning.tasks import (
    CAPTION_CONDITIONS,
    CONDITIONS,
    choice_messages,
    forecast_messages,
    parse_choice,
    parse_forecast,
    templates_digest,
)


@dataclasses.dataclass(frozen=True)
class Request:
    system_id: str
    item: Item
    condition: str
    encoding: str | None
    messages: list | None
    scaler: Scaler | None
    prompt_hash: str
    sample_index: int | None = None  # a sampled forecast reply (None: the one greedy reply)
    temperature: float | None = None  # of a sampled reply


@dataclasses.dataclass(frozen=True)
class Response:
    prompt_hash: str
    raw_text: str | None
    choice: int | None = None
    forecast: tuple[float, ...] | None = None
    parse_error: str | None = None
    seconds: float = 0.0

    @property
    def parse_ok(self) -> bool:
        return self.parse_error is None


def prompt_hash(
    system_id: str, fingerprint: str, item: Item, condition: str, messages, sample=None
) -> str:
    """Hash of everything that decides an answer; ``sample`` ({"sample_index", "temperature"})
    only for a sampled reply, so a greedy prompt keeps the hash it always had."""
    parts = [system_id, fingerprint, item.item_id, condition, messages]
    if sample is not None:
        parts.append(sample)
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _request(answerer, item: Item, condition: str, encoding=None, messages=None, scaler=None):
    return Request(
        answerer.system_id,
        item,
        condition,
        encoding,
        messages,
        scaler,
        prompt_hash(answerer.system_id, answerer.fingerprint(), item, condition, messages),
    )


#: new tokens a local model may write for a choice answer ("Answer with the letter of one
#: option only"): a CPU pays for every token of a reply that rambles on; forecasts keep the
#: model's setting (``TSRATE_HF_MAX_NEW_TOKENS``)
CHOICE_NEW_TOKENS = 16


def takes_token_cap(model) -> bool:
    """Whether ``model.complete_all`` takes ``max_new_tokens`` (a local ``hf_local`` model)."""
    import inspect

    complete_all = getattr(model, "complete_all", None)
    return complete_all is not None and (
        "max_new_tokens" in inspect.signature(complete_all).parameters
    )


def choice_answers(item: Item) -> list[str]:
    """The option letters of a choice item, in every spelling :func:`parse_choice` reads as
    that option (:func:`tsrate.systems.choice_decoding.admissible`)."""
    from tsrate.systems.choice_decoding import admissible

    def reads_as(text: str) -> str | None:
        try:
            return LETTERS[parse_choice(text, len(item.options))]
        except ReplyParseError:
            return None

    return admissible(LETTERS[: len(item.options)], reads_as)


class LanguageModelAnswerer:
    """A language model answering every task; a local model's choice replies are capped at
    :data:`CHOICE_NEW_TOKENS` new tokens (named in the fingerprint). A model that decodes
    closed answers itself (``choice_replies``: the packaged Gemma) answers the choice items
    greedily over their option letters only (:data:`tsrate.systems.gemma.CHOICE_DECODING`,
    named in the fingerprint)."""

    kind = "language_model"

    def __init__(
        self,
        model,
        choice_encoding: str = DEFAULT_CHOICE_ENCODING,
        forecast_encoding: str = DEFAULT_FORECAST_ENCODING,
        forecast_samples: int = 1,
        forecast_temperature: float | None = None,
    ):
        if forecast_samples < 1:
            raise TsrateError(f"forecast samples must be >= 1, got {forecast_samples}")
        if forecast_temperature is None:
            forecast_temperature = reference_temperature(forecast_encoding)
        if forecast_samples > 1 and not forecast_temperature > 0:
            raise TsrateError(
                f"{forecast_samples} forecast samples at temperature {forecast_temperature} "
                "would repeat one reply: give a temperature > 0 (or one sample)"
            )
        if forecast_samples > 1 and not hasattr(model, "sample_all"):
            raise TsrateError(f"{model.system_id!r} cannot sample replies: use one sample")
        if choice_encoding not in ENCODINGS:
            raise TsrateError(
                f"choice encoding {choice_encoding!r}: choose from {', '.join(ENCODINGS)}"
            )
        if forecast_encoding not in TEXT_ENCODINGS:
            raise TsrateError(
                f"forecast encoding {forecast_encoding!r}: choose from {', '.join(TEXT_ENCODINGS)}"
            )
        self.model = model
        self.system_id = model.system_id
        self.choice_encoding = choice_encoding
        self.forecast_encoding = forecast_encoding
        self.forecast_samples = forecast_samples
        self.forecast_temperature = float(forecast_temperature)
        self.capped = takes_token_cap(model)
        self.closed = hasattr(model, "choice_replies")
        self._fingerprint: str | None = None

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = (
                f"{self.model.fingerprint()};choice={self.choice_encoding};"
                f"forecast={self.forecast_encoding};templates={templates_digest()}"
            )
            if self.capped:
                self._fingerprint += f";choice_new_tokens={CHOICE_NEW_TOKENS}"
            if self.closed:
                from tsrate.systems.gemma import CHOICE_DECODING

                self._fingerprint += f";closed={CHOICE_DECODING}"
        return self._fingerprint

    def availability(self):
        return self.model.availability()

    def requests(self, items: Sequence[Item]) -> list[Request]:
        out = []
        for item in items:
            for condition in CONDITIONS[item.task]:
                if item.task == "forecast":
                    messages, scaler = forecast_messages(item, condition, self.forecast_encoding)
                    request = _request(
                        self, item, condition, self.forecast_encoding, messages, scaler
                    )
                    if self.forecast_samples == 1:
                        out.append(request)
                        continue
                    for index in range(self.forecast_samples):
                        sample = {"sample_index": index, "temperature": self.forecast_temperature}
                        out.append(
                            dataclasses.replace(
                                request,
                                sample_index=index,
                                temperature=self.forecast_temperature,
                                prompt_hash=prompt_hash(
                                    self.system_id,
                                    self.fingerprint(),
                                    item,
                                    condition,
                                    messages,
                                    sample,
                                ),
                            )
                        )
                else:
                    messages = choice_messages(item, condition, self.choice_encoding)
                    encoding = self.choice_encoding if condition == "with_series" else None
                    out.append(_request(self, item, condition, encoding, messages))
        return out

    def answer(self, requests: Sequence[Request]) -> list[Response]:
        """Greedy requests in one ``complete_all``; sampled ones grouped per chat (its
        sample indices asked together through the model's ``sample_all``)."""
        started = time.perf_counter()
        replies: dict[str, str | None] = {}
        greedy = [r for r in requests if r.sample_index is None]
        closed = [r for r in greedy if r.item.task != "forecast"] if self.closed else []
        if closed:
            texts = self.model.choice_replies(
                [r.messages for r in closed], [choice_answers(r.item) for r in closed]
            )
            replies.update((r.prompt_hash, t) for r, t in zip(closed, texts, strict=True))
            greedy = [r for r in greedy if r.item.task == "forecast"]
        if greedy and self.capped:
            for part, cap in (
                ([r for r in greedy if r.item.task != "forecast"], CHOICE_NEW_TOKENS),
                ([r for r in greedy if r.item.task == "forecast"], None),
            ):
                if part:
                    texts = self.model.complete_all([r.messages for r in part], max_new_tokens=cap)
                    replies.update((r.prompt_hash, t) for r, t in zip(part, texts, strict=True))
        elif greedy:
            texts = self.model.complete_all([r.messages for r in greedy])
            replies.update((r.prompt_hash, t) for r, t in zip(greedy, texts, strict=True))
        groups: dict[str, list[Request]] = {}
        for r in requests:
            if r.sample_index is not None:
                key = json.dumps([r.item.item_id, r.condition, r.messages], sort_keys=True)
                groups.setdefault(key, []).append(r)
        if groups:
            blocks = list(groups.values())
            samples = self.model.sample_all(
                [block[0].messages for block in blocks],
                [[r.sample_index for r in block] for block in blocks],
                self.forecast_temperature,
            )
            for block, texts in zip(blocks, samples, strict=True):
                replies.update((r.prompt_hash, t) for r, t in zip(block, texts, strict=True))
        seconds = (time.perf_counter() - started) / max(len(requests), 1)
        return [parse_reply(r, replies[r.prompt_hash], seconds) for r in requests]


def parse_reply(request: Request, reply: str | None, seconds: float = 0.0) -> Response:
    """A language model's reply parsed strictly; unparseable replies keep text and reason."""
    item = request.item
    try:
        if item.task == "forecast":
            values = parse_forecast(reply, request.encoding, request.scaler, item.horizon)
            return Response(
                request.prompt_hash, reply, forecast=tuple(map(float, values)), seconds=seconds
            )
        choice = parse_choice(reply, len(item.options))
        return Response(request.prompt_hash, reply, choice=choice, seconds=seconds)
    except ReplyParseError as exc:
        return Response(request.prompt_hash, reply, parse_error=str(exc), seconds=seconds)


class RandomChoice:
    system_id = "random"
    kind = "reference"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def fingerprint(self) -> str:
        return f"uniform;seed={self.seed}"

    def requests(self, items: Sequence[Item]) -> list[Request]:
        return [
            _request(self, item, condition)
            for item in items
            if item.task in CHOICE_TASKS
            for condition in CONDITIONS[item.task]
        ]

    def answer(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            digest = hashlib.sha256(f"{self.seed}:{r.prompt_hash}".encode()).digest()
            choice = int.from_bytes(digest[:8], "big") % len(r.item.options)
            out.append(Response(r.prompt_hash, LETTERS[choice], choice=choice))
        return out


def median_forecast(history: Sequence[float], horizon: int) -> np.ndarray:
    """The paper's "predict median" baseline: the history's median, repeated."""
    return np.full(horizon, float(np.median(np.asarray(history, dtype=float))))


FORECAST_REFERENCES = ("naive", "median", "arima", "fracast")


class ForecastReference:
    kind = "reference"

    def __init__(self, system_id: str, max_items: int | None = None):
        if system_id not in FORECAST_REFERENCES:
            raise TsrateError(
                f"unknown forecasting reference {system_id!r}: choose from {', '.join(FORECAST_REFERENCES)}"
            )
        self.system_id = system_id
        self.max_items = max_items
        self._system = None

    @property
    def system(self):
        if self._system is None and self.system_id != "median":
            if self.system_id == "naive":
                from tsrate.systems.naive import NaiveSystem

                self._system = NaiveSystem()
            elif self.system_id == "arima":
                from tsrate.systems.arima import ArimaSystem

                # the items are unrelated series, not overlapping windows: fit each cold
                self._system = ArimaSystem(warm_start=False)
            else:
                from tsrate.systems.fracast_model import FracastSystem

                self._system = FracastSystem()
        return self._system

    def fingerprint(self) -> str:
        return "median-of-history" if self.system_id == "median" else self.system.fingerprint()

    def availability(self):
        from tsrate.systems.base import Availability

        return Availability(True, "built in") if self.system is None else self.system.availability()

    def requests(self, items: Sequence[Item]) -> list[Request]:
        chosen = [item for item in items if item.task == "forecast"]
        if self.max_items is not None:
            chosen = chosen[: self.max_items]
        return [_request(self, item, "without_context") for item in chosen]

    def answer(self, requests: Sequence[Request]) -> list[Response]:
        from tsrate.systems.base import ForecastBatch, check_forecasts

        started = time.perf_counter()
        forecasts: dict[str, np.ndarray] = {}
        if self.system_id == "median":
            for r in requests:
                forecasts[r.prompt_hash] = median_forecast(r.item.series, r.item.horizon)
        else:
            groups: dict[tuple[int, int], list[Request]] = {}
            for r in requests:
                groups.setdefault((len(r.item.series), r.item.horizon), []).append(r)
            for (_, horizon), group in groups.items():
                batch = ForecastBatch(
                    ticker="reasoning",
                    perturbation_id="P0",
                    window_end_dates=np.arange(len(group)),
                    contexts=np.array([r.item.series for r in group], dtype=float),
                    horizon=horizon,
                    clean_futures=np.array([r.item.future for r in group], dtype=float),
                    study_range=(0.0, 1.0),
                )
                output = check_forecasts(self.system_id, batch, self.system.predict(batch))
                for r, row in zip(group, output, strict=True):
                    forecasts[r.prompt_hash] = row
        seconds = (time.perf_counter() - started) / max(len(requests), 1)
        return [
            Response(
                r.prompt_hash,
                ", ".join(f"{v:.4g}" for v in forecasts[r.prompt_hash]),
                forecast=tuple(map(float, forecasts[r.prompt_hash])),
                seconds=seconds,
            )
            for r in requests
        ]


RECENT = 10


class ContextRule:
    system_id = "context_rule"
    kind = "reference"

    def fingerprint(self) -> str:
        return f"mean-of-last-{RECENT};with_context=stated-step-effect"

    def requests(self, items: Sequence[Item]) -> list[Request]:
        return [
            _request(self, item, condition)
            for item in items
            if item.task == "forecast" and "event_step" in item.params
            for condition in CONDITIONS["forecast"]
        ]

    def answer(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            level = float(np.mean(np.asarray(r.item.series, dtype=float)[-RECENT:]))
            forecast = np.full(r.item.horizon, level)
            if r.condition in CAPTION_CONDITIONS:  # the caption states step and effect
                step = max(0, int(r.item.params["event_step"]))
                forecast[step:] *= 1.0 + float(r.item.params["event_effect"])
            out.append(
                Response(
                    r.prompt_hash,
                    ", ".join(f"{v:.4g}" for v in forecast),
                    forecast=tuple(map(float, forecast)),
                )
            )
        return out


def reference_answerers(fracast: bool | int = False, seed: int = 0) -> list:
    """The offline references: random choice, naive, median, ARIMA, the context rule, and
    fracast when ``fracast`` (True: every forecasting item; an integer: at most that many)."""
    out = [
        RandomChoice(seed),
        ForecastReference("naive"),
        ForecastReference("median"),
        ForecastReference("arima"),
        ContextRule(),
    ]
    if fracast:
        limit = None if fracast is True else int(fracast)
        out.append(ForecastReference("fracast", max_items=limit))
    return out
