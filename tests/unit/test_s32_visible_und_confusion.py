"""The understanding report's confusion matrices show a refusal apart from garbage:
und_confusion_matrix's '(abstained)' column (replies that declined every option) beside
'(unusable)' (unparseable replies, prompts without a reply), both after the options. The
cells are the hand-made mart rows; a snapshot built before the column renders as before."""

from __future__ import annotations

import re

import pandas as pd

from tsrate.suites.understanding.report import confusion_html

COLUMNS = ["system_id", "task", "feature", "truth", "predicted", "n_prompts"]


def matrix(html: str, title: str) -> tuple[list[str], list[list[str]]]:
    block = html.split(f"<h4>{title}</h4>")[1].split("</table>")[0]
    head = re.findall(r"<th>(.*?)</th>", block.split("</tr>")[0])
    rows = [
        re.findall(r"<t[hd]>(.*?)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", block)[1:]
    ]
    return head, rows


def test_s32_visible_abstentions_are_a_column_apart_after_the_options():
    """Truth yes: 2 yes, 1 no, 2 abstained, 2 unusable; truth no: 1 abstained, 4 no (the
    (abstained) / (unusable) names sort before the options as text: they come last)."""
    confusion = pd.DataFrame(
        [
            ("s", "detection", "trend", "yes", "yes", 2),
            ("s", "detection", "trend", "yes", "no", 1),
            ("s", "detection", "trend", "yes", "(abstained)", 2),
            ("s", "detection", "trend", "yes", "(unusable)", 2),
            ("s", "detection", "trend", "no", "(abstained)", 1),
            ("s", "detection", "trend", "no", "no", 4),
        ],
        columns=COLUMNS,
    )
    head, rows = matrix(confusion_html(confusion), "s · detection · trend")
    assert head == ["truth \\ answer", "no", "yes", "(abstained)", "(unusable)"]
    assert rows == [["no", "4", "0", "1", "0"], ["yes", "1", "2", "2", "2"]]


def test_s32_visible_an_old_snapshot_without_abstentions_keeps_unusable_last():
    confusion = pd.DataFrame(
        [
            ("s", "classification", "trend", "up", "(unusable)", 3),
            ("s", "classification", "trend", "up", "up", 1),
            ("s", "classification", "trend", "down", "down", 2),
        ],
        columns=COLUMNS,
    )
    head, rows = matrix(confusion_html(confusion), "s · classification · trend")
    assert head == ["truth \\ answer", "down", "up", "(unusable)"]
    assert rows == [["down", "2", "0", "0"], ["up", "0", "1", "3"]]
