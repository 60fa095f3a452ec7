"""The reasoning suite (*Language Models Still Struggle to Zero-shot Reason
about Time Series*, arXiv:2404.11757).

Can a language model tell which scenario produced a series (etiological reasoning), answer
questions that need the series (question answering, with and without the series in the
prompt), and use stated context when forecasting (context-aided forecasting)?

Layers: items from the offline procedural generator (:mod:`.scenarios`) or the public
dataset's JSONL schema (:mod:`.dataset`); number encodings (:mod:`.encoding`); prompts and
strict parsing (:mod:`.tasks`); answerers, language models and offline references
(:mod:`.answerers`); raw tables (:mod:`.storage`); the resumable run (:mod:`.suite`); pure
functions of the dbt Python models (:mod:`.marts`); the report (:mod:`.report`); the
``tsrate suite reasoning`` command (:mod:`.cli`). dbt: ``models/reasoning``.
"""
