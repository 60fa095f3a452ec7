"""The dbt child started ahead imports what the core Python models import while it waits."""

from __future__ import annotations

import ast

from tsrate.config import project_dir
from tsrate.platform.dbt_child import MODEL_LIBRARIES


def test_the_libraries_imported_ahead_are_those_of_the_core_python_models():
    imported = set()
    for folder in ("intermediate",):
        for path in (project_dir() / "python_models" / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tsrate"):
                    imported.add(node.module)
    assert imported  # the probe found the models
    assert imported == set(MODEL_LIBRARIES)


def test_a_child_started_ahead_is_kept_when_asked_again_and_stopped_when_discarded(tmp_path):
    """`tsrate run` starts the build's dbt child before importing Prefect and the flows; the
    pipeline asks again: the waiting child is kept (not killed and restarted), a different
    selection gets its own child, and discard_prepared stops both."""
    from tsrate.platform import dbt_runner as dbt

    warehouse = tmp_path / "w.duckdb"
    target = tmp_path / "target"
    try:
        dbt.prepare_build(warehouse, None, target)
        first = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        dbt.prepare_build(warehouse, None, target)
        again = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        assert again is first and first.poll() is None
        dbt.prepare_build(warehouse, "window_errors", target)
        other = dbt._PREPARED[dbt._key(warehouse.resolve(), "window_errors", target)][0]
        assert other is not first
    finally:
        dbt.discard_prepared()
    assert first.poll() is not None and other.poll() is not None
    assert not dbt._PREPARED
    # a child that has exited is replaced
    dbt.prepare_build(warehouse, None, target)
    try:
        dead = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        dead.kill()
        dead.wait()
        dbt.prepare_build(warehouse, None, target)
        assert dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0] is not dead
    finally:
        dbt.discard_prepared()
