"""The flows the CLI and ``tsrate serve`` start, named by entrypoint as ``prefect.yaml`` names them.

The flows (``flows/``) compose the library's steps into Prefect flows; the library never
imports them. The CLI is one more trigger of those flows, like a deployment: it names a flow
by its entrypoint (``path/file.py:object``, the form ``prefect.yaml`` uses) and loads it when
the command runs, so the code depends only one way (flows on the library) and the CLI starts
exactly the flow a deployment runs.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

PIPELINE_FLOW = "flows/pipeline.py:pipeline_flow"
TRAIN_VIT_FLOW = "flows/train_vit.py:train_vit_flow"
UNDERSTANDING_FLOW = "flows/understanding.py:understanding_flow"
REASONING_FLOW = "flows/reasoning.py:reasoning_flow"
INTERPRETABILITY_FLOW = "flows/interpretability.py:interpretability_flow"


def load_entrypoint(entrypoint: str) -> Any:
    """The object an entrypoint names; its file is imported as its dotted module
    (``flows/pipeline.py`` as ``flows.pipeline``), so each flow is one object however it is
    reached. An installed ``flows`` package is used; else the one beside ``dbt_project.yml``."""
    from tsrate.config import project_dir

    path, _, name = entrypoint.partition(":")
    module_name = path.removesuffix(".py").replace("/", ".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name not in {module_name.partition(".")[0], module_name}:
            raise
        sys.path.insert(0, str(project_dir()))
        module = importlib.import_module(module_name)
    return getattr(module, name)
