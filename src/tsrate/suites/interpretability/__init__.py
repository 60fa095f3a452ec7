"""The interpretability suite (issue 9, ../shared/papers/attention-interpretability.txt).

Synthetic datasets with known causal structure (:mod:`.datasets`), attention-based torch
forecasters (:mod:`.models`), training (:mod:`.training`), correctness measures
(:mod:`.measures`), raw tables (:mod:`.storage`), the resumable plan (:mod:`.suite`) and the
``tsrate suite interpretability`` command (:mod:`.cli`). dbt: ``models/interpretability``.
"""
