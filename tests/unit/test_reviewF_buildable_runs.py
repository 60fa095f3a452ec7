"""Which run a build anchors on when none is named: every path picks the same one.

docs/operations.md: "`tsrate build` without `--run-id` builds the newest run that can be
built (`forecasted`, `succeeded` or `publish_failed`)". A run whose publish failed was
built; only its publication is missing, and the next build publishes it. Before, the
default build took it while `tsrate build --study NAME` (the newest run of the study) and a
plain `dbt build` ('latest' in int_runs_selected: tests/integration/test_reviewF_anchor.py)
passed over it and anchored on an older run: two commands, two different sets of marts.

Real parts: a temporary DuckDB warehouse with the raw tables and the study tables of
tsrate's own code, runs inserted with their statuses. The expected runs are picked by hand
from the documented list.
"""

from __future__ import annotations

from tests.support.study_runs import runs_warehouse
from tsrate.platform.warehouse import buildable_run
from tsrate.robustness.studies import newest_complete_run


def test_the_default_build_and_the_study_build_anchor_on_the_same_run(tmp_path):
    con = runs_warehouse(tmp_path / "w.duckdb")
    try:
        # by hand: newest first, r4 failed and r3 build_failed cannot build; r2's publish
        # failed after its build: it is the newest run that can be built
        run_id, _notes = buildable_run(con)
        assert run_id == "r2-publish-failed"
        assert newest_complete_run(con, "s1") == "r2-publish-failed"
    finally:
        con.close()


def test_a_study_build_still_passes_over_runs_that_cannot_build(tmp_path):
    con = runs_warehouse(tmp_path / "w.duckdb")
    try:
        con.execute("update raw.runs set status = 'interrupted' where run_id = 'r2-publish-failed'")
        # by hand: r4 failed, r3 build_failed, r2 interrupted: r1 (succeeded)
        assert newest_complete_run(con, "s1") == "r1-succeeded"
        assert buildable_run(con)[0] == "r1-succeeded"
    finally:
        con.close()
