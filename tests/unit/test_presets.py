"""``tsrate run --preset paper``: the paper's study, its one-line offline refusal, its file path.

The refusal is measured in a fresh interpreter (its text, its time and what it imported); the
price check is asked about a synthetic price file and a warehouse, never the network.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsrate.config import project_dir
from tsrate.robustness.presets import (
    PRESETS,
    PresetPricesError,
    missing_prices,
    preset_values,
    require_preset_prices,
    resolve_preset,
)
from tsrate.robustness.study_inputs import read_seed

PAPER_TICKERS = ["META", "GOOG", "PFE", "MRK", "WFC", "C"]


def _price_file(path: Path, tickers: list[str], start: str, end: str) -> Path:
    days = pd.bdate_range(start, end)
    rng = np.random.default_rng(0)
    frames = [
        pd.DataFrame(
            {
                "ticker": t,
                "date": days.strftime("%Y-%m-%d"),
                "close": 100 + np.cumsum(rng.normal(0, 1, len(days))),
            }
        )
        for t in tickers
    ]
    pd.concat(frames).to_csv(path, index=False)
    return path


def test_the_paper_preset_is_the_papers_study():
    # Section 5.1.3 (tickers, period), 4.2.2 (t = 80, T = 20), 5.1.1-5.1.2 (systems)
    paper = PRESETS["paper"]
    assert paper["study_tickers"] == PAPER_TICKERS
    assert (paper["study_start"], paper["study_end"]) == ("2023-03-28", "2024-04-22")
    assert (paper["context_length"], paper["horizon"]) == (80, 20)
    assert paper["perturbations"] == [f"P{i}" for i in range(7)]
    assert {"arima", "random", "biased"} <= set(paper["systems"])
    seed_systems = {
        row["system_id"]: row for row in read_seed(project_dir() / "seeds" / "systems.csv")
    }
    assert all(seed_systems[s]["paper_symbol"] for s in paper["systems"])  # only the paper's
    # every paper ticker has a companies row (the study check needs it); the Biased offsets
    # are the paper's 0 and 200 for the two technology companies
    companies = {r["ticker"]: r for r in read_seed(project_dir() / "seeds" / "companies.csv")}
    assert all(t in companies for t in PAPER_TICKERS)
    assert (companies["META"]["biased_offset"], companies["GOOG"]["biased_offset"]) == ("0", "200")


def test_flags_win_over_the_preset():
    values = preset_values("paper", {"study_tickers": "PFE,MRK", "horizon": None})
    assert values["study_tickers"] == "PFE,MRK"
    assert values["horizon"] == 20


def test_a_price_file_satisfies_the_check(tmp_path):
    values = preset_values("paper")
    warehouse = tmp_path / "absent.duckdb"
    short = _price_file(tmp_path / "short.csv", PAPER_TICKERS, "2023-03-28", "2023-06-30")
    full = _price_file(tmp_path / "full.csv", PAPER_TICKERS, "2023-03-28", "2024-04-22")
    # ~68 trading days < 80 + 20: still missing; the whole period: nothing missing
    assert missing_prices(values, "file", short, warehouse) == PAPER_TICKERS
    assert missing_prices(values, "file", full, warehouse) == []
    require_preset_prices("paper", values, "file", full, warehouse)
    with pytest.raises(PresetPricesError, match="META, GOOG, PFE, MRK, WFC, C"):
        require_preset_prices("paper", values, "auto", None, warehouse)
    # Yahoo cannot be checked offline: the run itself reports a failed download
    assert missing_prices(values, "yahoo", None, warehouse) == []


def test_named_systems_are_kept_and_the_study_check_passes(tmp_path):
    from tsrate.robustness.study import check_study

    full = _price_file(tmp_path / "full.csv", PAPER_TICKERS, "2023-03-28", "2024-04-22")
    warehouse = tmp_path / "absent.duckdb"
    values = resolve_preset(
        "paper", {"systems": "random,biased"}, "file", full, warehouse, warn=None
    )
    assert values["systems"] == "random,biased"
    assert check_study(values, "file", full, warehouse=warehouse) == []


def test_unavailable_optional_systems_are_left_out_and_named(tmp_path, monkeypatch):
    from tsrate.systems import registry
    from tsrate.systems.base import Availability
    from tsrate.systems.registry import SystemInfo

    available = {"arima", "random", "biased", "vit_num_spec_precovid"}
    infos = [
        SystemInfo(s, s, ("P0",), "m", Availability(s in available, f"{s} reason"))
        for s in PRESETS["paper"]["systems"]
    ]
    monkeypatch.setattr(registry, "system_infos", lambda study, companies=None: infos)
    full = _price_file(tmp_path / "full.csv", PAPER_TICKERS, "2023-03-28", "2024-04-22")
    said: list[str] = []
    values = resolve_preset("paper", {}, "file", full, tmp_path / "absent.duckdb", said.append)
    assert values["systems"] == ["arima", "random", "biased", "vit_num_spec_precovid"]
    left_out = [line for line in said if line.startswith("preset: leaving out")]
    assert [line.split()[3].rstrip(":") for line in left_out] == [
        "chronos",
        "moment",
        "vit_num_spec_covid",
    ]
    assert "chronos reason" in left_out[0]
