"""The text a reader sees in a suite verdict's HTML: each derived number
(``<span class="derived" data-derived=... data-value=...>``) as its printed text."""

from __future__ import annotations

import re

DERIVED = re.compile(r'<span class="derived" data-derived="\w+" data-value="[^"]*">([^<]*)</span>')


def unmarked(html: str) -> str:
    """``html`` with every derived-number span replaced by the text it prints."""
    return DERIVED.sub(r"\1", html)
