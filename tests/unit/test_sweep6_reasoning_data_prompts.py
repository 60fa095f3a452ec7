"""The reasoning suite's prompts and reply parsing (tsrate.suites.reasoning.tasks and
encoding) at their edges, against the rules the docstrings state: the templates' digest
(12 hex characters of SHA-256 of the templates joined by NUL, part of every prompt hash),
more options than letters, the metadata sentence's four keys (else sorted JSON), and a
reply whose numbers overflow a double (an unparseable reply, never a crash).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_data.json).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from tsrate.suites.reasoning import tasks
from tsrate.suites.reasoning.encoding import ReplyParseError, Scaler, decode
from tsrate.suites.reasoning.items import Item

SERIES = tuple(float(100 + t) for t in range(20))


def test_the_templates_digest_is_12_hex_characters_of_their_sha256():
    """Every language model's prompt hash holds this digest: its length and rule decide
    whether stored replies are found again."""
    joined = "\x00".join(tasks.TEMPLATES[name] for name in tasks.TEMPLATE_NAMES)
    expected = hashlib.sha256(joined.encode()).hexdigest()[:12]
    assert tasks.templates_digest() == expected
    assert len(tasks.templates_digest()) == 12


def test_a_choice_item_with_more_options_than_letters_is_refused():
    """Ten letters (A-J): an eleventh option cannot be named, so the prompt is refused
    rather than silently dropping it."""
    options = tuple(f"option {k}" for k in range(11))
    item = Item(task="qa_single", category="x", series=SERIES, question="?", options=options,
                answer_index=0)
    with pytest.raises(ValueError):
        tasks.choice_messages(item, "without_series", "plain")
    ten = Item(task="qa_single", category="x", series=SERIES, question="?", options=options[:10],
               answer_index=0)
    text = tasks.choice_messages(ten, "without_series", "plain")[-1]["content"]
    assert "J. option 9" in text and "option 10" not in text


def test_metadata_without_the_four_keys_is_written_as_sorted_json():
    """Only a dict with start, end, frequency and units becomes the reference's sentence;
    anything else is 'Metadata: ' and the JSON with sorted keys."""
    partial = {"units": "mm", "start": "2023-01-01"}
    assert tasks.metadata_sentence(partial, None) == (
        'Metadata: {"start": "2023-01-01", "units": "mm"}'
    )
    as_list = ["start", "end", "frequency", "units"]
    assert tasks.metadata_sentence(as_list, 3) == (
        "Metadata: " + json.dumps(as_list) + " You will predict the next 3 data points."
    )
    full = {"start": "a", "end": "b", "frequency": "daily", "units": "mm"}
    assert tasks.metadata_sentence(full, None) == (
        'The time series was collected between a and b with a collection frequency of daily, '
        'and the data unit is "mm".'
    )


@pytest.mark.parametrize(
    ("reply", "encoding", "scale"),
    [
        ("1.5, " + "9" * 400, "plain", 1.0),  # float('99...9') is inf
        ("1 5 , " + "9" * 305 + " ,", "llmtime_gpt", 1e10),  # 1e302 x 1e10 overflows
        ("15," + "9" * 400 + ",", "llmtime_llama", 1.0),  # 400 digits / 1000: no double
        ("15," + "9" * 5000 + ",", "llmtime_llama", 1.0),  # past Python's 4300-digit limit
    ],
    ids=["plain", "gpt-scaled", "llama-400", "llama-5000"],
)
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_forecast_too_large_for_a_double_is_unparseable_not_a_crash(reply, encoding, scale):
    """A runaway digit sequence is a bad reply like any other: ReplyParseError (stored and
    counted), not an OverflowError or an infinite forecast."""
    with pytest.raises(ReplyParseError):
        tasks.parse_forecast(reply, encoding, Scaler(0.0, scale), 2)
    values = tasks.parse_forecast("15,16,", "llmtime_llama", Scaler(0.0, 1000.0), 2)
    np.testing.assert_allclose(values, [15.0, 16.0])


def test_decode_reads_a_long_but_finite_number():
    """300 nines over precision 3: 1e297 (finite), read as such."""
    values = decode("9" * 300 + ",1000,", "llmtime_llama", Scaler(), 2)
    assert values[0] == pytest.approx(1e297) and values[1] == 1.0
