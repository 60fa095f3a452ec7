"""The reading's warnings (fallback windows, copied windows, other prices) are part of the
reading's section, after its paragraph and source line, in that order, whether the run has
ratings or not; and the page holds each once, never loose after the section's end."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser

import pandas as pd

from tests.support.report_frames import two_systems
from tests.support.report_text import RUN, SEED, rating_rows, report_data, three_systems
from tsrate.robustness.report.reading import reading_paragraph
from tsrate.robustness.report.render import build_report

REASON = "forecast in run r1 on other prices: 2 of 10 ticker-days changed since"


class Placed(HTMLParser):
    """Each element with an id: the id of the section it sits in (None: none), in page
    order; and every class of ``<p>`` met inside ``<section id="reading">``, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str | None] = []
        self.placed: list[tuple[str, str | None]] = []
        self.reading: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        elif attrs.get("id"):
            self.placed.append((attrs["id"], self.sections[-1] if self.sections else None))
        if tag == "p" and self.sections and self.sections[-1] == "reading":
            self.reading.append(attrs.get("id") or attrs.get("class") or "")

    def handle_endtag(self, tag):
        if tag == "section":
            self.sections.pop()


def placed(html: str) -> Placed:
    parser = Placed()
    parser.feed(html)
    return parser


def flagged(data, systems=SEED):
    """``data`` with a fallback system (``systems[0]``), a copying one (``systems[1]``) and one
    rated from forecasts on other prices (the last)."""
    failures = pd.DataFrame(
        [(systems[0], "P0", 40, 3, 0), (systems[1], "P0", 40, 0, 8)],
        columns=["system_id", "perturbation_id", "n_windows", "n_fallback_windows",
                 "n_copied_windows"],
    ).assign(run_id=RUN)  # fmt: skip
    provenance = pd.DataFrame(  # as marts.run_provenance has it
        [dict(system_id=s, tsrate_version="0.1", git_revision="abc", git_reason=None,
              dbt_version="1.9", duckdb_version="1.2", price_rows=100,
              price_rows_fingerprint="f" * 64, partitions=4, partitions_fingerprint="e" * 64,
              training_data=None, training_data_reason="not trained",
              source_inputs_reason=REASON if s == systems[-1] else None) for s in systems]
    )  # fmt: skip
    return dataclasses.replace(data, forecast_failures=failures, run_provenance=provenance)


def test_the_warnings_follow_the_reading_inside_its_section():
    html = reading_paragraph(flagged(report_data(rating_rows(three_systems()))))
    seen = placed(html)
    assert seen.reading == ["reading", "source", "fallbacks", "copies", "sources"]
    assert html.endswith("</section>") and html.count("<section") == 1


def test_a_run_without_ratings_keeps_its_warnings_in_the_reading():
    data = flagged(report_data(rating_rows(three_systems())))
    empty = dataclasses.replace(data, system_summary=data.system_summary.iloc[0:0])
    seen = placed(reading_paragraph(empty))
    assert seen.reading == ["", "fallbacks", "copies", "sources"]  # "No ratings in this run."


def test_the_page_holds_each_warning_once_inside_the_reading():
    page = build_report(flagged(two_systems(), ["good", "bad"]), "now").html
    where = [(i, s) for i, s in placed(page).placed if i in ("fallbacks", "copies", "sources")]
    assert where == [("fallbacks", "reading"), ("copies", "reading"), ("sources", "reading")]
