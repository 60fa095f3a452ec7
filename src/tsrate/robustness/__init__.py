"""The robustness suite (the core): the study and its check, price sources, forecasting
(plan, execute, distributed), black-box export and import, the marts' Python steps, and the
report."""
