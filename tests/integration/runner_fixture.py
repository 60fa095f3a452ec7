"""The project behind the ``tiny`` fixture of the dbt runner tests
(tests/integration/test_sweep10_dbt_runner.py, test_ops_build_logs.py): runner_project.py's
tiny project, three small models, one unit case and two data tests (one gated on a named
pipe), in ``TSRATE_PROJECT_DIR``, with its own warehouse and target folder. No test here."""

from __future__ import annotations

from tests.integration.runner_project import PROFILES, PROJECT, schema_yml
from tsrate.platform import dbt_runner as dbt

RUN_INFO = """\
{% if env_var('TINY_BREAK', '') %}select no_such_column from {{ ref('numbers') }}
{% else %}select '{{ env_var("TSRATE_RUN_ID", "unset") }}' as run_id,
    '{{ env_var("TSRATE_STUDY_ID", "unset") }}' as study_id,
    '{{ env_var("TSRATE_RUN_SCOPE", "unset") }}' as scope{% endif %}
"""

#: a data test that fails when a row of doubled is over TINY_LIMIT (default: none is)
NO_BIG = "select m from {{ ref('doubled') }} where m > {{ env_var('TINY_LIMIT', '100') }}\n"

#: a data test that reads a named pipe when TINY_GATE names one: it waits for the test to
#: write its verdict there ('fail' rows fail it)
GATE = """\
{% if env_var('TINY_GATE', '') %}
select verdict from read_csv('{{ env_var("TINY_GATE") }}', columns={'verdict': 'varchar'},
    header=false) where verdict = 'fail'
{% else %}select 1 as verdict where false{% endif %}
"""


def tiny_project(tmp_path, monkeypatch):  # noqa: ANN001 - pytest's fixtures
    """A tiny project as the project dbt builds; its warehouse and target folder (for a
    fixture to ``yield from``: the teardown drops any child started ahead)."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "dbt_project.yml").write_text(PROJECT)
    (project / "profiles.yml").write_text(PROFILES)
    (project / "models" / "numbers.sql").write_text("select 1 as n union all select 2 as n\n")
    (project / "models" / "doubled.sql").write_text("select n * 2 as m from {{ ref('numbers') }}\n")
    (project / "models" / "run_info.sql").write_text(RUN_INFO)
    (project / "models" / "schema.yml").write_text(schema_yml(3, 6))
    (project / "tests" / "no_big.sql").write_text(NO_BIG)
    (project / "tests" / "gate.sql").write_text(GATE)
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(project))
    for name in ("TSRATE_VERBOSE", "TSRATE_ALWAYS_UNIT_TESTS", "TINY_GATE", "TINY_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TINY_BREAK", raising=False)
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "elsewhere" / "tsrate.duckdb"))
    yield project, warehouse, tmp_path / "target"
    dbt.discard_prepared()
    dbt.discard_pending()
