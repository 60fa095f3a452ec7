"""A perturbed twin's bound on the altered series' values, at the bound itself (mutation
sweep: tests/planted/s45_sweep.json). The altered what-if's series is read with the twin
test's own curve and noise (``test_s44_rsn3_twin_wording``), not the generator's.

Values are printed to 2 decimals, so a series can touch 0 exactly: seed 10096 holds an
original whose altered what-if (the falling trend twice as steep) reaches 0.00 and passes
every other test of a twin (each wording's series refutes the other and the wrong options);
seed 146 one whose altered series stays positive but dips to 0.99."""

from __future__ import annotations

from tests.unit.test_s44_rsn3_twin_wording import _observed, _stated
from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc


def original_and_twinned(seed: int, item_id: str):
    items = sc.generate_items(sc.GeneratorConfig(seed=seed, scenarios=24, forecasts=0))
    twinned = {i.params["original_item_id"] for i in items if i.task == "qa_perturbed"}
    (original,) = [i for i in items if i.item_id == item_id]
    scenario = sc.scenario_from_dict(original.params["scenario"])
    text, _ = sm.near_what_ifs(scenario)[original.params["change"]]
    lowest = float(_observed(_stated(text, scenario)[1], scenario).min())
    return original, lowest, original.item_id in twinned


def test_no_twin_whose_altered_series_touches_zero():
    original, lowest, twinned = original_and_twinned(10096, "14e3661562078eed")
    assert original.category == "which_change" and lowest == 0.0
    assert not twinned


def test_a_twin_whose_altered_series_stays_above_zero_below_one_is_kept():
    original, lowest, twinned = original_and_twinned(146, "4a24e889f378d8e2")
    assert original.category == "which_change" and 0 < lowest < 1
    assert twinned
