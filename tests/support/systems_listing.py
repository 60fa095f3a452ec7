"""The entries of `tsrate systems`' output: a line with the continuation lines below it
(indented by four more than it) joined on, each line stripped."""

from __future__ import annotations


def listing_entries(out: str) -> list[str]:
    """Each entry of ``out`` (`tsrate systems`' stdout) as one line: its lines stripped and
    joined by a space (where the listing wrapped at a space; a word is never split)."""
    entries: list[str] = []
    indents: list[int] = []
    for line in out.splitlines():
        indent = len(line) - len(line.lstrip())
        if entries and line.strip() and indent == indents[-1] + 4:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
            indents.append(indent)
    return entries


def squeezed(text: str) -> str:
    """``text`` without any whitespace."""
    return "".join(text.split())
