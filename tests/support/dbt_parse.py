"""dbt target folders that start from a parse the session already made."""

from __future__ import annotations

import shutil
from pathlib import Path

#: dbt's saved parse of the project in a target folder (what its partial parse reads)
PARSE_STATE = "partial_parse.msgpack"


def seed_parse(state: Path, target: Path) -> Path:
    """A new dbt target folder that starts from the saved parse ``state``: its first build
    skips the full parse of the project (seconds), for a warehouse of the same file name
    and no ``--vars``. A copy of the project too: dbt compares its files by their path inside
    the project and their content, and parses again only those a test changed."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(state, target / PARSE_STATE)
    return target
