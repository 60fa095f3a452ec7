"""The reasoning suite's prompts and reply parsing (tsrate.suites.reasoning.tasks and
encoding) at their edges, against the rules the docstrings state: the templates' digest
(12 hex characters of SHA-256 of the templates joined by NUL, part of every prompt hash),
more options than letters, the metadata sentence's four keys (else sorted JSON), and a
reply whose numbers overflow a double (an unparseable reply, never a crash); LLMTime's
scalers per family hand-worked from the reference's hyperparameters, its 0.01 floor, the
1e-6 added before truncation, the 1e7 cap on a scaled value, and the plot's 128-pixel side.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_data.json).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.suites.reasoning import sampling, tasks
from tsrate.suites.reasoning.encoding import (
    LLMTIME,
    ReplyParseError,
    Scaler,
    decode,
    encode_llmtime,
    encode_text,
    fit_scaler,
    plot_data_url,
)
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
    item = Item(
        task="qa_single", category="x", series=SERIES, question="?", options=options, answer_index=0
    )
    with pytest.raises(ValueError):
        tasks.choice_messages(item, "without_series", "plain")
    ten = Item(
        task="qa_single",
        category="x",
        series=SERIES,
        question="?",
        options=options[:10],
        answer_index=0,
    )
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
        "The time series was collected between a and b with a collection frequency of daily, "
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


# --------------------------------------------------------------------------- LLMTime


def test_llama_scaler_hand_worked():
    """llama_hypers: alpha 0.99, beta 0.3, not basic. Values 0..10: offset = 0 - 0.3 x 10
    = -3; x - offset runs 3..13, whose 0.99-quantile (linear) is 3 + 0.99 x 10 = 12.9."""
    _, scaler = encode_text("llmtime_llama", np.arange(11, dtype=float))
    assert scaler.offset == pytest.approx(-3.0, abs=1e-12)
    assert scaler.scale == pytest.approx(12.9, abs=1e-12)


def test_gpt4_scaler_is_basic_with_alpha_0_3():
    """gpt4_hypers: basic scaling, alpha 0.3: values 1..11 over their 0.3-quantile
    1 + 0.3 x 10 = 4, no offset."""
    _, scaler = encode_text("llmtime_gpt4", np.arange(1, 12, dtype=float))
    assert scaler.offset == 0.0 and scaler.scale == pytest.approx(4.0, abs=1e-12)


def test_basic_scale_is_floored_at_0_01():
    """The reference: max(quantile(|x|, alpha), .01)."""
    assert fit_scaler(np.array([0.001, -0.002, 0.0]), 0.3, 0.3, basic=True).scale == 0.01
    assert fit_scaler(np.array([0.0, 0.0]), 0.95, 0.3, basic=True).scale == 0.01


def test_one_value_can_be_scaled():
    """A single finite value: offset the value itself, a zero quantile, so scale 1; only
    no finite value at all is an error."""
    assert fit_scaler(np.array([5.0, np.nan]), 0.95, 0.3) == Scaler(5.0, 1.0)
    with pytest.raises(TsrateError, match="without finite values"):
        fit_scaler(np.array([np.nan]), 0.95, 0.3)


def test_truncation_adds_exactly_1e_6_before_the_floor():
    """1.0519999985 x 1000 = 1051.9999985: + 1e-6 stays below 1052 (written 1051), while a
    value 0.5e-9 below 1.052 (1051.9999995 + 1e-6) is written 1052."""
    llama = LLMTIME["llmtime_llama"]
    assert encode_llmtime(np.array([1.0519999985]), llama, Scaler()) == "1051,"
    assert encode_llmtime(np.array([1.0519999995]), llama, Scaler()) == "1052,"


@pytest.mark.parametrize("big", [1e7, 1.5e7])
def test_a_scaled_value_of_1e7_or_more_cannot_be_written(big):
    """LLMTime's max_val 1e7: any one value at or above it refuses the series."""
    with pytest.raises(TsrateError, match="reaches 1e"):
        encode_llmtime(np.array([1.0, big]), LLMTIME["llmtime_llama"], Scaler())
    encode_llmtime(np.array([1.0, 9_999_999.0]), LLMTIME["llmtime_llama"], Scaler())


