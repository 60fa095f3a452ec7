"""Files written whole: a reader sees the old file or the new one, never a part of it."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path.

    The text goes to a temporary file beside ``path`` (same folder, so the rename stays on one
    filesystem), named per writer so concurrent writers of one path do not clash, which is
    then renamed over ``path`` (``os.replace``: atomic on POSIX and Windows). If anything
    fails, the error propagates, ``path`` keeps its old content and the temporary file is
    removed. The folder is created when missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
