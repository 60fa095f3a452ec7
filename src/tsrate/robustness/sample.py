"""The bundled price sample (skfolio's S&P 500 file), located without importing skfolio or
pandas, so the study check that reads it stays light."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def skfolio_sample_path() -> Path | None:
    """skfolio's bundled ``sp500_dataset.csv.gz``, located without importing skfolio."""
    spec = importlib.util.find_spec("skfolio")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "datasets" / "data" / "sp500_dataset.csv.gz"
        if path.exists():
            return path
    return None