def test_a_plot_is_a_256_pixel_plot_area_beside_a_72_pixel_label_panel_by_default():
    """The PNG's IHDR chunk (bytes 16-24 of the file): width and height, big-endian. The
    panel holds 5 characters at least: 4 + (5 x 12 - 2) + 4 + 6 pixels."""
    (url,) = plot_data_url(np.arange(20, dtype=float))
    png = base64.b64decode(url.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (72 + 256, 256)


# --------------------------------------------------------------------------- sampling


@pytest.mark.parametrize(
    ("encoding", "temperature"),
    [
        ("llmtime_gpt", 0.7),  # gpt3_hypers
        ("llmtime_llama", 1.0),  # llama_hypers
        ("llmtime_gpt4", 1.0),  # gpt4_hypers
        ("plain", 0.7),  # get_llmtime_predictions_data's default
        ("plot", 0.7),  # any other encoding: the reference's default
    ],
)
def test_sampling_temperatures_are_the_references(encoding, temperature):
    """The module docstring's table, from LLMTime's hyperparameters; 20 samples for the
    GPT models."""
    assert sampling.reference_temperature(encoding) == temperature
    assert sampling.PAPER_SAMPLES == 20


def test_a_sample_seed_is_the_first_four_digest_bytes_little_endian_less_the_top_bit():
    """31 bits of SHA-256 of the parts joined by '|' (stored samples are drawn again with
    the same seed on any machine)."""
    for parts in [("a", 1), ("item", "prompt", 19), ()]:
        digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
        (word,) = struct.unpack("<I", digest[:4])
        assert sampling.sample_seed(*parts) == word % 2**31


def test_the_median_of_samples_needs_a_matrix():
    """A flat list is not a list of forecasts: ValueError, not a scalar median."""
    with pytest.raises(ValueError, match="median of no samples"):
        sampling.median_forecast([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="median of no samples"):
        sampling.median_forecast(np.empty((0, 3)))
    np.testing.assert_array_equal(sampling.median_forecast([[1.0, 5.0], [3.0, 1.0]]), [2.0, 3.0])


@pytest.mark.parametrize(
    "samples",
    [np.ones((4, 3)), np.ones(3), np.empty((0, 1))],
    ids=["three-steps", "flat", "none"],
)
def test_crps_refuses_samples_that_do_not_match_one_observation(samples):
    """One observed value: samples must be M x 1 with M >= 1 (M x 3 would broadcast)."""
    with pytest.raises(ValueError, match="do not match the observations"):
        sampling.crps_ensemble(samples, [2.0])


# --------------------------------------------------------------------------- items


def test_an_item_is_named_by_16_hex_characters_of_what_a_system_sees():
    """item_id: SHA-256 (16 hex characters) of what a system sees or is scored against;
    the params, domain and source are not part of it, and items equal but for their
    params are equal (and hash alike), so one generated or imported twice is stored once."""
    item = Item(
        task="qa_single",
        category="x",
        series=SERIES,
        question="?",
        options=("a", "b"),
        answer_index=1,
        params={"line": 3},
    )
    again = Item(
        task="qa_single",
        category="x",
        series=SERIES,
        question="?",
        options=("a", "b"),
        answer_index=1,
        params={"line": 9},
        domain="retail",
        source="import",
    )
    assert len(item.item_id) == 16 and int(item.item_id, 16) >= 0
    assert again.item_id == item.item_id
    assert item == Item(**{**item.__dict__, "params": {"other": True}})
    assert len({item, Item(**{**item.__dict__, "params": {}})}) == 1
    assert Item(**{**item.__dict__, "answer_index": 0}).item_id != item.item_id


def test_chance_is_one_over_the_number_of_options():
    four = Item(task="qa_single", category="x", series=SERIES, options=tuple("abcd"))
    five = Item(task="qa_single", category="x", series=SERIES, options=tuple("abcde"))
    assert four.chance_level == 0.25 and five.chance_level == 0.2
    assert Item(task="forecast", category="x", series=SERIES, future=(1.0,)).chance_level is None
