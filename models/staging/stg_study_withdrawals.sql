with

source as (
    select * from {{ source('raw', 'study_withdrawals') }}
),

renamed as (
    select
        cast(study_id as varchar) as study_id,
        cast(system_id as varchar) as system_id,
        cast(withdrawn_at as timestamp) as withdrawn_at,
        cast(reason as varchar) as withdrawal_reason,
    from source
)

select * from renamed
