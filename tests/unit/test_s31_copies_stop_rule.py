"""Gemma's numeric stop rule reads a reply as the parser does (reply_parser=3): a leading echo
of the window's context is not part of the forecast, so decoding goes on past it.

Before, the rule counted the echo as forecast values: a reply restating the context's last
values was stopped once it held d numbers, and the parser, skipping the echo, then failed
the window ("echoed context") though the model would have gone on. Checked on the rule
itself (any prefix it stops at parses, with the same context, to d values) and on a real
tiny model (the bigram machine of tests/support/memory_models.py, whose greedy reply is
worked out by hand) decoded through GemmaSystem.constrained_replies."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.gemma_system import loaded
from tests.support.memory_models import bigram_model
from tsrate.systems import gemma
from tsrate.systems.llm_replies import ReplyParseError, parse_forecast
from tsrate.systems.numeric_decoding import ForecastComplete

CONTEXT = np.array([100.0, 101.25, 102.5])


def test_an_echo_of_the_context_does_not_count_toward_the_horizon():
    stop = ForecastComplete(None, 0, 2, contexts=np.array([CONTEXT]), decimals=2)
    blind = ForecastComplete(None, 0, 2)
    echo = "101.25, 102.50,"
    assert blind.done(echo) and not stop.done(echo, 0)  # the echo alone is no forecast
    assert not stop.done(echo + " 103.00,", 0)
    assert stop.done(echo + " 103.00, 104.00,", 0)
    assert parse_forecast(echo + " 103.00, 104.00", 2, CONTEXT).tolist() == [103.0, 104.0]
    # a reply without an echo stops as before; so does a row without a context
    assert stop.done("99.00, 98.00,", 0) and blind.done("99.00, 98.00,")
    assert ForecastComplete(None, 0, 2, None).done(echo, 0)
    # one value equal to the last price, or a flat run, is no echo (the parser's rule)
    assert stop.done("102.50, 102.50,", 0)


def test_the_rule_stops_exactly_where_the_parser_first_reads_a_forecast():
    rng = np.random.default_rng(3)
    contexts = np.round(100 + rng.normal(0, 1, (40, 6)).cumsum(axis=1), 2)
    stop = ForecastComplete(None, 0, 3, contexts=contexts, decimals=2)
    for row, context in enumerate(contexts):
        echo = [f"{v:.2f}" for v in context[-int(rng.integers(0, 5)) :]] if row % 2 else []
        values = [f"{v:.2f}" for v in 100 + rng.normal(0, 1, 5)]
        reply = ", ".join(echo + values) + ","
        cuts = [k for k in range(1, len(reply) + 1) if stop.done(reply[:k], row)]
        assert cuts, reply
        first = reply[: cuts[0]]
        # at the cut the parser reads three values; one character earlier it could not
        assert len(parse_forecast(first, 3, context)) == 3
        with pytest.raises(ReplyParseError):
            parse_forecast(first[: first.rstrip(",").rfind(",")], 3, context)


def test_each_row_is_read_against_its_own_context():
    torch = pytest.importorskip("torch")

    class Replies:  # batch_decode of fixed replies (a tokenizer's one method used)
        def batch_decode(self, ids, skip_special_tokens=False):  # noqa: ARG002
            return ["101.25, 102.50,", "101.25, 102.50,"]

    contexts = np.array([CONTEXT, [1.0, 2.0, 3.0]])
    stop = ForecastComplete(Replies(), 0, 2, contexts=contexts, decimals=2)
    assert stop(torch.zeros((2, 3), dtype=torch.long)).tolist() == [False, True]


#: greedy after " " writes "34\n12, 34\n12, …": the numbers 34, 12, 34, 12, …
SUCCESSOR = {" ": "3", "3": "4", "4": "\n", "\n": "1", "1": "2", "2": ",", ",": " "}


@pytest.fixture(scope="module")
def bigram():
    return bigram_model(SUCCESSOR)


def test_a_real_model_echoing_its_context_is_decoded_past_the_echo(bigram):
    system = loaded(*bigram, batch_size=2)
    echoing = np.array([1.0, 2.0, 34.0, 12.0])  # its last values are the reply's first
    other = np.array([1.0, 2.0, 3.0, 4.0])
    texts = ["go ", "go "]
    assert system.constrained_replies(texts, 2, 60) == ["34\n12,"] * 2  # the old rule
    replies = system.constrained_replies(texts, 2, 60, np.array([echoing, other]))
    assert replies == ["34\n12, 34\n12,", "34\n12,"]
    assert parse_forecast(replies[0], 2, echoing).tolist() == [34.0, 12.0]
    with pytest.raises(ReplyParseError, match="echoed context"):
        parse_forecast("34\n12,", 2, echoing)  # what the old rule's reply came to
    assert "stop=horizon-after-echo" in gemma.FORECAST_DECODING  # replies of the old rule differ
