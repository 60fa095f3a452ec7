"""Local Hugging Face systems for the tests of tsrate.systems.hf_local
(tests/unit/test_sweep8_hf_local_*.py): settings with the documented defaults, a system whose
model and tokenizer are already loaded, and a dbt project var as the project file states it.
No test here.
"""

from __future__ import annotations

from tsrate.systems.hf_local import HfLocalSystem, HfSettings


def settings(**kw) -> HfSettings:
    values = {"model_path": "", "max_new_tokens": 256, "batch_size": 8, "device": "cpu"}
    return HfSettings(**{**values, **kw})


def loaded(model, tokenizer, **kw) -> HfLocalSystem:  # noqa: ANN001
    """A system whose model and tokenizer are already there (``load`` returns at once)."""
    system = HfLocalSystem("my_lm", settings(**kw))
    system._model, system._tokenizer = model, tokenizer
    return system


def project_var(name: str):  # noqa: ANN201
    import yaml

    return yaml.safe_load(open("dbt_project.yml"))["vars"][name]
