"""The systems registry: the ``systems`` seed joined with the code that runs each system.

A seed row whose ``implementation`` names a module is runnable when that module's
``create(study, companies)`` builds a system whose ``availability()`` says so. Rows without
an implementation are the paper's systems that this version cannot run yet; asking for
one is an error that says why, never a silent skip.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study, load_companies, project_dir
from tsrate.systems.base import Availability, ForecastSystem
from tsrate.systems.registered import from_environment, seed_row
from tsrate.systems.training_statement import training_corpus_problem


@dataclasses.dataclass(frozen=True)
class SystemInfo:
    system_id: str
    display_name: str
    accepted_perturbations: tuple[str, ...]
    implementation: str
    availability: Availability


def load_systems_seed(path: Path | None = None) -> pd.DataFrame:
    """The systems seed; the project's (``path`` None) with the language models registered
    under their own id after it (:mod:`tsrate.systems.registered`, as the run or command
    at hand exported them; a seed row wins over a registration of its id)."""
    project_seed = path is None
    path = path or project_dir() / "seeds" / "systems.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if frame["system_id"].duplicated().any():
        raise TsrateError(f"{path}: duplicate system_id values")
    if "training_corpus" in frame:  # read as an import's --metadata training_corpus is
        for system_id, corpus in zip(frame["system_id"], frame["training_corpus"], strict=True):
            problem = training_corpus_problem(corpus)
            if problem:
                raise TsrateError(f"{path}: system {system_id!r}: {problem}")
    if project_seed:
        known = set(frame["system_id"])
        extra = [seed_row(r) for i, r in from_environment().items() if i not in known]
        if extra:
            rows = pd.DataFrame(extra, columns=frame.columns).fillna("")
            frame = pd.concat([frame, rows], ignore_index=True)
    return frame


def system_infos(study: Study, companies: pd.DataFrame | None = None) -> list[SystemInfo]:
    """Every seed row (registered language models included) with whether it can run here
    and why (what `tsrate systems` prints)."""
    companies = load_companies() if companies is None else companies
    infos = []
    for row in load_systems_seed().itertuples():
        accepted = tuple(row.accepted_perturbations.split())
        if not row.implementation:
            availability = Availability(False, f"not runnable in this version: {row.description}")
        else:
            try:
                availability = create_system(row.implementation, study, companies).availability()
            except TsrateError as exc:
                availability = Availability(False, str(exc))
        infos.append(
            SystemInfo(row.system_id, row.display_name, accepted, row.implementation, availability)
        )
    return infos


def create_system(implementation: str, study: Study, companies: pd.DataFrame) -> ForecastSystem:
    """``module`` → ``module.create(study, companies)``; ``module:name`` (one module serving
    several seed rows, e.g. ``tsrate.systems.llm:phi3_numeric``) →
    ``module.create(study, companies, name)``."""
    module_name, _, variant = implementation.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TsrateError(f"cannot import {module_name}: {exc}") from exc
    if variant:
        return module.create(study, companies, variant)
    return module.create(study, companies)


def resolve_systems(
    study: Study, companies: pd.DataFrame
) -> dict[str, tuple[ForecastSystem, tuple[str, ...]]]:
    """The study's systems, built, with the perturbations each accepts; errors name the problem."""
    seed = load_systems_seed().set_index("system_id")
    resolved = {}
    for system_id in study.systems:
        if system_id not in seed.index:
            raise TsrateError(
                f"unknown system {system_id!r}; known systems: {sorted(seed.index)} "
                "(see `tsrate systems`)"
            )
        row = seed.loc[system_id]
        if not row["implementation"]:
            raise TsrateError(f"system {system_id!r} cannot run here: {row['description']}")
        system = create_system(row["implementation"], study, companies)
        availability = system.availability()
        if not availability.available:
            raise TsrateError(f"system {system_id!r} is unavailable: {availability.reason}")
        resolved[system_id] = (system, tuple(row["accepted_perturbations"].split()))
    return resolved
