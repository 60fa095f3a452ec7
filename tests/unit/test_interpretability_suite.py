"""The suite plan: variants, units, keys shared across studies, configuration overrides."""

from __future__ import annotations

import pytest

from tsrate import TsrateError
from tsrate.suites import SUITES, get_suite
from tsrate.suites.interpretability.datasets import REFERENCE_SENSITIVITY_LAGS, random_lag_sets
from tsrate.suites.interpretability.suite import (
    PAPER,
    SMALL,
    plan_units,
    plan_variants,
    resolve_config,
)


def test_small_plan_covers_all_ten_datasets_and_the_sensitivity_grid():
    variants = plan_variants(SMALL)
    main = [v for v in variants if v.study == "main"]
    assert sorted({v.dataset_id for v in main}) == list(range(1, 11))
    studies = {(v.study, v.dataset_id) for v in variants if v.study != "main"}
    assert studies == {
        ("sensitivity_f", 2), ("sensitivity_f", 7),
        ("sensitivity_sigma", 2), ("sensitivity_sigma", 7),
        ("sensitivity_n", 2), ("sensitivity_n", 5),
    }  # fmt: skip
    # the default point of dataset 7's grids (f = 0.3, sigma = 0.1) is the main variant;
    # dataset 2 of the f and sigma studies is the reference code's (its own lag sets), one
    # variant shared by both studies at the default point
    by_key = {}
    for v in variants:
        by_key.setdefault(v.variant_key, set()).add(v.study)
    d7 = next(v for v in main if v.dataset_id == 7)
    assert by_key[d7.variant_key] == {"main", "sensitivity_f", "sensitivity_sigma"}
    d2ref = next(v for v in variants if v.variant_id == "d2ref")
    assert by_key[d2ref.variant_key] == {"sensitivity_f", "sensitivity_sigma"}
    assert dict(d2ref.params)["lag_sets"] == REFERENCE_SENSITIVITY_LAGS
    # the N study: random lag sets from 5..9, the same draw for datasets 2 and 5 at each N
    n_study = {(v.dataset_id, v.parameter_value): v for v in variants if v.study == "sensitivity_n"}
    for n in SMALL.sensitivity_n:
        sets = dict(n_study[(2, float(n))].params)["lag_sets"]
        assert sets == dict(n_study[(5, float(n))].params)["lag_sets"]
        assert sets == random_lag_sets(n, SMALL.data_seed) and len(sets) == n
    units = plan_units(SMALL, variants)
    assert len({u.run_key for u in units}) == len(units)
    # main: 10 variants x 5 models x 2 seeds; sensitivity: 15 new variants x 2 models x 1 seed
    assert len(units) == 10 * 5 * 2 + 15 * 2


def test_keys_change_with_what_determines_a_unit():
    base = plan_units(SMALL, plan_variants(SMALL, [4], sensitivity=False), ["tcdf"])
    again = plan_units(SMALL, plan_variants(SMALL, [4], sensitivity=False), ["tcdf"])
    assert [u.run_key for u in base] == [u.run_key for u in again]
    import dataclasses

    longer = dataclasses.replace(SMALL, length=SMALL.length + 1)
    other = plan_units(longer, plan_variants(longer, [4], sensitivity=False), ["tcdf"])
    assert not {u.run_key for u in base} & {u.run_key for u in other}


def test_paper_plan_caps_hidden_units_on_the_ising_lattice():
    units = plan_units(PAPER, plan_variants(PAPER, [9, 2], sensitivity=False))
    hidden = {u.variant.dataset_id: u.settings["hidden"] for u in units}
    assert hidden == {9: PAPER.wide_hidden, 2: PAPER.settings.hidden}
    assert {u.variant.n_series for u in units if u.variant.dataset_id == 9} == {100}


def test_unknown_names_are_refused_clearly():
    with pytest.raises(TsrateError, match=r"unknown dataset\(s\) \[0\]"):
        plan_variants(SMALL, [0])
    with pytest.raises(TsrateError, match=r"unknown model\(s\) \['lstm'\]"):
        plan_units(SMALL, plan_variants(SMALL, [2]), ["lstm"])
    with pytest.raises(TsrateError, match="unknown suite 'nope'"):
        get_suite("nope")
    assert "interpretability" in SUITES


def test_resolve_config_applies_overrides_and_names_bad_fields():
    config = resolve_config(
        "small", seeds=[7], overrides={"length": 300, "settings": {"epochs": 1}}
    )
    assert config.seeds == (7,) and config.length == 300 and config.settings.epochs == 1
    assert config.settings.hidden == SMALL.settings.hidden
    with pytest.raises(TsrateError, match="unknown configuration fields"):
        resolve_config("small", overrides={"lenght": 3})
    with pytest.raises(TsrateError, match="small or paper"):
        resolve_config("huge")
