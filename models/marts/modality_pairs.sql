{#- ARQ2 per model (paper Figure 8): the numeric and the numeric+image variant of one model
    (systems seed base_model), compared on every metric over the perturbations both variants
    were rated on. -#}
with

ratings as (
    {#- the default view: the paper's outcome (and every accuracy metric) -#}
    {#- scores that could not be computed (null raw_score, 'not rated: ...') are not averaged -#}
    select * from {{ ref('ratings') }} where is_default_outcome and raw_score is not null
),

systems as (
    select * from {{ ref('stg_systems') }}
),

variants as (
    select
        system_id,
        base_model,
        modality,
    from systems
    where nullif(trim(base_model), '') is not null
        and modality in ('numeric', 'numeric+image')
),

rated as (
    select
        ratings.run_id,
        ratings.metric,
        ratings.metric_family,
        ratings.perturbation_id,
        ratings.system_id,
        ratings.raw_score,
        ratings.rating,
        ratings.rating_levels,
        ratings.higher_is_better,
        variants.base_model,
        variants.modality,
    from ratings
    inner join variants
        on variants.system_id = ratings.system_id
),

paired as (
    select
        uni.run_id,
        uni.base_model,
        uni.metric,
        uni.metric_family,
        uni.perturbation_id,
        uni.system_id as numeric_system_id,
        multi.system_id as multimodal_system_id,
        uni.raw_score as numeric_raw_score,
        multi.raw_score as multimodal_raw_score,
        uni.rating as numeric_rating,
        multi.rating as multimodal_rating,
        uni.rating_levels,
        uni.higher_is_better,
    from rated as uni
    inner join rated as multi
        on multi.run_id = uni.run_id
        and multi.base_model = uni.base_model
        and multi.metric = uni.metric
        and multi.perturbation_id = uni.perturbation_id
        and multi.modality = 'numeric+image'
    where uni.modality = 'numeric'
),

averaged as (
    select
        run_id,
        base_model,
        metric,
        any_value(metric_family) as metric_family,
        numeric_system_id,
        multimodal_system_id,
        count(*) as n_perturbations,
        string_agg(perturbation_id, ' ' order by perturbation_id) as perturbation_ids,
        avg(numeric_raw_score order by perturbation_id) as numeric_avg_raw_score,
        avg(multimodal_raw_score order by perturbation_id) as multimodal_avg_raw_score,
        avg(numeric_rating order by perturbation_id) as numeric_avg_rating,
        avg(multimodal_rating order by perturbation_id) as multimodal_avg_rating,
        any_value(rating_levels) as rating_levels,
        bool_and(higher_is_better) as higher_is_better,
    from paired
    group by run_id, base_model, metric, numeric_system_id, multimodal_system_id
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(base_model as varchar) as base_model,
        cast(metric as varchar) as metric,
        cast(metric_family as varchar) as metric_family,
        cast(numeric_system_id as varchar) as numeric_system_id,
        cast(multimodal_system_id as varchar) as multimodal_system_id,
        cast(n_perturbations as integer) as n_perturbations,
        cast(perturbation_ids as varchar) as perturbation_ids,
        cast(numeric_avg_raw_score as double) as numeric_avg_raw_score,
        cast(multimodal_avg_raw_score as double) as multimodal_avg_raw_score,
        cast(multimodal_avg_raw_score - numeric_avg_raw_score as double) as multimodal_minus_numeric,
        cast(numeric_avg_rating as double) as numeric_avg_rating,
        cast(multimodal_avg_rating as double) as multimodal_avg_rating,
        cast(rating_levels as integer) as rating_levels,
        cast(higher_is_better as boolean) as higher_is_better,
        cast(case
            -- equal up to rounding (1e-9 relative): averages of the same scores summed in
            -- another order differ in their last bits, and that is no difference
            when abs(multimodal_avg_raw_score - numeric_avg_raw_score)
                <= 1e-9 * greatest(abs(multimodal_avg_raw_score), abs(numeric_avg_raw_score))
                then 'tie'
            when (multimodal_avg_raw_score > numeric_avg_raw_score) = higher_is_better
                then 'numeric+image'
            else 'numeric'
        end as varchar) as better_variant,
    from averaged
)

select * from final
