"""The study definition: which companies, which dates, which windows, systems and perturbations.

A study lives in configuration, not code. Defaults are the ``vars:`` of ``dbt_project.yml``
(one place that both dbt models and the Python pipeline read); the CLI overrides single
values with flags. Companies and their industries come from ``seeds/companies.csv``.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tsrate import TsrateError

if TYPE_CHECKING:  # pandas is imported where it is used: the study check runs without it
    import pandas as pd

DEFAULT_WAREHOUSE = "warehouse/tsrate.duckdb"


def project_dir() -> Path:
    """The tsrate project root (the folder holding ``dbt_project.yml``).

    ``TSRATE_PROJECT_DIR`` wins; else the current folder or one of its parents; else the
    checkout this package was installed from (editable install).
    """
    env = os.environ.get("TSRATE_PROJECT_DIR")
    if env:
        path = Path(env).resolve()
        if not (path / "dbt_project.yml").exists():
            raise TsrateError(f"TSRATE_PROJECT_DIR={env} holds no dbt_project.yml")
        return path
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "dbt_project.yml").exists() and (folder / "src" / "tsrate").exists():
            return folder
    here = Path(__file__).resolve().parents[2]
    if (here / "dbt_project.yml").exists():
        return here
    raise TsrateError(
        "cannot find the tsrate project (dbt_project.yml); run from the checkout "
        "or set TSRATE_PROJECT_DIR"
    )


def warehouse_path() -> Path:
    """The live DuckDB file: ``TSRATE_WAREHOUSE`` or ``warehouse/tsrate.duckdb`` in the project."""
    raw = os.environ.get("TSRATE_WAREHOUSE", DEFAULT_WAREHOUSE)
    path = Path(raw)
    if not path.is_absolute():
        path = project_dir() / path
    return path


#: ``dbt_project.yml``'s parsed ``vars:`` per (file, mtime, size): a command reads them for
#: every system's settings (about 60 times for ``tsrate systems``: 1 s of YAML parsing)
_VARS_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}


def project_vars() -> dict[str, Any]:
    """The ``vars:`` block of ``dbt_project.yml``: the study defaults (a fresh copy; the
    file is parsed again whenever it changes)."""
    path = project_dir() / "dbt_project.yml"
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _VARS_CACHE:
        with open(path) as handle:
            _VARS_CACHE[key] = dict(yaml.safe_load(handle).get("vars") or {})
    return copy.deepcopy(_VARS_CACHE[key])


def load_companies(path: Path | None = None) -> pd.DataFrame:
    """The companies seed: ticker, company_name, industry, biased_offset."""
    import pandas as pd

    path = path or project_dir() / "seeds" / "companies.csv"
    frame = pd.read_csv(path, dtype={"ticker": str, "company_name": str, "industry": str})
    missing = {"ticker", "company_name", "industry", "biased_offset"} - set(frame.columns)
    if missing:
        raise TsrateError(f"{path}: missing columns {sorted(missing)}")
    if frame["ticker"].duplicated().any():
        dupes = sorted(frame.loc[frame["ticker"].duplicated(), "ticker"])
        raise TsrateError(f"{path}: duplicate tickers {dupes}")
    return frame


@dataclasses.dataclass(frozen=True)
class Study:
    """One study: companies × study period × window shape × systems × perturbations.

    Windows: a context of ``context_length`` trading days ending on ``window_end_date`` (the
    forecast origin) and a horizon of ``horizon`` trading days after it, both inside
    [start, end]; consecutive windows are ``stride`` days apart. Perturbations touch every
    ``context_length``-th value of the study-period series starting at ``perturbation_phase``,
    so every context holds exactly one perturbed value; the target is always the clean future.
    """

    tickers: tuple[str, ...]
    start: dt.date
    end: dt.date
    context_length: int = 80
    horizon: int = 20
    stride: int = 1
    perturbation_phase: int = 0
    perturbations: tuple[str, ...] = ("P0", "P1", "P2", "P3")
    systems: tuple[str, ...] = ("naive", "seasonal_naive", "arima", "random", "biased")
    seed: int = 42
    arima_order: tuple[int, int, int] = (1, 1, 1)

    def __post_init__(self) -> None:
        if not self.tickers:
            raise TsrateError("the study names no tickers")
        if len(set(self.tickers)) != len(self.tickers):
            raise TsrateError(f"the study names a ticker twice: {list(self.tickers)}")
        if len(set(self.perturbations)) != len(self.perturbations):
            raise TsrateError(f"the study names a perturbation twice: {list(self.perturbations)}")
        if self.start >= self.end:
            raise TsrateError(f"study start {self.start} is not before its end {self.end}")
        for name in ("context_length", "horizon", "stride"):
            if getattr(self, name) < 1:
                raise TsrateError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.context_length < 3:
            raise TsrateError("context_length must be at least 3")
        if not 0 <= self.perturbation_phase < self.context_length:
            raise TsrateError(
                f"perturbation_phase must lie in [0, {self.context_length}), "
                f"got {self.perturbation_phase}"
            )
        if "P0" not in self.perturbations:
            raise TsrateError("the study must include the control perturbation P0")

    @classmethod
    def from_vars(cls, overrides: dict[str, Any] | None = None) -> Study:
        """Build the study from ``dbt_project.yml`` vars, then ``overrides`` (CLI flags)."""
        values = project_vars()
        values.update({k: v for k, v in (overrides or {}).items() if v is not None})
        return cls.from_mapping(values)

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Study:
        def as_tuple(value: Any) -> tuple[str, ...]:
            if isinstance(value, str):
                value = [part for part in value.replace(",", " ").split() if part]
            return tuple(str(part).strip() for part in value)

        return cls(
            tickers=tuple(t.upper() for t in as_tuple(values["study_tickers"])),
            start=as_date(values["study_start"], "study_start"),
            end=as_date(values["study_end"], "study_end"),
            context_length=int(values.get("context_length", 80)),
            horizon=int(values.get("horizon", 20)),
            stride=int(values.get("stride", 1)),
            perturbation_phase=int(values.get("perturbation_phase", 0)),
            perturbations=as_tuple(values.get("perturbations", ("P0", "P1", "P2", "P3"))),
            systems=as_tuple(
                values.get("systems", ("naive", "seasonal_naive", "arima", "random", "biased"))
            ),
            seed=int(values.get("random_seed", 42)),
            arima_order=tuple(int(x) for x in values.get("arima_order", (1, 1, 1))),  # type: ignore[arg-type]
        )

    def to_json(self) -> str:
        """A canonical JSON description (stored with each run)."""
        data = dataclasses.asdict(self)
        data["start"] = self.start.isoformat()
        data["end"] = self.end.isoformat()
        return json.dumps(data, sort_keys=True, default=list)

    @classmethod
    def from_json(cls, text: str) -> Study:
        """Inverse of :meth:`to_json`."""
        data = json.loads(text)
        return cls.from_mapping(
            {
                "study_tickers": data["tickers"],
                "study_start": data["start"],
                "study_end": data["end"],
                "context_length": data["context_length"],
                "horizon": data["horizon"],
                "stride": data["stride"],
                "perturbation_phase": data["perturbation_phase"],
                "perturbations": data["perturbations"],
                "systems": data["systems"],
                "random_seed": data["seed"],
                "arima_order": data["arima_order"],
            }
        )

    @property
    def study_hash(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]


def as_date(value: Any, name: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise TsrateError(f"{name}: {value!r} is not a date like 2022-12-28") from exc
