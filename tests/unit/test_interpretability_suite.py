"""The suite plan: variants, units, keys shared across studies, configuration overrides."""

from __future__ import annotations

import pytest

from tsrate import TsrateError
from tsrate.suites import SUITES, get_suite
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
    # the default point of a grid (f = 0.3, sigma = 0.1, N = 5) is the main variant itself
    by_key = {}
    for v in variants:
        by_key.setdefault(v.variant_key, set()).add(v.study)
    d2 = next(v for v in main if v.dataset_id == 2)
    assert by_key[d2.variant_key] == {"main", "sensitivity_f", "sensitivity_sigma", "sensitivity_n"}
    units = plan_units(SMALL, variants)
    assert len({u.run_key for u in units}) == len(units)
    # main: 10 variants x 5 models x 2 seeds; sensitivity: 12 new variants x 2 models x 1 seed
    assert len(units) == 10 * 5 * 2 + 12 * 2


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
