"""The tiny dbt project the dbt runner tests build (tests/integration/test_sweep10_dbt_runner.py
and test_sweep10_dbt_runner_build.py): its dbt_project.yml, its profiles.yml as the real one
and the schema.yml of its unit case. No test here."""

from __future__ import annotations

PROJECT = """\
name: tiny
version: "0.1.0"
config-version: 2
profile: tiny
model-paths: ["models"]
test-paths: ["tests"]
models:
  tiny:
    +materialized: table
"""

#: as the real profiles.yml: the file by name in the child's folder, the access mode and
#: memory limit the child's own read-only connections match
PROFILES = """\
tiny:
  target: local
  outputs:
    local:
      type: duckdb
      path: "{{ env_var('TSRATE_DBT_WAREHOUSE', '') or env_var('TSRATE_WAREHOUSE', 'x.duckdb') }}"
      threads: "{{ env_var('TSRATE_DBT_THREADS', '1') | int }}"
      keep_open: true
      config_options:
        access_mode: "{{ env_var('TSRATE_DBT_ACCESS_MODE', 'automatic') }}"
      settings:
        memory_limit: "{{ env_var('TSRATE_DUCKDB_MEMORY_LIMIT', '4GB') }}"
"""

SCHEMA = """\
version: 2
models:
  - name: doubled
    columns:
      - name: m
        data_tests:
          - not_null
unit_tests:
  - name: doubled_doubles
    model: doubled
    given:
      - input: ref('numbers')
        rows:
          - {n: GIVEN}
    expect:
      rows:
        - {m: EXPECTED}
"""


def schema_yml(given: int, expected: int) -> str:
    """The tiny project's schema.yml: its unit case doubles ``given`` and expects
    ``expected``."""
    return SCHEMA.replace("GIVEN", str(given)).replace("EXPECTED", str(expected))
