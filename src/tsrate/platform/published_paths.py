"""Where the published snapshot and its Parquet link are, light enough for a command's
pre-flight check (no DuckDB, no pandas): :mod:`tsrate.platform.publish` writes them."""

from __future__ import annotations

import os
from pathlib import Path

from tsrate import TsrateError

SNAPSHOT_NAME = "tsrate.duckdb"
PARQUET_LINK = "parquet"


def published_path(warehouse: Path) -> Path:
    """``<warehouse folder>/published/tsrate.duckdb`` (override with TSRATE_PUBLISHED)."""
    override = os.environ.get("TSRATE_PUBLISHED")
    return Path(override) if override else Path(warehouse).parent / "published" / SNAPSHOT_NAME


def parquet_path(snapshot: Path) -> Path:
    """``published/parquet``: the link BI tools read Parquet through (beside the snapshot)."""
    return Path(snapshot).parent / PARQUET_LINK


def check_publish(warehouse: str | os.PathLike) -> None:
    """:func:`check_parquet_link` for the snapshot a publish of ``warehouse`` writes: the
    pre-flight check of every command and flow that publishes at its end."""
    check_parquet_link(published_path(Path(warehouse)))


def check_parquet_link(snapshot: Path) -> None:
    """Refuse, before a command or flow that publishes does any work, where a real folder
    (or file) stands where the ``published/parquet`` link belongs: the publish at its end
    would find it only when it swaps the link in (:func:`tsrate.platform.publish.publish`),
    after every forecast and the build."""
    link = parquet_path(snapshot)
    if link.exists() and not link.is_symlink():
        kind = "folder" if link.is_dir() else "file"
        raise TsrateError(
            f"{link} is a real {kind}, not the link tsrate publishes Parquet through, so the "
            f"publish at the end would fail; move it away (e.g. mv {link} {link}.old) and run "
            "again"
        )
