"""stg_systems and perturbation_effects (round 11 of the mutation sweep; survivors in
tests/planted/sweep11_sql.json) against the small errors a mutation sweep plants in them.

stg_systems: its one rule with a token to change
is the latest registration of an imported system (``row_number() over (partition by
system_id order by registered_at desc) = 1``). The integration test of ``--metadata``
(tests/integration/test_import_metadata.py) registers each system once, so the first and the
latest registration are the same row there. The hand-computed dbt unit case
``stg_systems_latest_registration_and_the_seed_win`` registers one id three times (the
latest neither first nor last in the table), another once and the seed's own id again: only
the latest of each, the seed row over a registration, and the registered rows' nulls and
training reason pass.

perturbation_effects is the contracted public face of the Python model
int_perturbation_effects_estimated: casts only, nothing a mechanical sweep changes, and a
contract checks names and types, not which column lands under which name. Its unit case
``perturbation_effects_every_column_under_its_own_name`` passes one row whose numbers all
differ (errors planted by hand: a column published under a neighbour's name).

Each test builds its model (and the parents) on an empty warehouse with the unit cases
forced on (a failing case fails the build; see ``tests/integration/builds.unit_cases_pass``)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_stg_systems_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+stg_systems", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_perturbation_effects_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+perturbation_effects", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def test_perturbation_effect_draws_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    """perturbation_effect_draws is the other face of the same Python model: its unit case
    passes a per-draw row whose numbers all differ and a mean row it must leave out."""
    selection = ["--select", "+perturbation_effect_draws", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
