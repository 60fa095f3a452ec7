"""The interpretability suite (Barić et al., *Benchmarking Attention-Based
Interpretability of Deep Learning in Multivariate Time Series Predictions*, Entropy 2021,
doi:10.3390/e23020143).

Synthetic datasets with known causal structure (:mod:`.datasets`), attention-based torch
forecasters (:mod:`.models`), training (:mod:`.training`), correctness measures
(:mod:`.measures`), raw tables (:mod:`.storage`), the resumable plan (:mod:`.suite`) and the
``tsrate suite interpretability`` command (:mod:`.cli`). dbt: ``models/interpretability``.
"""
