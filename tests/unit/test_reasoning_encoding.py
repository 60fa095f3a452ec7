"""Reasoning suite: LLMTime and plain encodings (golden strings), decoding, choice parsing."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.suites.reasoning.encoding import (
    LLMTIME,
    ReplyParseError,
    Scaler,
    decode,
    encode_llmtime,
    encode_text,
    fit_scaler,
)
from tsrate.suites.reasoning.tasks import parse_choice

IDENTITY = Scaler()


def test_llmtime_golden_strings_per_family():
    values = np.array([1.234, 4.567, 0.05, -2.5])
    gpt = encode_llmtime(values, LLMTIME["llmtime_gpt"], IDENTITY)
    llama = encode_llmtime(values, LLMTIME["llmtime_llama"], IDENTITY)
    assert gpt == " 1 2 3 4 , 4 5 6 7 , 5 0 , - 2 5 0 0 ,"
    assert llama == "1234,4567,50,-2500,"


def test_paper_example_truncates_to_fixed_precision():
    # Appendix A.1: 1.0522, 1.0178, 1.0324 -> 1052, 1017, 1032 (precision 3, truncation)
    text = encode_llmtime(np.array([1.0522, 1.0178, 1.0324]), LLMTIME["llmtime_llama"], IDENTITY)
    assert text == "1052,1017,1032,"


def test_scaler_matches_llmtime_reference_formula():
    history = np.array([10.0, 12.0, 11.0, 15.0, 30.0, 14.0])
    encoding = LLMTIME["llmtime_gpt"]
    scaler = fit_scaler(history, encoding.alpha, encoding.beta)
    offset = history.min() - 0.3 * (history.max() - history.min())
    assert scaler.offset == pytest.approx(offset)
    assert scaler.scale == pytest.approx(np.quantile(history - offset, 0.95))
    basic = fit_scaler(history, 0.9, 0.3, basic=True)
    assert basic.offset == 0 and basic.scale == pytest.approx(np.quantile(np.abs(history), 0.9))
    assert fit_scaler(np.zeros(5), 0.95, 0.3).scale == 1.0  # zero quantile -> 1


@pytest.mark.parametrize("name", ["llmtime_gpt", "llmtime_llama", "plain"])
def test_round_trip_within_precision(name):
    values = np.array([101.5, 99.25, 250.0, 3.75, 180.125])
    text, scaler = encode_text(name, values)
    decoded = decode(text, name, scaler, len(values))
    step = scaler.scale * 1e-3 if name != "plain" else 0.005
    np.testing.assert_allclose(decoded, values, atol=step + 1e-9)


def test_decode_is_strict():
    scaler = IDENTITY
    # more values than needed: the first count are kept
    np.testing.assert_allclose(
        decode("1234,567,89,10,", "llmtime_llama", scaler, 2), [1.234, 0.567]
    )
    np.testing.assert_allclose(decode(" 1 2 , 3 4 .", "llmtime_gpt", scaler, 2), [0.012, 0.034])
    with pytest.raises(ReplyParseError, match="only 2 of 3 values"):
        decode("1234,567,", "llmtime_llama", scaler, 3)
    with pytest.raises(ReplyParseError, match="value 2: '12.5' is not an encoded number"):
        decode("100,12.5,3,", "llmtime_llama", scaler, 3)
    with pytest.raises(ReplyParseError, match="value 1: 'Sure' is not"):
        decode("Sure, here: 1,2,3", "llmtime_llama", scaler, 3)
    with pytest.raises(ReplyParseError, match="empty reply"):
        decode("  ", "plain", scaler, 1)
    with pytest.raises(TsrateError, match="unknown text encoding"):
        decode("1", "binary", scaler, 1)


def test_choice_parsing_is_strict():
    assert parse_choice("B", 4) == 1
    assert parse_choice("(c)", 4) == 2
    assert parse_choice("Answer: D", 4) == 3
    assert parse_choice("The answer is **A**.", 4) == 0
    assert parse_choice("<think>A or B?</think>B.", 4) == 1
    assert parse_choice("C. about 547 units", 4) == 2
    with pytest.raises(ReplyParseError, match="several options named: A, C"):
        parse_choice("The answer is A. No wait, the answer is C.", 4)
    with pytest.raises(ReplyParseError, match="no option letter"):
        parse_choice("I think the series rises.", 4)
    with pytest.raises(ReplyParseError, match="no option letter"):
        parse_choice("E", 4)  # only A-D exist
    with pytest.raises(ReplyParseError, match="empty reply"):
        parse_choice(None, 4)


def test_nan_is_written_as_the_reference_missing_string_and_left_out_of_the_scaler():
    values = np.array([1.234, np.nan, -2.5])
    assert (
        encode_llmtime(values, LLMTIME["llmtime_gpt"], IDENTITY) == " 1 2 3 4 , Nan , - 2 5 0 0 ,"
    )
    assert encode_llmtime(values, LLMTIME["llmtime_llama"], IDENTITY) == "1234, Nan,-2500,"
    with_nan, scaler = encode_text("llmtime_gpt", np.array([1.0, np.nan, 3.0, 5.0]))
    assert scaler == fit_scaler(np.array([1.0, 3.0, 5.0]), 0.95, 0.3)
    assert " Nan ," in with_nan
    with pytest.raises(TsrateError, match="infinite"):
        encode_llmtime(np.array([1.0, np.inf]), LLMTIME["llmtime_gpt"], IDENTITY)
    with pytest.raises(ReplyParseError):  # a Nan in a reply is no number: unparseable
        decode("1234, Nan,", "llmtime_llama", IDENTITY, 2)


def test_the_papers_gpt4_settings_hand_worked():
    # basic scaling: divide by the 0.3-quantile of |x|: quantile([10, 20, 30, 40], 0.3) = 19
    values = np.array([10.0, 20.0, 30.0, 40.0])
    text, scaler = encode_text("llmtime_gpt4", values)
    assert scaler == Scaler(0.0, 19.0)
    # 10/19 = 0.5263 -> 526, 20/19 = 1.0526 -> 1052, 30/19 = 1.5789 -> 1578, 40/19 -> 2105
    assert text == "526, 1052, 1578, 2105, "
    assert encode_llmtime(np.array([-0.5]), LLMTIME["llmtime_gpt4"], IDENTITY) == "-500, "
    decoded = decode("2105, 2631, 3157,", "llmtime_gpt4", scaler, 3)
    np.testing.assert_allclose(decoded, [2.105 * 19, 2.631 * 19, 3.157 * 19])


def test_choice_prompts_default_to_the_reference_qa_scripts_settings():
    """The reference's GPT QA scripts (src/models/gpt_all.py, src/data/gpt_all_2TS.py of
    behavioral-data/TSandLanguage) scale with basic=True, alpha 0.3, prec 3, time_sep ", ",
    bit_sep "", minus_sign "-"."""
    from tsrate.suites.reasoning.answerers import LanguageModelAnswerer
    from tsrate.suites.reasoning.encoding import DEFAULT_CHOICE_ENCODING

    assert DEFAULT_CHOICE_ENCODING == "llmtime_gpt4"
    chosen = LLMTIME[DEFAULT_CHOICE_ENCODING]
    assert (chosen.basic, chosen.alpha, chosen.precision) == (True, 0.3, 3)
    assert (chosen.value_separator, chosen.digit_separator, chosen.minus_sign) == (", ", "", "-")
    defaults = LanguageModelAnswerer.__init__.__defaults__
    # choice and forecast encodings; then one greedy forecast reply (no sampling)
    assert defaults == ("llmtime_gpt4", "llmtime_gpt4", 1, None)
    assert "llmtime_gpt" in LLMTIME  # the earlier offset default stays selectable


def test_the_default_forecast_encoding_keeps_the_ratios_of_the_papers_example():
    """Appendix A.1: 20.88, 20.20, 20.48 -> 1052, 1017, 1032, ratios kept (1052 / 1017 =
    20.88 / 20.20 to 3 digits): the paper's GPT-4 forecasting ran with basic scaling (the
    reference's gpt-4.yaml: basic True, alpha 0.3), which only divides: 1025, 991, 1005
    on these three values alone. llmtime_gpt's offset scaler writes 1047, 241, 573: the
    first looks 4.3 times the second, not 1.03 times.
    """
    import argparse

    from tsrate.suites.reasoning.answerers import LanguageModelAnswerer
    from tsrate.suites.reasoning.cli import add_run_arguments
    from tsrate.suites.reasoning.encoding import DEFAULT_FORECAST_ENCODING
    from tsrate.suites.reasoning.suite import RunConfig

    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    defaults = {
        parser.parse_args([]).forecast_encoding,
        RunConfig().forecast_encoding,
        LanguageModelAnswerer.__init__.__defaults__[1],
    }
    assert defaults == {DEFAULT_FORECAST_ENCODING}
    values = np.array([20.88, 20.20, 20.48])
    text, scaler = encode_text(DEFAULT_FORECAST_ENCODING, values)
    assert scaler.offset == 0.0
    written = np.array([int(v) for v in text.replace(" ", "").strip(",").split(",")], float)
    np.testing.assert_allclose(written / written[0], values / values[0], atol=2e-3)
    # the paper's own numbers: with its scale (20.88 / 1.0522) the same three digits
    paper = encode_text(DEFAULT_FORECAST_ENCODING, values, Scaler(0.0, 20.88 / 1.0522))[0]
    assert paper.replace(" ", "").split(",")[:3] == ["1052", "1017", "1032"]
