"""The suite plan: configurations, dataset variants, training units, and the resumable loop.

A *variant* is one generated dataset (dataset id + every generator parameter + data seed);
a *unit* is one training run (variant, model, seed, training settings). Both are named by a
hash of everything that determines them (``variant_key``, ``run_key``), so a unit trained by
any earlier suite run — or by a killed one — is reused, never recomputed.

The data seed is fixed per configuration (``data_seed``): every model and seed sees the same
series, as in the paper (datasets generated once, models trained repeatedly). Model seeds
(``seeds``) vary the initialisation and the mini-batch order.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import inspect
import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pandas as pd

from tsrate import TsrateError
from tsrate.suites.interpretability import storage
from tsrate.suites.interpretability.datasets import (
    GENERATORS,
    ISING_CRITICAL_TEMPERATURE,
    REFERENCE_SENSITIVITY_LAGS,
    Dataset,
    generate,
    random_lag_sets,
)
from tsrate.suites.interpretability.models import MODEL_IDS
from tsrate.suites.interpretability.training import (
    TrainResult,
    TrainSettings,
    model_settings,
    pick_device,
    train_model,
)
from tsrate.suites.lifecycle import end_suite_run, new_suite_run_id

STUDIES = ("main", "sensitivity_f", "sensitivity_sigma", "sensitivity_n")


@dataclasses.dataclass(frozen=True)
class SuiteConfig:
    """One configuration of the suite (``small`` for a CPU, ``paper`` for a GPU)."""

    name: str
    length: int
    burn_in: int
    data_seed: int
    seeds: tuple[int, ...]
    models: tuple[str, ...]
    datasets: tuple[int, ...]
    settings: TrainSettings
    ising_side: int
    ising_temperatures: tuple[float, ...]
    logistic_r: tuple[float, ...]
    sensitivity_f: tuple[float, ...]
    sensitivity_sigma: tuple[float, ...]
    sensitivity_n: tuple[int, ...]
    sensitivity_models: tuple[str, ...]
    sensitivity_seeds: tuple[int, ...]
    #: Variants with more series than this (the Ising lattice) train with at most
    #: ``wide_hidden`` hidden units per variable: IMV-LSTM-Full's gates grow with N^2 x hidden^2
    #: per target (ours; 100 series x 32 hidden would need billions of parameters).
    wide_series: int = 20
    wide_hidden: int = 4
    #: TrainSettings fields the caller overrode: they win over the per-model settings
    #: (training.MODEL_SETTINGS), which fill in every other field per model.
    settings_overridden: tuple[str, ...] = ()
    #: dataset 9's time step: "checkerboard" half-sweep (ours) or the reference's
    #: "random_site" sweep of side^2 single-site updates (datasets.dataset9)
    ising_update: str = "checkerboard"
    #: sensitivity studies on the reference code's datasets (lag sets) rather than the main
    #: study's datasets 2 and 5
    reference_sensitivity: bool = True

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        return json.loads(json.dumps(data, default=list))


SMALL = SuiteConfig(
    name="small",
    length=1000,
    burn_in=200,
    data_seed=2293,
    seeds=(1, 2),
    models=MODEL_IDS,
    datasets=tuple(range(1, 11)),
    settings=TrainSettings(
        window=10, test_length=200, hidden=4, epochs=4, batch_size=64, learning_rate=0.01
    ),
    ising_side=4,
    ising_temperatures=(ISING_CRITICAL_TEMPERATURE,),
    logistic_r=(3.56996,),
    sensitivity_f=(0.1, 0.3, 0.6),
    sensitivity_sigma=(0.05, 0.1, 0.5),
    sensitivity_n=(3, 5, 7),
    sensitivity_models=("imv_tensor", "tcdf"),
    sensitivity_seeds=(1,),
    wide_series=10,  # the 4 x 4 lattice trains with 3 hidden units per variable
    wide_hidden=3,
)

PAPER = SuiteConfig(
    name="paper",
    length=20_000,
    burn_in=1000,
    data_seed=2293,
    seeds=(1, 2, 3, 4, 5),
    models=MODEL_IDS,
    datasets=tuple(range(1, 11)),
    settings=TrainSettings(
        window=10,
        test_length=2000,
        hidden=32,
        epochs=20,
        batch_size=64,
        learning_rate=0.001,
        device="auto",
        threads=0,
    ),
    ising_side=10,
    ising_temperatures=(2.0, ISING_CRITICAL_TEMPERATURE, 2.75),
    logistic_r=(1.5, 2.5, 3.2, 3.55, 3.56996),
    sensitivity_f=tuple(round(0.05 * k, 2) for k in range(21)),  # the reference's grid
    sensitivity_sigma=(0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0),
    sensitivity_n=tuple(range(3, 21, 2)),
    sensitivity_models=MODEL_IDS,
    sensitivity_seeds=(1, 2, 3),
    ising_update="random_site",
)

CONFIGS = {"small": SMALL, "paper": PAPER}


def resolve_config(config_name: str, seeds=None, overrides: dict | None = None) -> SuiteConfig:
    """The named configuration with ``seeds`` and field ``overrides`` applied (``settings``
    may be a dict of TrainSettings fields)."""
    if config_name not in CONFIGS:
        raise TsrateError(f"unknown configuration {config_name!r}: small or paper")
    config = CONFIGS[config_name]
    changes = dict(overrides or {})
    if seeds:
        changes["seeds"] = tuple(seeds)
    if isinstance(changes.get("settings"), dict):
        changes["settings_overridden"] = tuple(sorted(changes["settings"]))
        try:
            changes["settings"] = dataclasses.replace(config.settings, **changes["settings"])
        except TypeError as exc:
            raise TsrateError(f"bad training settings {changes['settings']}: {exc}") from exc
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(SuiteConfig)})
    if unknown:
        raise TsrateError(f"unknown configuration fields {unknown}")
    return dataclasses.replace(config, **changes)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One dataset variant in one study of the plan."""

    variant_id: str
    dataset_id: int
    params: tuple[tuple[str, object], ...]
    study: str
    parameter: str | None = None
    parameter_value: float | None = None

    @property
    def variant_key(self) -> str:
        text = json.dumps([self.dataset_id, sorted(self.params)], default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def generate(self) -> Dataset:
        return generate(self.dataset_id, **dict(self.params))

    @property
    def n_series(self) -> int:
        """Number of series the variant will have (without generating it)."""
        params = dict(self.params)
        if self.dataset_id == 9:
            return int(params.get("side", 10)) ** 2
        fixed = {4: 2, 7: 5, 8: 4, 10: 3}
        if self.dataset_id in fixed:
            return fixed[self.dataset_id]
        return int(params.get("n_series", 5))


def _base_params(config: SuiteConfig, dataset_id: int) -> dict:
    return {"length": config.length, "burn_in": config.burn_in, "seed": config.data_seed}


def require_known(datasets: Sequence[int] | None = (), models: Sequence[str] | None = ()) -> None:
    """Refuse datasets and models the suite does not have, from the arguments alone: the
    command and the flow check them before the warehouse writer lock is taken, so the
    refusal leaves no lock file (nor warehouse) behind; :func:`plan_variants` and
    :func:`plan_units` check them again."""
    unknown = sorted(set(datasets or ()) - set(GENERATORS))
    if unknown:
        raise TsrateError(f"unknown dataset(s) {unknown}: the benchmark has datasets 1-10")
    unknown = sorted(set(models or ()) - set(MODEL_IDS))
    if unknown:
        raise TsrateError(f"unknown model(s) {unknown}: choose from {', '.join(MODEL_IDS)}")


def plan_variants(
    config: SuiteConfig, datasets: Sequence[int] | None = None, sensitivity: bool = True
) -> list[Variant]:
    """The variants of the main study (datasets 1-10) and of the sensitivity studies."""
    chosen = tuple(datasets) if datasets else config.datasets
    require_known(datasets=chosen)
    out: list[Variant] = []
    for dataset_id in chosen:
        base = _base_params(config, dataset_id)
        if dataset_id == 9:
            for temperature in config.ising_temperatures:
                params = {**base, "temperature": temperature, "side": config.ising_side}
                if config.ising_update != "checkerboard":
                    params["update"] = config.ising_update
                out.append(Variant(f"d9_T{temperature:.4g}", 9, tuple(params.items()), "main"))
        elif dataset_id == 10:
            for r in config.logistic_r:
                params = {**base, "r": r}
                out.append(Variant(f"d10_r{r:g}", 10, tuple(params.items()), "main"))
        else:
            out.append(Variant(f"d{dataset_id}", dataset_id, tuple(base.items()), "main"))
    if not sensitivity:
        return out
    grids = (
        ("sensitivity_f", "f", (2, 7), config.sensitivity_f),
        ("sensitivity_sigma", "sigma", (2, 7), config.sensitivity_sigma),
        ("sensitivity_n", "n_series", (2, 5), config.sensitivity_n),
    )
    for study, parameter, dataset_ids, values in grids:
        for dataset_id in dataset_ids:
            if datasets and dataset_id not in chosen:
                continue
            default = inspect.signature(GENERATORS[dataset_id]).parameters[parameter].default
            for value in values:
                params = _base_params(config, dataset_id)
                base_name = f"d{dataset_id}"
                lag_sets = _sensitivity_lag_sets(config, parameter, dataset_id, value)
                if lag_sets is not None:
                    params["lag_sets"] = lag_sets
                    base_name += "rnd" if parameter == "n_series" else "ref"
                if value != default:  # the default point IS the main variant (same key)
                    params[parameter] = value
                name = base_name if value == default else f"{base_name}_{parameter}{value:g}"
                out.append(
                    Variant(
                        name,
                        dataset_id,
                        tuple(params.items()),
                        study,
                        parameter,
                        float(value),
                    )
                )
    return out


def _sensitivity_lag_sets(config: SuiteConfig, parameter: str, dataset_id: int, value):
    """The reference code's sensitivity datasets: f and sigma on dataset 2 with its fixed
    per-series lag sets; N on datasets 2 and 5 with random lag sets from 5..9 (one draw per
    N, shared by both datasets as in the reference). None = the main dataset."""
    if not config.reference_sensitivity:
        return None
    if parameter in ("f", "sigma") and dataset_id == 2:
        return REFERENCE_SENSITIVITY_LAGS
    if parameter == "n_series" and dataset_id in (2, 5):
        return random_lag_sets(int(value), config.data_seed)
    return None


@dataclasses.dataclass(frozen=True)
class Unit:
    variant: Variant
    model_id: str
    seed: int
    settings: dict

    @property
    def run_key(self) -> str:
        text = json.dumps(
            [self.variant.variant_key, self.model_id, self.seed, self.settings], sort_keys=True
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def plan_units(
    config: SuiteConfig, variants: Iterable[Variant], models: Sequence[str] | None = None
) -> list[Unit]:
    """Every (variant, model, seed) to train; sensitivity variants use the sensitivity models
    and seeds. Units shared by several studies appear once."""
    chosen = tuple(models) if models else config.models
    require_known(models=chosen)
    settings = dataclasses.asdict(config.settings)
    settings["device"] = pick_device(settings["device"])
    units: dict[str, Unit] = {}
    for variant in variants:
        if variant.study == "main":
            variant_models, seeds = chosen, config.seeds
        else:
            variant_models = tuple(m for m in config.sensitivity_models if m in chosen)
            seeds = config.sensitivity_seeds
        for model_id in variant_models:
            unit_settings = model_settings(
                model_id, settings, config.name, keep=config.settings_overridden
            )
            if (
                variant.n_series > config.wide_series
                and unit_settings["hidden"] > config.wide_hidden
            ):
                unit_settings = {**unit_settings, "hidden": config.wide_hidden}
            for seed in seeds:
                unit = Unit(variant, model_id, seed, unit_settings)
                units.setdefault(unit.run_key, unit)
    return list(units.values())


def default_workers(config: SuiteConfig) -> int:
    """Training processes: one per CPU core (at most 4) on CPU, one on a GPU."""
    if pick_device(config.settings.device) != "cpu":
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


_worker_cache: dict[str, Dataset] = {}


def train_unit(unit: Unit) -> tuple[Dataset, TrainResult]:
    """Generate the unit's dataset (cached per process, one at a time) and train the model.

    Returns the dataset without its values (only what the warehouse stores) and the result;
    runs in the calling process or in a worker process.
    """
    key = unit.variant.variant_key
    if key not in _worker_cache:
        _worker_cache.clear()  # keep one dataset in memory
        _worker_cache[key] = unit.variant.generate()
    dataset = _worker_cache[key]
    result = train_model(unit.model_id, dataset.values, TrainSettings(**unit.settings), unit.seed)
    return dataclasses.replace(dataset, values=dataset.values[:0]), result


def _init_worker(threads: int) -> None:
    """Worker start: no more torch threads than this worker's share of the cores."""
    import torch

    torch.set_num_threads(threads)


def _trained(units: list[Unit], workers: int) -> Iterator[tuple[Unit, Dataset, TrainResult]]:
    """(unit, dataset, result) for every unit, as they finish: in this process when
    ``workers`` <= 1, else in that many spawned processes (one torch thread each)."""
    if workers <= 1 or len(units) <= 1:
        for unit in units:
            yield (unit, *train_unit(unit))
        return
    context = multiprocessing.get_context("spawn")
    # settings.threads = 0 leaves torch's default; split the cores among the workers then
    threads = max(1, (os.cpu_count() or 1) // workers)
    with concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_worker, initargs=(threads,)
    ) as pool:
        futures = {pool.submit(train_unit, unit): unit for unit in units}
        try:
            for future in concurrent.futures.as_completed(futures):
                yield (futures[future], *future.result())
        finally:
            for future in futures:
                future.cancel()


def run_units(
    warehouse: Path,
    config: SuiteConfig,
    variants: list[Variant],
    units: list[Unit],
    progress: Callable[[str], None] = print,
    workers: int = 1,
) -> tuple[str, int, int]:
    """Train every unit not stored yet (in ``workers`` processes) and store each in its own
    transaction as soon as it finishes; return (suite_run_id, trained, reused). Only this
    process writes the warehouse. The suite run ends in status ``trained``."""
    from tsrate.platform.warehouse import connect

    plan = pd.DataFrame(
        [
            {
                "variant_key": v.variant_key,
                "study": v.study,
                "parameter": v.parameter,
                "parameter_value": v.parameter_value,
            }
            for v in variants
        ]
    ).drop_duplicates(["variant_key", "study"])
    suite_run_id = new_suite_run_id("interpretability")
    with connect(warehouse) as con:
        storage.start_suite_run(con, suite_run_id, config.name, config.to_dict(), plan, len(units))
        done_runs = storage.stored_runs(con)
        done_variants = storage.stored_variants(con)
    label = {
        unit.run_key: f"{unit.variant.variant_id} {unit.model_id} seed {unit.seed}"
        for unit in units
    }
    pending = [unit for unit in units if unit.run_key not in done_runs]
    reused = len(units) - len(pending)
    count = 0
    try:
        if reused:
            with connect(warehouse) as con:
                for unit in units:
                    if unit.run_key in done_runs:
                        storage.link_unit(con, suite_run_id, unit.run_key, reused=True)
                        count += 1
                        progress(f"[{count}/{len(units)}] {label[unit.run_key]}: stored, reused")
        for unit, dataset, result in _trained(pending, workers):
            key = unit.variant.variant_key
            with connect(warehouse) as con:
                if key not in done_variants:
                    storage.store_variant(con, key, unit.variant.variant_id, dataset)
                    done_variants.add(key)
                storage.store_run(
                    con,
                    unit.run_key,
                    key,
                    unit.model_id,
                    unit.seed,
                    config.name,
                    unit.settings,
                    result,
                )
                storage.link_unit(con, suite_run_id, unit.run_key, reused=False)
            count += 1
            progress(
                f"[{count}/{len(units)}] {label[unit.run_key]}: test MSE "
                f"{float(result.test_mse.mean()):.4g} ({result.seconds:.1f}s)"
            )
        end_suite_run(warehouse, suite_run_id, "trained")
    except BaseException as exc:
        end_suite_run(warehouse, suite_run_id, "failed", exc)
        raise
    return suite_run_id, len(pending), reused
