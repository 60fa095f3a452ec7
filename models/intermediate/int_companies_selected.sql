{#- The companies the marts label windows with: the selected run's study's own metadata
    (stg_study_companies) where it has a value, else the companies seed (the bundled
    sample's). A warehouse whose runs have no stored study reads the seed only. -#}
with

selected_run as (
    select study_id from {{ ref('int_runs_selected') }}
),

study_companies as (
    select stg_study_companies.*
    from {{ ref('stg_study_companies') }} as stg_study_companies
    inner join selected_run on selected_run.study_id = stg_study_companies.study_id
),

seeded as (
    select
        cast(ticker as varchar) as ticker,
        cast(company_name as varchar) as company_name,
        cast(industry as varchar) as industry,
        cast(biased_offset as double) as biased_offset,
    from {{ ref('companies') }}
),

final as (
    select
        coalesce(study_companies.ticker, seeded.ticker) as ticker,
        coalesce(study_companies.company_name, seeded.company_name) as company_name,
        coalesce(study_companies.industry, seeded.industry) as industry,
        coalesce(study_companies.biased_offset, seeded.biased_offset) as biased_offset,
    from study_companies
    full outer join seeded on seeded.ticker = study_companies.ticker
)

select * from final
