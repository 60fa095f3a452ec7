{#- Figure 4: industry vs company as the grouping / confounder, per system, per perturbation
    and overall, for every robustness measure. -#}
with

scores as (
    {#- the default view: the paper's outcome -#}
    select * from {{ ref('robustness_scores') }} where is_default_outcome
),

aggregated as (
    select
        run_id,
        measure,
        system_id,
        perturbation_id,
        grouping(system_id) as is_all_systems,
        grouping(perturbation_id) as is_all_perturbations,
        avg(raw_score order by system_id, perturbation_id) filter (where confounder = 'industry') as industry_avg,
        avg(raw_score order by system_id, perturbation_id) filter (where confounder = 'company') as company_avg,
        count(raw_score) filter (where confounder = 'industry') as n_industry_scores,
        count(raw_score) filter (where confounder = 'company') as n_company_scores,
    from scores
    group by grouping sets (
        (run_id, measure, system_id),
        (run_id, measure, perturbation_id),
        (run_id, measure)
    )
),

final as (
    select
        run_id,
        cast(case
            when is_all_systems = 0 then 'system'
            when is_all_perturbations = 0 then 'perturbation'
            else 'all'
        end as varchar) as grouped_by,
        system_id,
        perturbation_id,
        measure,
        cast(industry_avg as double) as industry_avg,
        cast(company_avg as double) as company_avg,
        cast(industry_avg - company_avg as double) as industry_minus_company,
        cast(n_industry_scores as integer) as n_industry_scores,
        cast(n_company_scores as integer) as n_company_scores,
        cast(case
            -- equal up to rounding (1e-9 relative) is a tie: the same scores summed in
            -- another order differ in their last bits (the averages are summed in a fixed
            -- order, so a rebuild gives the same bits)
            when abs(industry_avg - company_avg)
                <= 1e-9 * greatest(abs(industry_avg), abs(company_avg)) then 'tie'
            when industry_avg > company_avg then 'industry'
            when industry_avg < company_avg then 'company'
        end as varchar) as more_biased_confounder,
    from aggregated
)

select * from final
