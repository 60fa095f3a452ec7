"""Named study presets: ``tsrate run --preset paper``.

A preset is a set of study vars (the same ones as ``--tickers``, ``--start`` ... set), laid
under the CLI's own flags: a flag given on the command line wins over the preset.

``paper`` is the study of the robustness paper (Sections 5.1.1-5.1.3): META, GOOG (Technology),
PFE, MRK (Pharmaceuticals), WFC, C (Financials), daily closes 2023-03-28 .. 2024-04-22,
context n = 80 and horizon d = 20 (Section 4.2.2: t = 80, T = 20), perturbations P0-P6, and
the paper's systems that tsrate has: ARIMA, Random and Biased always, Chronos, MOMENT and
the two ViT-num-spec variants where they are available here. Gemini and Phi-3 (paid or
self-hosted endpoints) are left to ``--systems``.

Before anything else the preset checks that the study's prices exist (the warehouse, the
bundled sample, or the ``--file`` the run ingests): the bundled S&P sample ends on
2022-12-28 and lacks META, GOOG, WFC and C, so offline and without a file the preset refuses
in one line, naming the missing prices and how to supply them. Only the csv module, duckdb
and (for ``--file``) pandas are imported; no Prefect, dbt or model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tsrate import TsrateError

#: the paper's systems that tsrate can always run
PAPER_CORE_SYSTEMS = ("arima", "random", "biased")
#: the paper's systems that join when available here (weights, environments)
PAPER_OPTIONAL_SYSTEMS = ("chronos", "moment", "vit_num_spec_precovid", "vit_num_spec_covid")

PRESETS: dict[str, dict[str, Any]] = {
    "paper": {
        "study_tickers": ["META", "GOOG", "PFE", "MRK", "WFC", "C"],
        "study_start": "2023-03-28",
        "study_end": "2024-04-22",
        "context_length": 80,
        "horizon": 20,
        "perturbations": ["P0", "P1", "P2", "P3", "P4", "P5", "P6"],
        "systems": [*PAPER_CORE_SYSTEMS, *PAPER_OPTIONAL_SYSTEMS],
    },
}

#: how each preset differs from the paper it names (printed by ``tsrate run --preset``)
PRESET_NOTES = {
    "paper": (
        "the paper's tickers, period, window and perturbations; of its systems, ARIMA, Random "
        "and Biased always, Chronos, MOMENT and ViT-num-spec when available here (Gemini and "
        "Phi-3 only with --systems and their endpoints)"
    ),
}


class PresetPricesError(TsrateError):
    """The preset's prices are not where the run can find them (one line, with a hint)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def preset_names() -> tuple[str, ...]:
    return tuple(PRESETS)


def preset_values(name: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The preset's study vars with ``overrides`` (CLI flags that are not None) on top."""
    if name not in PRESETS:
        raise TsrateError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    values = {k: (list(v) if isinstance(v, list) else v) for k, v in PRESETS[name].items()}
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return values


def _tickers(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    return [str(t).strip().upper() for t in value if str(t).strip()]


def price_days(
    source: str, path: str | Path | None, warehouse: Path, start: dt.date, end: dt.date
) -> dict[str, int] | None:
    """Trading days per ticker in [start, end] the run will have; None when unknowable
    before the run (Yahoo, or the warehouse held by a writer)."""
    from tsrate.robustness.study_inputs import file_trading_days, skfolio_trading_days, stored_state

    if source == "yahoo":
        return None
    stored, _, _ = stored_state(warehouse, start, end)
    if stored is None:
        return None
    days = dict(stored)
    if source in ("auto", "skfolio"):
        for ticker, n in (skfolio_trading_days(start, end) or {}).items():
            days[ticker] = max(days.get(ticker, 0), n)
    if source == "file" and path:  # the run adds the file to the stored days: each once
        problems: list[str] = []
        for ticker, n in file_trading_days(path, start, end, problems, warehouse).items():
            days[ticker] = max(days.get(ticker, 0), n)
        if problems:  # the study check reports the file's problems in full
            return None
    return days


def missing_prices(
    values: Mapping[str, Any], source: str, path: str | Path | None, warehouse: Path
) -> list[str]:
    """Study tickers with fewer than context_length + horizon trading days in the period."""
    start = dt.date.fromisoformat(str(values["study_start"]))
    end = dt.date.fromisoformat(str(values["study_end"]))
    days = price_days(source, path, warehouse, start, end)
    if days is None:
        return []
    needed = int(values.get("context_length", 80)) + int(values.get("horizon", 20))
    return [t for t in _tickers(values["study_tickers"]) if days.get(t, 0) < needed]


def require_preset_prices(
    name: str,
    values: Mapping[str, Any],
    source: str,
    path: str | Path | None,
    warehouse: Path,
) -> None:
    """Refuse in one line when the preset's prices are missing (before Prefect, dbt, models)."""
    missing = missing_prices(values, source, path, warehouse)
    if not missing:
        return
    period = f"{values['study_start']}..{values['study_end']}"
    needed = int(values.get("context_length", 80)) + int(values.get("horizon", 20))
    where = {
        "file": f"the warehouse or {path}",
        "none": "the warehouse (--source none ingests nothing)",
        "skfolio": "the bundled S&P sample (it ends 2022-12-28)",
    }.get(source, "the warehouse or the bundled S&P sample (it ends 2022-12-28)")
    raise PresetPricesError(
        f"preset {name!r} needs daily closes of {', '.join(missing)} over {period} (at least "
        f"{needed} trading days each), not found in {where}",
        f"supply them with `tsrate run --preset {name} --file PRICES.csv` (columns "
        "ticker,date,close), or online with `--source yahoo`",
    )


def available_optional(
    values: Mapping[str, Any], warn: Callable[[str], None] | None = None
) -> list[str]:
    """The preset's systems, without optional ones unavailable here (each named to ``warn``)."""
    from tsrate.config import Study
    from tsrate.systems.registry import system_infos

    systems = _tickers_keep_case(values["systems"])
    optional = [s for s in systems if s in PAPER_OPTIONAL_SYSTEMS]
    if not optional:
        return systems
    infos = {i.system_id: i for i in system_infos(Study.from_mapping(dict(values)))}
    kept = []
    for system_id in systems:
        info = infos.get(system_id)
        if system_id in optional and info is not None and not info.availability.available:
            if warn:
                warn(f"preset: leaving out {system_id}: {info.availability.reason}")
            continue
        kept.append(system_id)
    return kept


def _tickers_keep_case(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    return [str(v).strip() for v in value if str(v).strip()]


def resolve_preset(
    name: str,
    overrides: Mapping[str, Any],
    source: str,
    path: str | Path | None,
    warehouse: Path,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The study overrides of ``tsrate run --preset NAME``: the preset under the CLI flags,
    its prices checked first (one-line refusal), then optional systems not available here
    dropped (unless the user named the systems)."""
    values = preset_values(name, overrides)
    require_preset_prices(name, values, source, path, warehouse)
    if overrides.get("systems") is None:
        from tsrate.config import project_vars

        values["systems"] = available_optional({**project_vars(), **values}, warn)
    if warn:
        warn(f"preset {name}: {PRESET_NOTES.get(name, '')}")
    return values
