"""The reasoning suite's answerers (tsrate.suites.reasoning.answerers) against values worked
out independently of the code: the prompt hash rebuilt from its documented recipe (SHA-256
of the sorted-key JSON, first 24 hex digits), the random answerer's choice rebuilt from its
seeded digest, the references' forecasts worked by hand (last value, median, the context
rule's stated step and effect at the edges), and the language-model answerer driven by fake
models that record what they are asked (which prompts, which token cap, which timing).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_models.json): each test pins exact values, so a changed
length, default, condition or comparison in the answerers changes a checked value.
"""

from __future__ import annotations

import hashlib
import types

import pytest

from tests.support.reasoning_items import FORECAST, SERIES
from tsrate import TsrateError
from tsrate.suites.reasoning import answerers as ans
from tsrate.suites.reasoning.answerers import (
    CHOICE_NEW_TOKENS,
    ContextRule,
    ForecastReference,
    LanguageModelAnswerer,
    RandomChoice,
    Request,
    Response,
    parse_reply,
    prompt_hash,
    reference_answerers,
    takes_token_cap,
)
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.tasks import templates_digest

CHOICE = Item(
    task="qa_single",
    category="retail",
    series=(1.0, 2.0, 3.0, 4.0),
    question="Which way do the values move?",
    options=("up", "down", "flat", "both"),
    answer_index=0,
)
ETIOLOGICAL = Item(
    task="etiological",
    category="retail",
    series=(5.0, 4.0, 3.0),
    question="Which caption fits?",
    options=("a", "b", "c"),
    answer_index=1,
)
SIX = (
    "without_context",
    "with_context",
    "with_characteristics",
    "with_context_metadata",
    "with_characteristics_metadata",
    "with_all_context",
)


class Plain:
    """A model that only completes chats (an endpoint): no token cap, no closed decoding."""

    system_id = "m"

    def __init__(self, reply="B"):
        self.calls = []
        self.reply = reply

    def fingerprint(self) -> str:
        return "fake"

    def complete_all(self, prompts):
        self.calls.append(len(prompts))
        return [self.reply] * len(prompts)


class Capped(Plain):
    """A local model: ``complete_all`` takes ``max_new_tokens``."""

    def complete_all(self, prompts, max_new_tokens=None):
        self.calls.append((len(prompts), max_new_tokens))
        return [self.reply] * len(prompts)


class Closed(Plain):
    """A model that decodes closed answers itself (``choice_replies``)."""

    def __init__(self):
        super().__init__("no numbers here")
        self.closed_calls = []

    def choice_replies(self, prompts, answers):
        self.closed_calls.append((len(prompts), answers))
        return ["C"] * len(prompts)


# --------------------------------------------------------------------------- prompt hash


