"""A warehouse whose published ``parquet`` link a user replaced by a real folder (or file),
as the pre-flight check of every publisher must refuse it: the warehouse path set in the
environment, the copied-over folder, the refusal expected, and every file under a folder
(to show a refused command wrote nothing)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.published_runs import warehouse_env


def env_warehouse(tmp_path: Path, monkeypatch) -> Path:
    """``tmp_path/warehouse/tsrate.duckdb`` (its folder made, the file not) as
    ``TSRATE_WAREHOUSE``, with no ``TSRATE_PUBLISHED`` override: the snapshot is the default
    one beside it."""
    path = tmp_path / "warehouse" / "tsrate.duckdb"
    path.parent.mkdir()
    return warehouse_env(path, monkeypatch)


def copied_over(snapshot_folder: Path, kind: str = "folder") -> Path:
    """``snapshot_folder/parquet`` as a real folder holding a copied Parquet file (or, with
    ``kind="file"``, a plain file) where the published link belongs; returns it."""
    snapshot_folder.mkdir(parents=True, exist_ok=True)
    link = snapshot_folder / "parquet"
    if kind == "folder":
        (link / "marts").mkdir(parents=True)
        (link / "marts" / "ratings.parquet").write_bytes(b"PAR1 copied by hand")
    else:
        link.write_text("not a link")
    return link


def refusal(link: Path, kind: str = "folder") -> str:
    """The one-line refusal of a real ``kind`` at ``link`` (without the CLI's prefix)."""
    return (
        f"{link} is a real {kind}, not the link tsrate publishes Parquet through, so the "
        f"publish at the end would fail; move it away (e.g. mv {link} {link}.old) and run again"
    )


def files(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` with its content (a link: its target; a folder: "dir")."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = os.readlink(path)
        elif path.is_file():
            found[str(path)] = path.read_bytes()
        else:
            found[str(path)] = "dir"
    return found
