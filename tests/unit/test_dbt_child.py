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
