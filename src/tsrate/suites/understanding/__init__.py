"""The understanding suite (*Evaluating Large Language Models on Time
Series Feature Understanding*, arXiv:2404.16563).

Seeded synthetic series carrying exactly one feature of the paper's taxonomy, with labels and
qualitative + quantitative descriptions (:mod:`.generators`); the eight text formats of its
Appendix F (:mod:`.formats`); the tasks, their versioned prompts, strict answer parsing and
scoring (:mod:`.tasks`); offline reference answerers (:mod:`.analyst`); raw tables
(:mod:`.storage`); the resumable plan (:mod:`.suite`); pure functions behind the dbt Python
models (:mod:`.marts`); the HTML report (:mod:`.report`) and ``tsrate suite understanding``
(:mod:`.cli`). dbt: ``models/understanding`` and ``python_models/und_*.py``.
"""
