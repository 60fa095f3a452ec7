"""stg_systems (round 11 of the mutation sweep; survivors in tests/planted/sweep11_sql.json)
against the small errors a mutation sweep plants in it: its one rule with a token to change
is the latest registration of an imported system (``row_number() over (partition by
system_id order by registered_at desc) = 1``). The integration test of ``--metadata``
(tests/integration/test_import_metadata.py) registers each system once, so the first and the
latest registration are the same row there. The hand-computed dbt unit case
``stg_systems_latest_registration_and_the_seed_win`` registers one id three times (the
latest neither first nor last in the table), another once and the seed's own id again: only
the latest of each, the seed row over a registration, and the registered rows' nulls and
training reason pass.

``test_stg_systems_unit_case_passes`` builds stg_systems (and its seed) on an empty
warehouse with the unit cases forced on (a failing case fails the build; see
``tests/integration/builds.unit_cases_pass``)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass

pytestmark = pytest.mark.slow


def test_stg_systems_unit_case_passes(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+stg_systems", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
