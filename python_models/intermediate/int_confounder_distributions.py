"""The confounder distributions of the study (paper section 4.2; DESIGN.md method decisions).

Thin wrapper over tsrate.causal.study_distributions: derived from the study's companies in
window_errors (var confounder_distributions: derived, bounded by max_company_distributions),
or the confounder_distributions seed restricted to the study (var confounder_distributions:
seed). Tunables come from int_confounder_distributions.yml.
"""

from tsrate.causal import study_distributions


def model(dbt, session):
    source = dbt.config.get("confounder_distributions")
    bound = dbt.config.get("max_company_distributions")
    if not source or bound is None:
        raise ValueError(
            "int_confounder_distributions: set config confounder_distributions and "
            "max_company_distributions (vars of the same names)"
        )
    companies = dbt.ref("window_errors").select("ticker, industry").distinct().df()
    return study_distributions(
        companies,
        source=str(source),
        override=dbt.ref("confounder_distributions").df(),
        max_company_distributions=int(bound),
    )
