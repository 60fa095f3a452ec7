"""The confounder distributions of the study (paper section 4.2; DESIGN.md method decisions).

Thin wrapper over tsrate.methods.causal.distributions.study_distributions: derived from the study's companies (the
selected run's windows) (var confounder_distributions: derived, bounded by max_company_distributions),
or the confounder_distributions seed restricted to the study (var confounder_distributions:
seed). Tunables come from int_confounder_distributions.yml.
"""

from tsrate.methods.causal.distributions import study_distributions


def model(dbt, session):
    source = dbt.config.get("confounder_distributions")
    bound = dbt.config.get("max_company_distributions")
    if not source or bound is None:
        raise ValueError(
            "int_confounder_distributions: set config confounder_distributions and "
            "max_company_distributions (vars of the same names)"
        )
    # the study's tickers (every window of the selected run) with their industry, as in
    # window_errors; read from the intermediate layer (an intermediate model reads no marts)
    tickers = dbt.ref("int_windows_located").select("ticker").distinct().df()
    industries = dbt.ref("int_companies_selected").df()[["ticker", "industry"]]
    companies = tickers.merge(industries, on="ticker", how="left")
    return study_distributions(
        companies,
        source=str(source),
        override=dbt.ref("confounder_distributions").df(),
        max_company_distributions=int(bound),
    )
