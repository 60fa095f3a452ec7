"""What a system's ``training_corpus`` may say, read the same way for a systems seed row and
for an import's ``--metadata training_corpus``.

Two prefixes mean something to the marts (window_leakage reads run_provenance's
``training_data``, which carries this text): ``none: <why>`` says the system trains on
nothing (it is fitted on, or reads, the window's own context), so none of its windows is in
its training data; ``exact: <what>`` says tsrate trained it and its registered checkpoint
(raw.model_checkpoints) gives the training tickers and period, which then decide. Any other
text is a statement of the corpus (the windows it may hold stay unknown unless a training
cutoff rules them out). A text that starts like a prefix but is not one exactly (``None:``,
``none -``, ``exact:`` with nothing after it) would be read as a plain statement, silently
losing what it meant to say: :func:`training_corpus_problem` names it.
"""

from __future__ import annotations

import re

#: The prefixes the marts read, each followed by one space and the statement.
PREFIXES = ("none", "exact")
#: A well-formed prefixed statement: exactly as window_leakage matches it ('none:%').
_PREFIXED = re.compile(r"^(none|exact): \S")
#: A text that starts like a prefix: the word, any case, then a colon, dash, semicolon or comma,
#: or nothing else.
_LIKE_PREFIX = re.compile(r"^\s*(none|exact)\s*(?:[:;,\-\u2013\u2014]|$)", re.IGNORECASE)
#: The forms a training_corpus may take, as an error names them.
ALLOWED_FORMS = (
    "'none: <why it trains on nothing>', 'exact: <the checkpoint tsrate trained>', or a "
    "statement of the corpus that starts with neither word"
)


def training_prefix(corpus: str | None) -> str | None:
    """'none' or 'exact' for a well-formed prefixed statement, else None."""
    found = _PREFIXED.match(corpus or "")
    return found.group(1) if found else None


def training_corpus_problem(corpus: str | None) -> str | None:
    """None when ``corpus`` (empty: not stated) is one of :data:`ALLOWED_FORMS`; else what is
    wrong with it, in words naming the allowed forms."""
    if not corpus or training_prefix(corpus) is not None or not _LIKE_PREFIX.match(corpus):
        return None
    return f"training_corpus {corpus[:40]!r} has a malformed prefix: write {ALLOWED_FORMS}"