def test_prompt_hash_is_the_first_24_hex_of_sha256_of_the_sorted_json():
    """The recipe written out: the JSON list [system, fingerprint, item id, condition,
    messages] with each dict's keys sorted ("content" before "role"), SHA-256, first 24
    hex digits; a sampled reply appends its sample dict, a greedy one appends nothing."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    text = (
        f'["sys", "fp", "{CHOICE.item_id}", "with_series", '
        '[{"content": "s", "role": "system"}, {"content": "u", "role": "user"}]]'
    )
    expected = hashlib.sha256(text.encode()).hexdigest()[:24]
    got = prompt_hash("sys", "fp", CHOICE, "with_series", messages)
    assert got == expected and len(got) == 24
    sampled = text[:-1] + ', {"sample_index": 2, "temperature": 0.7}]'
    got = prompt_hash(
        "sys", "fp", CHOICE, "with_series", messages, {"temperature": 0.7, "sample_index": 2}
    )
    assert got == hashlib.sha256(sampled.encode()).hexdigest()[:24]


# --------------------------------------------------------------------------- token cap


def test_token_cap_is_read_from_the_signature_of_complete_all():
    assert takes_token_cap(Capped()) is True
    assert takes_token_cap(Plain()) is False
    assert takes_token_cap(types.SimpleNamespace()) is False  # no complete_all at all
    assert CHOICE_NEW_TOKENS == 16


# --------------------------------------------------------------------------- constructor


def test_the_constructor_accepts_the_edges_and_refuses_beyond_them():
    plain = Plain()  # no sample_all: one sample only
    one = LanguageModelAnswerer(plain, forecast_samples=1, forecast_temperature=0.0)
    assert one.forecast_samples == 1 and one.forecast_temperature == 0.0
    assert LanguageModelAnswerer(plain).forecast_temperature == 1.0  # llmtime_gpt4's
    with pytest.raises(TsrateError, match="cannot sample"):
        LanguageModelAnswerer(plain, forecast_samples=2, forecast_temperature=0.5)

    class Sampler(Plain):
        def sample_all(self, prompts, indices, temperature):
            raise AssertionError("not asked")

    two = LanguageModelAnswerer(Sampler(), forecast_samples=2, forecast_temperature=0.5)
    assert two.forecast_samples == 2
    with pytest.raises(TsrateError, match="temperature > 0"):
        LanguageModelAnswerer(Sampler(), forecast_samples=2, forecast_temperature=0.0)
    with pytest.raises(TsrateError, match="choice encoding"):
        LanguageModelAnswerer(plain, choice_encoding="morse")
    assert LanguageModelAnswerer(plain, choice_encoding="plot").choice_encoding == "plot"
    with pytest.raises(TsrateError, match="forecast encoding"):
        LanguageModelAnswerer(plain, forecast_encoding="plot")
    assert LanguageModelAnswerer(plain, forecast_encoding="plain").forecast_encoding == "plain"


def test_the_fingerprint_names_encodings_templates_cap_and_closed_decoding():
    from tsrate.systems.gemma import CHOICE_DECODING

    stem = f"fake;choice=llmtime_gpt4;forecast=llmtime_gpt4;templates={templates_digest()}"
    assert LanguageModelAnswerer(Plain()).fingerprint() == stem
    capped = LanguageModelAnswerer(Capped())
    assert capped.fingerprint() == stem + ";choice_new_tokens=16"
    assert capped.fingerprint() == stem + ";choice_new_tokens=16"  # cached, not re-appended
    assert LanguageModelAnswerer(Closed()).fingerprint() == stem + f";closed={CHOICE_DECODING}"


# --------------------------------------------------------------------------- requests


def test_requests_carry_the_encoding_of_their_prompt():
    """A choice item: the choice encoding with the series, none without it; a forecast: the
    forecast encoding and a scaler in each of the six conditions, one greedy request each."""
    answerer = LanguageModelAnswerer(Plain(), choice_encoding="plain")
    requests = answerer.requests([CHOICE, FORECAST])
    assert [(r.item.task, r.condition, r.encoding) for r in requests] == [
        ("qa_single", "with_series", "plain"),
        ("qa_single", "without_series", None),
        *(("forecast", c, "llmtime_gpt4") for c in SIX),
    ]
    assert all(r.scaler is None for r in requests[:2])
    assert all(r.scaler is not None and r.sample_index is None for r in requests[2:])
    assert all(r.temperature is None for r in requests)


# --------------------------------------------------------------------------- answering


def test_an_uncapped_model_gets_one_call_for_every_greedy_prompt():
    model = Plain("B")
    answerer = LanguageModelAnswerer(model)
    requests = answerer.requests([CHOICE, FORECAST])
    responses = answerer.answer(requests)
    assert model.calls == [8]
    assert [r.choice for r in responses[:2]] == [1, 1]
    assert [r.prompt_hash for r in responses] == [r.prompt_hash for r in requests]
    assert all(not r.parse_ok and r.forecast is None for r in responses[2:])  # "B": no numbers


def test_a_capped_model_caps_choice_replies_only():
    model = Capped("A")
    answerer = LanguageModelAnswerer(model)
    requests = answerer.requests([CHOICE, FORECAST, ETIOLOGICAL])
    responses = answerer.answer(requests)
    assert model.calls == [(3, CHOICE_NEW_TOKENS), (6, None)]  # choices first, then forecasts
    by_task = [(r.item.task, resp.choice) for r, resp in zip(requests, responses, strict=True)]
    assert by_task[:2] == [("qa_single", 0)] * 2 and by_task[-1] == ("etiological", 0)
    only_forecasts = [r for r in requests if r.item.task == "forecast"]
    model.calls.clear()
    answerer.answer(only_forecasts)
    assert model.calls == [(6, None)]  # no empty choice call


def test_a_closed_model_decodes_choices_itself_and_completes_the_forecasts():
    model = Closed()
    answerer = LanguageModelAnswerer(model)
    requests = answerer.requests([CHOICE, FORECAST])
    responses = answerer.answer(requests)
    assert [n for n, _ in model.closed_calls] == [2]
    assert model.calls == [6]  # the forecasts only, through complete_all
    assert [r.choice for r in responses[:2]] == [2, 2]


def test_seconds_are_the_elapsed_time_shared_over_the_requests(monkeypatch):
    """perf_counter 10 s then 16 s around three requests: 2 s each."""
    clock = iter([10.0, 16.0])
    monkeypatch.setattr(ans, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))
    answerer = LanguageModelAnswerer(Plain("A"))
    requests = answerer.requests([CHOICE, ETIOLOGICAL])
    assert [r.seconds for r in answerer.answer(requests)] == [2.0, 2.0, 2.0]
    clock = iter([10.0, 16.0])
    assert [r.seconds for r in answerer.answer(requests[:1])] == [6.0]  # one request: all 6 s
    clock = iter([10.0, 16.0])
    median = ForecastReference("median")
    assert [r.seconds for r in median.answer(median.requests([FORECAST]))] == [6.0]
    clock = iter([10.0, 16.0])
    other = Item(task="forecast", category="x", series=(1.0, 2.0), future=(1.0,))
    got = median.answer(median.requests([FORECAST, other]))
    assert [r.seconds for r in got] == [3.0, 3.0]
    clock = iter([10.0, 16.0])
    assert answerer.answer([]) == []
    clock = iter([10.0, 16.0])
    assert median.answer([]) == []


def test_unmeasured_answers_take_zero_seconds():
    request = LanguageModelAnswerer(Plain()).requests([CHOICE])[0]
    assert parse_reply(request, "A").seconds == 0.0
    assert parse_reply(request, "A").choice == 0
    assert Response("h", "A").seconds == 0.0
    rule = RandomChoice()
    assert {r.seconds for r in rule.answer(rule.requests([CHOICE]))} == {0.0}


def test_parse_reply_reads_a_forecast_as_a_forecast():
    """A plain-encoded forecast reply "1, 2, ..." decodes to its numbers; the same text
    read as a choice would be unparseable."""
    answerer = LanguageModelAnswerer(Plain(), forecast_encoding="plain")
    request = answerer.requests([FORECAST])[0]
    reply = ", ".join(str(v) for v in FORECAST.future)
    response = parse_reply(request, reply, 1.5)
    assert response.parse_ok and response.forecast == FORECAST.future and response.choice is None
    assert response.seconds == 1.5


# --------------------------------------------------------------------------- random choice


def test_random_choice_is_the_seeded_digest_modulo_the_options():
    """Default seed 0; each choice = int(first 8 bytes of sha256("seed:hash"), big-endian)
    mod the number of options; only choice tasks, in each of their conditions."""
    rule = RandomChoice()
    assert rule.seed == 0 and rule.fingerprint() == "uniform;seed=0"
    requests = rule.requests([CHOICE, FORECAST, ETIOLOGICAL])
    assert [(r.item.task, r.condition) for r in requests] == [
        ("qa_single", "with_series"),
        ("qa_single", "without_series"),
        ("etiological", "with_series"),
    ]
    for seed in (0, 7):
        for r, a in zip(requests, RandomChoice(seed).answer(requests), strict=True):
            digest = hashlib.sha256(f"{seed}:{r.prompt_hash}".encode()).digest()
            choice = sum(b << (8 * (7 - i)) for i, b in enumerate(digest[:8])) % len(r.item.options)
            assert (a.choice, a.raw_text) == (choice, "ABCD"[choice])


# --------------------------------------------------------------------------- references


def test_forecast_references_by_name():
    with pytest.raises(TsrateError, match="unknown forecasting reference"):
        ForecastReference("drift")
    median = ForecastReference("median")
    assert median.system is None and median.fingerprint() == "median-of-history"
    available = median.availability()
    assert (available.available, available.reason) == (True, "built in")
    naive = ForecastReference("naive")
    assert naive.fingerprint() == "last-non-missing" and naive.availability().available
    arima = ForecastReference("arima")
    assert arima.system.warm_start is False and "start=warm" not in arima.fingerprint()


def test_forecast_references_answer_every_forecast_without_context():
    """Only forecasting items, once each, without context; ``max_items`` keeps the first."""
    other = Item(task="forecast", category="x", series=(3.0, 1.0, 2.0, 8.0), future=(0.0, 0.0))
    naive = ForecastReference("naive")
    requests = naive.requests([CHOICE, FORECAST, other])
    assert [(r.item, r.condition) for r in requests] == [
        (FORECAST, "without_context"),
        (other, "without_context"),
    ]
    assert [
        r.item for r in ForecastReference("naive", max_items=1).requests([FORECAST, other])
    ] == [FORECAST]
    # naive: the last history value repeated (two groups: lengths 24 and 4)
    got = [a.forecast for a in naive.answer(requests)]
    assert got == [(SERIES[23],) * 6, (8.0, 8.0)]
    median = ForecastReference("median")
    got = median.answer(median.requests([other]))[0]
    assert got.forecast == (2.5, 2.5) and got.raw_text == "2.5, 2.5"


def _event_item(step: int, effect: float, history=(*(float(v) for v in range(1, 24)), 40.0)):
    return Item(
        task="forecast",
        category="x",
        series=history,
        future=(0.0,) * 4,
        context="stated",
        params={"event_step": step, "event_effect": effect},
    )


@pytest.mark.parametrize(("step", "scaled"), [(0, 4), (-3, 4), (1, 3), (3, 1)])
def test_context_rule_scales_from_the_stated_step_clipped_at_the_horizon_start(step, scaled):
    """History 1..23 then 40: the mean of the last 10 (15..23, 40) is 21.1 (their median
    19.5). With the caption, an effect
    of +0.5 from horizon index ``step`` on (an event already in the history, step < 0, from
    index 0): 31.65 on the last ``scaled`` values; without it, 21.1 throughout."""
    rule = ContextRule()
    item = _event_item(step, 0.5)
    requests = rule.requests([item])
    assert [r.condition for r in requests] == list(SIX)
    answers = {
        r.condition: a.forecast for r, a in zip(requests, rule.answer(requests), strict=True)
    }
    expected = (21.1,) * (4 - scaled) + (31.65,) * scaled
    assert answers["with_context"] == pytest.approx(expected, rel=1e-12)
    assert answers["without_context"] == pytest.approx((21.1,) * 4, rel=1e-12)
    assert rule.fingerprint() == "mean-of-last-10;with_context=stated-step-effect"


def test_context_rule_asks_procedural_forecasts_only():
    plain_forecast = Item(task="forecast", category="x", series=(1.0, 2.0), future=(1.0,))
    choice_with_step = Item(
        task="qa_single",
        category="x",
        series=(1.0, 2.0),
        options=("a", "b"),
        answer_index=0,
        params={"event_step": 1, "event_effect": 0.5},
    )
    assert ContextRule().requests([plain_forecast, choice_with_step]) == []


def test_the_offline_references_and_their_defaults():
    default = reference_answerers()
    assert [a.system_id for a in default] == ["random", "naive", "median", "arima", "context_rule"]
    assert default[0].seed == 0
    every = reference_answerers(fracast=True, seed=3)
    assert every[-1].system_id == "fracast" and every[-1].max_items is None
    assert every[0].seed == 3
    some = reference_answerers(fracast=2)
    assert some[-1].system_id == "fracast" and some[-1].max_items == 2


def test_requests_of_a_reference_have_no_prompt():
    request = ContextRule().requests([_event_item(1, 0.5)])[0]
    assert isinstance(request, Request)
    assert (request.encoding, request.messages, request.scaler) == (None, None, None)
    assert request.prompt_hash == prompt_hash(
        "context_rule", ContextRule().fingerprint(), request.item, "without_context", None
    )


class TooManyPlain(Plain):
    """A model that returns one reply more than it was asked for."""

    def complete_all(self, prompts):
        return ["A"] * (len(prompts) + 1)

    def sample_all(self, prompts, indices, temperature):
        return [["1, 2"] * (len(wanted) + 1) for wanted in indices]


class TooManyCapped(Plain):
    def complete_all(self, prompts, max_new_tokens=None):
        return ["A"] * (len(prompts) + 1)


class TooManyClosed(Plain):
    def choice_replies(self, prompts, answers):
        return ["A"] * (len(prompts) + 1)


class TooManyBlocks(Plain):
    def sample_all(self, prompts, indices, temperature):
        return [["1, 2"] * len(wanted) for wanted in indices] + [["1, 2"]]


@pytest.mark.parametrize(
    ("model", "samples", "items"),
    [
        (TooManyPlain(), 1, [CHOICE]),
        (TooManyCapped(), 1, [CHOICE]),
        (TooManyCapped(), 1, [FORECAST]),
        (TooManyClosed(), 1, [CHOICE]),
        (TooManyPlain(), 2, [FORECAST]),  # an extra sample of a chat
        (TooManyBlocks(), 2, [FORECAST]),  # an extra chat of samples
    ],
)
def test_a_model_answering_more_than_asked_is_refused(model, samples, items):
    """Replies are zipped strictly to their prompts: an extra reply is an error, not
    silently dropped (greedy, capped, closed and sampled paths)."""
    answerer = LanguageModelAnswerer(model, forecast_samples=samples)
    with pytest.raises(ValueError, match="zip"):
        answerer.answer(answerer.requests(items))


class Sampler(Plain):
    def __init__(self):
        super().__init__()
        self.sampled = []

    def sample_all(self, prompts, indices, temperature):
        self.sampled.append(([p[-1]["content"][-40:] for p in prompts], indices, temperature))
        return [[f"{100 + i} ," * 6 for i in wanted] for wanted in indices]


def test_a_rerun_asks_only_the_samples_not_stored_yet():
    """One sample of a chat asked alone (the others stored by an earlier run): one chat,
    that sample's index, its prompt; the reply lands on that request."""
    model = Sampler()
    answerer = LanguageModelAnswerer(model, forecast_samples=3, forecast_encoding="plain")
    requests = answerer.requests([FORECAST])
    last = [r for r in requests if r.condition == "with_context" and r.sample_index == 2]
    (response,) = answerer.answer(last)
    assert model.sampled == [([last[0].messages[-1]["content"][-40:]], [[2]], 0.7)]
    assert response.raw_text == "102 ," * 6 and response.prompt_hash == last[0].prompt_hash


def test_samples_of_one_chat_are_asked_together_however_its_dicts_are_ordered():
    """Samples are grouped by item, condition and chat compared as sorted-key JSON: the same
    chat with its message keys in another order is the same chat (one prompt, both
    indices)."""
    import dataclasses

    model = Sampler()
    answerer = LanguageModelAnswerer(model, forecast_samples=2, forecast_encoding="plain")
    first, second = [r for r in answerer.requests([FORECAST]) if r.condition == "with_context"]
    reordered = [{"content": m["content"], "role": m["role"]} for m in second.messages]
    second = dataclasses.replace(second, messages=reordered)
    answerer.answer([first, second])
    assert [indices for _, indices, _ in model.sampled] == [[[0, 1]]]
