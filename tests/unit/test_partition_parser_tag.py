"""Forecasts parsed from a language model's reply are keyed by the parser's rules too.

The reply parser once read a line holding one decimal price (``101.25``) as list item 101
with value 25. Forecasts stored under those rules must not be reused: every system that
forecasts through :func:`tsrate.systems.llm_replies.parse_forecast` adds the parser's version to its
stored partitions' keys (not to its fingerprint, which keys the response cache, so the
recomputation reads the replies back instead of asking the model again). A system that does
not parse replies keeps the key it had.
"""

from __future__ import annotations

from tests.support.study_inputs import one_ticker_series, one_ticker_study
from tsrate.robustness.forecast.plan import input_key, plan_partitions
from tsrate.systems.hf_local import HfLocalSystem
from tsrate.systems.llm import LlmSettings, LlmSystem
from tsrate.systems.llm_replies import FORECAST_PARSER, parse_forecast


class Plain:
    """A system without a partition tag (the naive baselines, ARIMA, fracast ...)."""

    def fingerprint(self) -> str:
        return "plain;v1"


def test_the_parser_reads_one_decimal_price_per_line_as_that_price():
    assert parse_forecast("101.25\n101.50\n102.75", 3).tolist() == [101.25, 101.5, 102.75]


def test_an_llm_systems_partitions_are_keyed_by_the_parser_version():
    study = one_ticker_study("naive")
    series = {"AAA": one_ticker_series()}
    llm = LlmSystem("llm_x", LlmSettings(base_url="http://x", model="m", api_key_env="K"))
    (partition,) = plan_partitions(study, series, {"llm_x": (llm, {"P0"})})
    tagged = input_key(
        "llm_x", llm.fingerprint() + f";{FORECAST_PARSER}", study, series["AAA"], "P0"
    )
    untagged = input_key("llm_x", llm.fingerprint(), study, series["AAA"], "P0")
    assert partition.input_key == tagged != untagged
    assert FORECAST_PARSER not in llm.fingerprint()  # the response cache's key is unchanged
    assert HfLocalSystem.partition_tag == f";{FORECAST_PARSER}"  # local models parse alike


def test_a_system_without_a_tag_keeps_its_key():
    study = one_ticker_study("naive")
    series = {"AAA": one_ticker_series()}
    (partition,) = plan_partitions(study, series, {"plain": (Plain(), {"P0"})})
    assert partition.input_key == input_key("plain", "plain;v1", study, series["AAA"], "P0")
