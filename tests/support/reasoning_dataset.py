"""Rows of a small file in the public reasoning dataset's JSONL schema (TSQA): five series
rows, two questions linked to them by uuid, a blank line and a two-series question. The
import tests and the suite tests that start from an imported file use it. No test here."""

from __future__ import annotations

import json


def series_row(k: int, length: int = 20) -> dict:
    return {
        "uuid": f"s{k}",
        "description": f"Scenario {k}: visitors at museum {k} rise after a new exhibit opens.",
        "description_short": f"Museum {k} visitors",
        "description_tiny": f"Museum {k}",
        "characteristics": ["rises after the opening", "weekly cycle"],
        "metadata": {
            "start": "2024-01-01",
            "end": "2024-01-20",
            "units": "visitors",
            "frequency": "daily",
        },
        "series": [float(100 + k + t) for t in range(length)],
        "category": "Tourism",
    }


def question_row(k: int) -> dict:
    return {
        "uuid": f"s{k}",
        "category": "counterfactual",
        "question": "What if the exhibit had not opened?",
        "options": ["fewer visitors", "more visitors", "no change", "zero visitors"],
        "answer_index": 0,
    }


def two_series_row(k: int) -> dict:
    row = question_row(k)
    row.update(
        {
            "category": "difference",
            "counterfactual": "What if the museum had been closed on Mondays?",
            "new_series": [float(90 + t) for t in range(20)],
        }
    )
    return row


def write(path, rows) -> str:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def good_rows() -> list:
    return [
        *(series_row(k) for k in range(5)),
        question_row(0),
        question_row(3),
        "",
        two_series_row(1),
    ]
