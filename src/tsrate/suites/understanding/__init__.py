"""The understanding suite (issue 8, ../shared/papers/llm-feature-understanding.txt).

Seeded synthetic series carrying exactly one feature of the paper's taxonomy, with labels and
qualitative + quantitative descriptions (:mod:`.generators`); the eight text formats of its
Appendix F (:mod:`.formats`); the tasks, their versioned prompts, strict answer parsing and
scoring (:mod:`.tasks`); offline reference answerers (:mod:`.analyst`); raw tables
(:mod:`.storage`); the resumable plan (:mod:`.suite`); pure functions behind the dbt Python
models (:mod:`.marts`); the HTML report (:mod:`.report`) and ``tsrate suite understanding``
(:mod:`.cli`). dbt: ``models/understanding`` and ``python_models/und_*.py``.
"""
