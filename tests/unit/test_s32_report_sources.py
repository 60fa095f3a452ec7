"""The reading's other-prices paragraph (``report.sources``): one sentence per flagged system,
named as the rest of the reading names it (``systems.display_name``), in system order, its
reason escaped; nothing when no system is flagged or the snapshot predates the column."""

from __future__ import annotations

import re

import pandas as pd

from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.sources import source_note, source_warnings


def _data(provenance: pd.DataFrame, systems: pd.DataFrame | None = None) -> ReportData:
    empty = pd.DataFrame()
    if systems is None:
        systems = pd.DataFrame(
            {"system_id": ["random", "naive", "arima"], "display_name": ["Random", "Naive", "ARIMA"]}
        )  # fmt: skip
    return ReportData(
        "r2", "2026-01-01T00:00:00", {}, *([empty] * 6), systems, *([empty] * 3),
        run_provenance=provenance,
    )  # fmt: skip


def _provenance(reasons: dict[str, str | None]) -> pd.DataFrame:
    return pd.DataFrame(
        {"system_id": list(reasons), "source_inputs_reason": list(reasons.values())}
    )


def test_flagged_systems_are_named_by_display_name_in_system_order_with_their_reason():
    provenance = _provenance(
        {"random": "forecast in run r1 on 3 of 240 ticker-days since changed",
         "naive": None,
         "arima": "forecast in run r0 on <other> prices"}
    )  # fmt: skip
    assert source_warnings(provenance)["system_id"].tolist() == ["arima", "random"]
    html = source_note(_data(provenance))
    assert html == (
        '<p class="reading" id="sources">Not forecast on this run\'s prices: '
        "<b>ARIMA</b>: forecast in run r0 on &lt;other&gt; prices. "
        "<b>Random</b>: forecast in run r1 on 3 of 240 ticker-days since changed. "
        '<span class="source">Source: <code>marts.run_provenance</code>.</span></p>'
    )
    assert "Naive" not in re.sub(r"<[^>]+>", "", html)


def test_a_system_without_a_display_name_keeps_its_id_and_nothing_flagged_says_nothing():
    provenance = _provenance({"random": "forecast in run r1 on other prices", "naive": None})
    no_names = source_note(_data(provenance, systems=pd.DataFrame()))
    assert "<b>random</b>: forecast in run r1 on other prices." in no_names
    assert source_note(_data(_provenance({"random": None, "naive": None}))) == ""
    assert source_note(_data(pd.DataFrame())) == ""
    older = _provenance({"random": None}).drop(columns="source_inputs_reason")
    assert source_note(_data(older)) == ""  # a snapshot from before the column
