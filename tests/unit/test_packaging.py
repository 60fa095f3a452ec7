"""What a wheel of tsrate ships: setuptools installs only the packages pyproject.toml lists
(``[tool.setuptools] packages``), so a new folder of code or prompt templates left out of
that list works from the checkout (and in the editable install CI uses) but is missing from
a regular install. Every folder under src/tsrate and flows/ that holds a module or a data
file must be listed, and every listed package must exist; each prompt folder's templates are
package data."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folders() -> set[str]:
    found = set()
    for top, base in ((ROOT / "src" / "tsrate", ROOT / "src"), (ROOT / "flows", ROOT)):
        for folder in [top, *top.rglob("*")]:
            if not folder.is_dir() or folder.name == "__pycache__":
                continue
            if any(f.is_file() and not f.name.endswith(".pyc") for f in folder.iterdir()):
                found.add(".".join(folder.relative_to(base).parts))
    return found


def test_every_folder_of_code_or_data_is_a_listed_package_and_no_listed_one_is_missing():
    listed = set(_config()["packages"])
    folders = _folders()
    assert "tsrate.systems.prompts" in folders  # the walk sees data-only folders
    assert folders - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - folders == set(), "these listed packages have no folder"


def test_every_prompt_folders_templates_are_package_data():
    data = _config()["package-data"]
    for folder in sorted(f for f in _folders() if f.endswith(".prompts")):
        files = (ROOT / "src" / Path(*folder.split("."))).glob("*")
        suffixes = {p.suffix for p in files if p.is_file()}
        assert suffixes == {".txt"}, folder
        assert data.get(folder) == ["*.txt"], folder
