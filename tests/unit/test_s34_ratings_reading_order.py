"""The Ratings section's reading order (tsrate.robustness.report.ratings): the default
outcome's robustness table and the accuracy table come first and open, whatever the number
of systems; the alternative outcomes' tables follow, collapsed, each behind a summary that
names its outcome and says it is an alternative, after one note on what they are.

Built from the hand-made marts of tests/support/ten_systems.py (ten systems, long names)
with the robustness rows copied to two other outcomes."""

from __future__ import annotations

import html as markup
import re

import pandas as pd

from tests.support.report_frames import two_systems
from tests.support.ten_systems import ten_systems
from tsrate.robustness.report.data import OUTCOME_LABELS, ROBUSTNESS_METRICS
from tsrate.robustness.report.ratings import rating_tables_section
from tsrate.robustness.report.render import build_report

ALTERNATIVES = ("relative_max_abs_residual", "wql")


def with_alternatives(data, outcomes=ALTERNATIVES):
    """``data`` with its robustness rating rows copied to ``outcomes`` (other outcomes)."""
    robust = data.ratings[data.ratings["metric"].isin(ROBUSTNESS_METRICS)]
    data.outcome_ratings = pd.concat(
        [robust.assign(outcome=o) for o in outcomes], ignore_index=True
    )
    return data


def toggles(html: str) -> list[tuple[bool, str]]:
    """(open?, summary text without tags) of every <details> of ``html``, in page order."""
    found = re.findall(r"<details( open)?><summary>(.*?)</summary>", html, re.S)
    return [(bool(flag), markup.unescape(re.sub(r"<[^>]+>", "", t))) for flag, t in found]


def test_ten_systems_read_the_default_outcome_and_accuracy_first_and_open():
    data = with_alternatives(ten_systems())
    seen = toggles(rating_tables_section(data))
    assert [is_open for is_open, _ in seen] == [True, True, False, False]
    assert seen[0][1].startswith(f"Robustness — {OUTCOME_LABELS['max_abs_residual']}")
    assert seen[1][1].startswith("Accuracy (")
    for (_, text), outcome in zip(seen[2:], sorted(ALTERNATIVES), strict=True):
        label = OUTCOME_LABELS[outcome]
        assert text.startswith(f"Robustness — {label}"), text
        assert "alternative outcome" in text


def test_the_alternatives_note_sits_between_the_main_tables_and_the_collapsed_ones():
    html = rating_tables_section(with_alternatives(ten_systems()))
    note = html.index('class="note alternatives"')
    toggle_at = [m.start() for m in re.finditer(r"<details", html)]
    assert toggle_at[1] < note < toggle_at[2]
    assert "Alternative outcomes, collapsed" in html[note : toggle_at[2]]
    assert "the paper's outcome rated above" in html[note : toggle_at[2]]


def test_each_row_count_in_a_summary_is_that_tables_rows():
    html = rating_tables_section(with_alternatives(ten_systems()))
    for block in re.findall(r"<details.*?</details>", html, re.S):
        said = int(re.search(r"\((?:alternative outcome, )?(\d+) rows\)", block).group(1))
        assert said == block.count("<tr>") - 1  # less the header row


def test_no_alternative_outcome_means_no_alternatives_note():
    html = rating_tables_section(two_systems())
    assert "note alternatives" not in html and [o for o, _ in toggles(html)] == [True, True]


def test_the_whole_report_keeps_the_order():
    report = build_report(with_alternatives(ten_systems()), generated_at="now")
    section = re.search(r'<section id="ratings">.*?</section>', report.html, re.S).group(0)
    assert [o for o, _ in toggles(section)] == [True, True, False, False]
