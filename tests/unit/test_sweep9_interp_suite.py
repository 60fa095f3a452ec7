"""The interpretability suite's plan and loop (tsrate.suites.interpretability.suite): the two
configurations against the table in docs/suites/interpretability.md, each variant's series
count against the generated dataset, the sensitivity grids' names and parameters, the
units' models, seeds and hidden-unit cap at its exact bound, the worker count, and a real
in-process run (a tiny IMV-LSTM-Tensor on a temporary DuckDB warehouse) read back row by
row: the plan, the units, which were reused, the progress lines and the final status.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json): a changed preset size, seed, bound, count or stored
column changes a checked value here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

import duckdb
import numpy as np
import pytest

from tsrate.suites.interpretability import suite
from tsrate.suites.interpretability.datasets import generate
from tsrate.suites.interpretability.suite import (
    PAPER,
    SMALL,
    Unit,
    Variant,
    default_workers,
    plan_units,
    plan_variants,
    resolve_config,
    run_units,
    train_unit,
)
from tsrate.suites.interpretability.training import TrainSettings

T_C = 2.0 / math.log(1.0 + math.sqrt(2.0))  # Onsager's critical temperature, 2.269...
ALL_MODELS = ("imv_full", "imv_tensor", "tcdf", "darnn", "seq2graph")


# --------------------------------------------------------------------------- configurations


def test_small_configuration_is_the_documented_one() -> None:
    """docs/suites/interpretability.md, `--small`: length 1,000, burn-in 200, test 200,
    4 hidden units (3 on the lattice), 4 epochs, seeds 1 and 2, a 4 x 4 lattice at T_c,
    r = 3.56996 only, 3 points per sensitivity grid on IMV-Tensor and TCDF with seed 1;
    the shared small settings lr 0.01, batch 64, window 10; one data seed (2293) for both
    configurations."""
    assert (SMALL.name, SMALL.length, SMALL.burn_in, SMALL.data_seed) == ("small", 1000, 200, 2293)
    assert SMALL.seeds == (1, 2)
    assert SMALL.models == ALL_MODELS and SMALL.datasets == tuple(range(1, 11))
    assert SMALL.settings == TrainSettings(
        window=10, test_length=200, hidden=4, epochs=4, batch_size=64, learning_rate=0.01
    )
    assert SMALL.settings.device == "cpu" and SMALL.settings.threads == 1
    assert SMALL.ising_side == 4 and SMALL.ising_temperatures == (pytest.approx(T_C),)
    assert SMALL.logistic_r == (3.56996,)
    assert SMALL.sensitivity_f == (0.1, 0.3, 0.6)
    assert SMALL.sensitivity_sigma == (0.05, 0.1, 0.5)
    assert SMALL.sensitivity_n == (3, 5, 7)
    assert SMALL.sensitivity_models == ("imv_tensor", "tcdf") and SMALL.sensitivity_seeds == (1,)
    assert (SMALL.wide_series, SMALL.wide_hidden) == (10, 3)
    assert SMALL.ising_update == "checkerboard" and SMALL.reference_sensitivity is True
    assert SMALL.settings_overridden == ()


def test_paper_configuration_is_the_documented_one() -> None:
    """`--paper`: length 20,000, burn-in 1,000, test 2,000, 32 hidden units (4 per variable
    with more than 20 series), 20 epochs, seeds 1-5, a 10 x 10 lattice at 2, T_c and 2.75
    with the reference's random-site sweep, r in {1.5, 2.5, 3.2, 3.55, 3.56996}, the grids
    f = 0, 0.05, ..., 1, sigma in {0.01, ..., 5}, N = 3, 5, ..., 19; all models, 3 seeds."""
    assert (PAPER.name, PAPER.length, PAPER.burn_in, PAPER.data_seed) == (
        "paper",
        20_000,
        1000,
        2293,
    )
    assert PAPER.seeds == (1, 2, 3, 4, 5)
    assert PAPER.models == ALL_MODELS and PAPER.datasets == tuple(range(1, 11))
    assert PAPER.settings == TrainSettings(
        window=10,
        test_length=2000,
        hidden=32,
        epochs=20,
        batch_size=64,
        learning_rate=0.001,
        device="auto",
        threads=0,
    )
    assert PAPER.ising_side == 10
    assert PAPER.ising_temperatures == (2.0, pytest.approx(T_C), 2.75)
    assert PAPER.logistic_r == (1.5, 2.5, 3.2, 3.55, 3.56996)
    assert PAPER.sensitivity_f == tuple(k / 20 for k in range(21))
    assert PAPER.sensitivity_sigma == (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0)
    assert PAPER.sensitivity_n == (3, 5, 7, 9, 11, 13, 15, 17, 19)
    assert PAPER.sensitivity_models == ALL_MODELS and PAPER.sensitivity_seeds == (1, 2, 3)
    assert (PAPER.wide_series, PAPER.wide_hidden) == (20, 4)
    assert PAPER.ising_update == "random_site" and PAPER.reference_sensitivity is True


def test_to_dict_round_trips_through_json() -> None:
    data = SMALL.to_dict()
    assert data["settings"]["hidden"] == 4 and data["seeds"] == [1, 2]
    assert json.loads(json.dumps(data)) == data


def test_resolve_config_records_which_settings_the_caller_set() -> None:
    config = resolve_config("paper", overrides={"settings": {"hidden": 2, "epochs": 1}})
    assert config.settings_overridden == ("epochs", "hidden")
    assert config.settings.hidden == 2 and config.settings.test_length == 2000
    # no seeds given: the configuration's own
    assert resolve_config("small").seeds == (1, 2)
    assert resolve_config("small", seeds=[]).seeds == (1, 2)
    with pytest.raises(Exception, match="bad training settings"):
        resolve_config("small", overrides={"settings": {"hiden": 2}})


# --------------------------------------------------------------------------- variants


@pytest.mark.parametrize("dataset_id", range(1, 11))
def test_n_series_matches_the_generated_dataset(dataset_id: int) -> None:
    """Variant.n_series is what generate() produces, without generating; checked against a
    short generated series for every dataset at its defaults, and for the lattice side and
    the N parameter given explicitly."""
    base = {"length": 40, "burn_in": 5, "seed": 3}
    variant = Variant("v", dataset_id, tuple(base.items()), "main")
    assert variant.n_series == generate(dataset_id, **base).values.shape[1]
    assert variant.n_series == variant.generate().n_series
    if dataset_id == 9:
        assert variant.n_series == 100
        side = Variant("v", 9, (*base.items(), ("side", 3)), "main")
        assert side.n_series == 9 == side.generate().values.shape[1]
    if dataset_id in (1, 2, 3, 5, 6):  # the datasets that take n_series
        wide = Variant("v", dataset_id, (*base.items(), ("n_series", 7)), "main")
        assert wide.n_series == 7 == wide.generate().values.shape[1]


def test_every_variant_carries_the_configuration_length_burn_in_and_data_seed() -> None:
    config = dataclasses.replace(SMALL, length=123, burn_in=45, data_seed=678)
    variants = plan_variants(config)
    assert len(variants) == 10 + 3 * 2 * 3  # 10 main (one T, one r) + 3 grids x 2 datasets x 3
    for v in variants:
        params = dict(v.params)
        assert (params["length"], params["burn_in"], params["seed"]) == (123, 45, 678)


def test_main_variants_names_and_parameters() -> None:
    variants = plan_variants(PAPER, [9, 10, 4], sensitivity=False)
    assert [v.variant_id for v in variants] == [
        "d9_T2",
        "d9_T2.269",
        "d9_T2.75",
        "d10_r1.5",
        "d10_r2.5",
        "d10_r3.2",
        "d10_r3.55",
        "d10_r3.56996",
        "d4",
    ]
    for v in variants[:3]:
        params = dict(v.params)
        assert params["side"] == 10 and params["update"] == "random_site"
    assert [dict(v.params)["temperature"] for v in variants[:3]] == [2.0, T_C, 2.75]
    assert [dict(v.params)["r"] for v in variants[3:8]] == [1.5, 2.5, 3.2, 3.55, 3.56996]
    assert {v.study for v in variants} == {"main"}
    assert all(v.parameter is None and v.parameter_value is None for v in variants)
    # the checkerboard lattice (the small configuration) passes no update at all
    (small9,) = plan_variants(SMALL, [9], sensitivity=False)
    assert "update" not in dict(small9.params) and dict(small9.params)["side"] == 4


def test_sensitivity_variants_names_values_and_defaults() -> None:
    """Dataset 7's default point (f = 0.3, sigma = 0.1) carries no parameter (it IS the main
    variant); the other points carry theirs; dataset 2's are the reference's ("ref": lag
    sets, N: "rnd"), named by the value with :g."""
    variants = plan_variants(SMALL, [2, 7])
    sens = [(v.study, v.variant_id, v.parameter, v.parameter_value) for v in variants[2:]]
    assert sens == [
        ("sensitivity_f", "d2ref_f0.1", "f", 0.1),
        ("sensitivity_f", "d2ref", "f", 0.3),
        ("sensitivity_f", "d2ref_f0.6", "f", 0.6),
        ("sensitivity_f", "d7_f0.1", "f", 0.1),
        ("sensitivity_f", "d7", "f", 0.3),
        ("sensitivity_f", "d7_f0.6", "f", 0.6),
        ("sensitivity_sigma", "d2ref_sigma0.05", "sigma", 0.05),
        ("sensitivity_sigma", "d2ref", "sigma", 0.1),
        ("sensitivity_sigma", "d2ref_sigma0.5", "sigma", 0.5),
        ("sensitivity_sigma", "d7_sigma0.05", "sigma", 0.05),
        ("sensitivity_sigma", "d7", "sigma", 0.1),
        ("sensitivity_sigma", "d7_sigma0.5", "sigma", 0.5),
        ("sensitivity_n", "d2rnd_n_series3", "n_series", 3.0),
        ("sensitivity_n", "d2rnd", "n_series", 5.0),
        ("sensitivity_n", "d2rnd_n_series7", "n_series", 7.0),
    ]
    by_id = {(v.study, v.variant_id): dict(v.params) for v in variants}
    assert by_id[("sensitivity_f", "d7_f0.6")]["f"] == 0.6
    assert "f" not in by_id[("sensitivity_f", "d7")]
    assert "sigma" not in by_id[("sensitivity_sigma", "d7")]
    assert by_id[("sensitivity_n", "d2rnd_n_series7")]["n_series"] == 7
    assert "n_series" not in by_id[("sensitivity_n", "d2rnd")]
    # without the reference's datasets the grids run on the main datasets themselves
    plain = plan_variants(dataclasses.replace(SMALL, reference_sensitivity=False), [2, 5])
    names = [v.variant_id for v in plain if v.study == "sensitivity_n"]
    assert names == ["d2_n_series3", "d2", "d2_n_series7", "d5_n_series3", "d5", "d5_n_series7"]
    assert all("lag_sets" not in dict(v.params) for v in plain)


# --------------------------------------------------------------------------- units


def _wide_config(config, n_values):
    return dataclasses.replace(config, sensitivity_n=n_values, sensitivity_seeds=(1,))


@pytest.mark.parametrize(
    ("config", "at_bound", "above"), [(SMALL, 10, 11), (PAPER, 20, 21)], ids=["small", "paper"]
)
def test_hidden_units_are_capped_only_above_the_wide_bound(config, at_bound, above) -> None:
    """A variant with exactly ``wide_series`` series keeps the configuration's hidden units;
    one more series trains with ``wide_hidden`` (3 small, 4 paper: the docs' table)."""
    config = _wide_config(config, (at_bound, above))
    variants = [v for v in plan_variants(config, [5]) if v.study == "sensitivity_n"]
    units = plan_units(config, variants, ["imv_tensor"])
    hidden = {u.variant.n_series: u.settings["hidden"] for u in units}
    expected_wide = 3 if config.name == "small" else 4
    expected_full = 4 if config.name == "small" else 128  # paper: IMV-LSTM's 128 units
    assert hidden == {at_bound: expected_full, above: expected_wide}


def test_a_model_already_below_the_cap_keeps_its_hidden_units() -> None:
    config = dataclasses.replace(SMALL, settings=dataclasses.replace(SMALL.settings, hidden=2))
    units = plan_units(config, plan_variants(config, [9], sensitivity=False), ["darnn"])
    assert {u.settings["hidden"] for u in units} == {2}
    # equal to the cap: unchanged too (3 = wide_hidden)
    config = dataclasses.replace(SMALL, settings=dataclasses.replace(SMALL.settings, hidden=3))
    units = plan_units(config, plan_variants(config, [9], sensitivity=False), ["darnn"])
    assert {u.settings["hidden"] for u in units} == {3}


def test_units_models_and_seeds_per_study() -> None:
    """Main variants: every chosen model x the configuration's seeds; sensitivity variants:
    the sensitivity models among the chosen ones x the sensitivity seeds; a unit shared by
    studies appears once, in plan order."""
    config = dataclasses.replace(SMALL, seeds=(4, 9), sensitivity_seeds=(6,))
    variants = plan_variants(config, [7])
    units = plan_units(config, variants, ["tcdf", "darnn"])
    main = [(u.variant.variant_id, u.model_id, u.seed) for u in units if u.variant.study == "main"]
    assert main == [("d7", m, s) for m in ("tcdf", "darnn") for s in (4, 9)]
    sens = [(u.variant.variant_id, u.model_id, u.seed) for u in units if u.variant.study != "main"]
    # d7 at seed 6 is a new unit, shared by both grids' default point: listed once
    names = ("d7_f0.1", "d7", "d7_f0.6", "d7_sigma0.05", "d7_sigma0.5")
    assert sens == [(name, "tcdf", 6) for name in names]
    assert len(units) == 4 + 5
    # every unit's settings name the device actually used
    assert {u.settings["device"] for u in units} == {"cpu"}
    assert {u.settings["epochs"] for u in units if u.model_id == "tcdf"} == {100}
    assert {u.settings["epochs"] for u in units if u.model_id == "darnn"} == {4}


def test_default_workers(monkeypatch) -> None:
    """One per core, at most 4, at least 1, on CPU; one on a GPU."""
    for cores, expected in ((8, 4), (4, 4), (3, 3), (1, 1), (None, 1)):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        assert default_workers(SMALL) == expected
    gpu = dataclasses.replace(SMALL, settings=dataclasses.replace(SMALL.settings, device="cuda"))
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert default_workers(gpu) == 1


# --------------------------------------------------------------------------- the loop

TINY = dataclasses.replace(
    SMALL,
    length=120,
    burn_in=10,
    seeds=(1, 2),
    settings=TrainSettings(window=5, test_length=20, hidden=2, epochs=1, batch_size=32),
    settings_overridden=("window", "test_length", "hidden", "epochs", "batch_size"),
)


def _read(path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_train_unit_keeps_one_dataset_and_returns_it_without_values() -> None:
    (variant,) = plan_variants(TINY, [4], sensitivity=False)
    unit = plan_units(TINY, [variant], ["imv_tensor"])[0]
    suite._worker_cache.clear()
    dataset, result = train_unit(unit)
    assert dataset.values.shape == (0, 2) and dataset.dataset_id == 4
    assert list(suite._worker_cache) == [variant.variant_key]
    assert suite._worker_cache[variant.variant_key].values.shape == (120, 2)
    assert result.test_predictions.shape == (20, 2)
    other = plan_units(TINY, plan_variants(TINY, [7], sensitivity=False), ["imv_tensor"])[0]
    train_unit(other)
    assert list(suite._worker_cache) == [other.variant.variant_key]


def test_run_units_stores_the_plan_units_and_status_then_reuses_them(tmp_path) -> None:
    """Two units of dataset 4 trained in this process (workers=1), then a second run of a
    larger plan reuses both and trains only the new seed."""
    warehouse = tmp_path / "w.duckdb"
    variants = plan_variants(TINY, [4], sensitivity=False)
    units = plan_units(TINY, variants, ["imv_tensor"])
    lines: list[str] = []
    suite._worker_cache.clear()
    run_id, trained, reused = run_units(warehouse, TINY, variants, units, lines.append, workers=1)
    assert (trained, reused) == (2, 0)
    assert run_id.startswith("interp-")
    # trained in this very process: its one-dataset cache holds the variant
    assert list(suite._worker_cache) == [variants[0].variant_key]
    assert [line.split(":")[0] for line in lines] == [
        "[1/2] d4 imv_tensor seed 1",
        "[2/2] d4 imv_tensor seed 2",
    ]
    stored = dict(_read(warehouse, "select run_key, test_mse from raw.interp_runs"))
    for line, unit in zip(lines, units, strict=True):
        assert line.split(": test MSE ")[1].split(" (")[0] == f"{stored[unit.run_key]:.4g}"
    assert _read(warehouse, "select suite, status, message from raw.suite_runs") == [
        ("interpretability", "trained", None)
    ]
    details = json.loads(_read(warehouse, "select details from raw.suite_runs")[0][0])
    assert details == {"config_name": "small", "n_units": 2}
    assert _read(
        warehouse,
        "select variant_key, study, parameter, parameter_value from raw.interp_suite_run_variants",
    ) == [(variants[0].variant_key, "main", None, None)]
    assert sorted(
        _read(warehouse, "select suite_run_id, run_key, reused from raw.interp_suite_run_units")
    ) == sorted((run_id, u.run_key, False) for u in units)
    rows = _read(
        warehouse,
        "select run_key, variant_key, model_id, seed, config_name from raw.interp_runs",
    )
    assert sorted(rows) == sorted(
        (u.run_key, variants[0].variant_key, "imv_tensor", u.seed, "small") for u in units
    )
    assert _read(
        warehouse, "select variant_key, variant_id, n_series from raw.interp_variants"
    ) == [(variants[0].variant_key, "d4", 2)]

    # a larger plan: the two stored units reused (listed first), seed 3 trained
    more = dataclasses.replace(TINY, seeds=(1, 2, 3))
    units3 = plan_units(more, variants, ["imv_tensor"])
    lines.clear()
    again, trained, reused = run_units(warehouse, more, variants, units3, lines.append)
    assert (trained, reused) == (1, 2) and again != run_id
    assert lines[:2] == [
        "[1/3] d4 imv_tensor seed 1: stored, reused",
        "[2/3] d4 imv_tensor seed 2: stored, reused",
    ]
    assert lines[2].startswith("[3/3] d4 imv_tensor seed 3: test MSE ")
    linked = _read(
        warehouse,
        f"select run_key, reused from raw.interp_suite_run_units where suite_run_id = '{again}'",
    )
    assert sorted(linked) == sorted((u.run_key, u.seed != 3) for u in units3)
    assert _read(warehouse, "select count(*) from raw.interp_variants") == [(1,)]
    statuses = _read(warehouse, "select status from raw.suite_runs order by started_at")
    assert statuses == [("trained",), ("trained",)]


def test_a_failure_during_the_loop_ends_the_run_failed_with_the_message(tmp_path) -> None:
    """The caller's progress hook fails after the first unit is stored: the suite run is
    recorded ``failed`` with the error's text, the stored unit stays whole, the error goes on."""
    warehouse = tmp_path / "w.duckdb"
    variants = plan_variants(TINY, [4], sensitivity=False)
    units = plan_units(TINY, variants, ["imv_tensor"])

    def progress(line: str) -> None:
        raise RuntimeError("progress hook broke on " + line.split(":")[0])

    suite._worker_cache.clear()
    with pytest.raises(RuntimeError, match="broke on"):
        run_units(warehouse, TINY, variants, units, progress)
    # by default one worker: trained in this process
    assert list(suite._worker_cache) == [variants[0].variant_key]
    assert _read(warehouse, "select status, message from raw.suite_runs") == [
        ("failed", "progress hook broke on [1/2] d4 imv_tensor seed 1")
    ]
    assert _read(warehouse, "select seed from raw.interp_runs") == [(1,)]
    # the failure while reporting reused units ends the next run failed as well
    with pytest.raises(RuntimeError, match=r"broke on \[1/2\] d4 imv_tensor seed 1"):
        run_units(warehouse, TINY, variants, units, progress)
    statuses = _read(warehouse, "select status from raw.suite_runs order by started_at")
    assert statuses == [("failed",), ("failed",)]


def test_units_of_a_shared_variant_store_it_once_with_its_truth(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = dataclasses.replace(TINY, seeds=(1,))
    variants = plan_variants(config, [4, 7], sensitivity=False)
    units = plan_units(config, variants, ["imv_tensor", "tcdf"])
    run_units(warehouse, config, variants, units, lambda _: None)
    assert sorted(_read(warehouse, "select variant_id, n_series from raw.interp_variants")) == [
        ("d4", 2),
        ("d7", 5),
    ]
    assert _read(warehouse, "select count(*) from raw.interp_runs") == [(4,)]
    truth = _read(
        warehouse,
        "select t.target_index, t.source_index, t.lag, t.weight from raw.interp_truth t "
        "join raw.interp_variants v using (variant_key) where v.variant_id = 'd4' "
        "order by 1, 2, 3",
    )
    # dataset 4: two series driving each other at lags 2, 5, 9 with weights 2/5, 1/5, 2/5
    expected = sorted(
        (t, 1 - t, lag, w) for t in (0, 1) for lag, w in ((2, 0.4), (5, 0.2), (9, 0.4))
    )
    assert [r[:3] for r in truth] == [e[:3] for e in expected]
    np.testing.assert_allclose([r[3] for r in truth], [e[3] for e in expected])


def test_unit_key_is_stable_and_names_every_part() -> None:
    (variant,) = plan_variants(TINY, [4], sensitivity=False)
    a = Unit(variant, "tcdf", 1, {"hidden": 2})
    assert a.run_key == Unit(variant, "tcdf", 1, {"hidden": 2}).run_key
    assert len({a.run_key, Unit(variant, "tcdf", 2, {"hidden": 2}).run_key}) == 2
    assert len({a.run_key, Unit(variant, "darnn", 1, {"hidden": 2}).run_key}) == 2
    assert len({a.run_key, Unit(variant, "tcdf", 1, {"hidden": 3}).run_key}) == 2


def test_keys_are_the_documented_hashes() -> None:
    """variant_key: sha256 of [dataset id, sorted params] as JSON, first 16 hex digits;
    run_key: of [variant_key, model, seed, settings] with sorted keys, 16 digits. Stored
    keys must stay the same across versions, or stored units are never reused."""
    import hashlib

    (variant,) = plan_variants(TINY, [4], sensitivity=False)
    text = json.dumps([4, sorted(variant.params)], default=str)
    assert variant.variant_key == hashlib.sha256(text.encode()).hexdigest()[:16]
    unit = Unit(variant, "tcdf", 3, {"hidden": 2, "epochs": 1})
    text = json.dumps([variant.variant_key, "tcdf", 3, {"epochs": 1, "hidden": 2}], sort_keys=True)
    assert unit.run_key == hashlib.sha256(text.encode()).hexdigest()[:16]
