"""The lines of ``tsrate systems``, each within :data:`SYSTEMS_WIDTH` characters.

A system's entry is one line when it fits: its id, availability, accepted perturbations,
display name and why it is (un)available. A longer one goes on at its spaces onto
continuation lines indented by :data:`CONTINUED`; an unavailable system's first line ends
with what is missing (its reason's first clause) and the setup hint starts a line of its
own. Only whitespace changes: the words are those of the one long line. A word is never
split: one longer than the room left (a path, to be copied whole) goes on a line of its own,
even past the width.
"""

from __future__ import annotations

import textwrap

#: the widest line of ``tsrate systems`` (as of ``tsrate studies``)
SYSTEMS_WIDTH = 100
#: the indent of an entry's continuation lines
CONTINUED = "    "


def wrapped(text: str, indent: str = "", more: str = CONTINUED) -> list[str]:
    """``text`` wrapped to :data:`SYSTEMS_WIDTH` at its spaces, the first line indented by
    ``indent``, the next ones by ``indent`` and ``more``; a word longer than the room stays
    whole, alone on its line."""
    return textwrap.wrap(
        text,
        SYSTEMS_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + more,
        break_on_hyphens=False,
        break_long_words=False,
    )


def first_clause_end(reason: str) -> int:
    """Where ``reason``'s first clause ends: just past its first ``: `` or ``; `` outside
    brackets and back-quotes (the length of ``reason`` if none)."""
    depth, quoted = 0, False
    for at, char in enumerate(reason):
        if char == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and reason.startswith((": ", "; "), at):
            return at + 1
    return len(reason)


def system_lines(head: str, reason: str, available: bool) -> list[str]:
    """A system's entry: ``head`` (id, availability, perturbations, display name and its
    colon), then ``reason``; one line when it fits within :data:`SYSTEMS_WIDTH`."""
    line = f"{head} {reason}"
    if len(line) <= SYSTEMS_WIDTH:
        return [line]
    if available:
        return wrapped(line)
    end = first_clause_end(reason)
    hint = reason[end:].strip()
    return wrapped(f"{head} {reason[:end]}") + (wrapped(hint, CONTINUED, "") if hint else [])
