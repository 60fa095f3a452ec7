with

source as (
    select * from {{ source('raw', 'perturbed_inputs') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(ticker as varchar) as ticker,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(price_date as date) as price_date,
        cast(position as integer) as study_position,
        cast(clean_value as double) as clean_value,
        cast(input_value as double) as input_value,
        cast(is_perturbed as boolean) as is_perturbed,
    from source
)

select * from renamed
