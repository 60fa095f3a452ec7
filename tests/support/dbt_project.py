"""Copies of the dbt project, and dbt target folders that start from a parse the session
already made."""

from __future__ import annotations

import shutil
from pathlib import Path

from tsrate.config import project_dir

#: dbt's saved parse of the project in a target folder (what its partial parse reads)
PARSE_STATE = "partial_parse.msgpack"
#: what dbt reads of the project: its two files and its folders of models, macros and seeds
PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
PROJECT_FOLDERS = ("models", "python_models", "macros", "seeds")


def copy_project(dest: Path, *extra_folders: str) -> Path:
    """A copy of the dbt project at ``dest`` (:data:`PROJECT_FILES`, :data:`PROJECT_FOLDERS`
    and those of ``extra_folders`` that exist, e.g. ``tests/dbt``) for a test to edit; point
    ``TSRATE_PROJECT_DIR`` at it."""
    source = project_dir()
    dest.mkdir(parents=True)
    for name in PROJECT_FILES:
        shutil.copy(source / name, dest / name)
    for name in (*PROJECT_FOLDERS, *extra_folders):
        if (source / name).exists():
            shutil.copytree(source / name, dest / name)
    return dest


def seed_parse(state: Path, target: Path) -> Path:
    """A new dbt target folder that starts from the saved parse ``state``: its first build
    skips the full parse of the project (seconds), for a warehouse of the same file name
    and no ``--vars``. A copy of the project too: dbt compares its files by their path inside
    the project and their content, and parses again only those a test changed."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(state, target / PARSE_STATE)
    return target
