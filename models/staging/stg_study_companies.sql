{#- One row per study and ticker: the company metadata the study was defined with
    (raw.studies.companies, JSON; tsrate.robustness.companies resolves it from the companies
    seed, a price file's columns and --companies files). raw.studies is created by
    tsrate.robustness.studies.ensure_studies; before it exists this view is empty. -#}
{%- set relation = adapter.get_relation(database=source('raw', 'studies').database, schema='raw', identifier='studies') if execute else none %}
with

{% if relation is not none or not execute -%}
source as (
    select * from {{ source('raw', 'studies') }}
),

companies as (
    select
        study_id,
        unnest(
            from_json(
                companies,
                '[{"ticker": "VARCHAR", "company_name": "VARCHAR", "industry": "VARCHAR", "biased_offset": "DOUBLE"}]'
            ),
            recursive := true
        ),
    from source
),
{%- else -%}
companies as (
    select
        null::varchar as study_id,
        null::varchar as ticker,
        null::varchar as company_name,
        null::varchar as industry,
        null::double as biased_offset,
    where false
),
{%- endif %}

renamed as (
    select
        cast(study_id as varchar) as study_id,
        cast(ticker as varchar) as ticker,
        cast(company_name as varchar) as company_name,
        cast(industry as varchar) as industry,
        cast(biased_offset as double) as biased_offset,
    from companies
)

select * from renamed
