{#- The public face of int_user_study_tests_recomputed: its columns in a fixed order and type (the contract). -#}
with

computed as (
    select * from {{ ref('int_user_study_tests_recomputed') }}
),

final as (
    select
        cast(test_id as varchar) as test_id,
        cast(source_table as varchar) as source_table,
        cast(test_kind as varchar) as test_kind,
        cast(question as varchar) as question,
        cast(question_after as varchar) as question_after,
        cast(hypothesis as varchar) as hypothesis,
        cast(n as bigint) as n,
        cast(mean as double) as mean,
        cast(sd as double) as sd,
        cast(mean_after as double) as mean_after,
        cast(sd_after as double) as sd_after,
        cast(hypothesised_mean as double) as hypothesised_mean,
        cast(mean_diff as double) as mean_diff,
        cast(sd_diff as double) as sd_diff,
        cast(sd_diff_source as varchar) as sd_diff_source,
        cast(t_statistic as double) as t_statistic,
        cast(dof as bigint) as dof,
        cast(p_value as double) as p_value,
        cast(p_two_sided as double) as p_two_sided,
        cast(alpha as double) as alpha,
        cast(rejected as boolean) as rejected,
        cast(reported_t as double) as reported_t,
        cast(reported_p as double) as reported_p,
        cast(reported_rho as double) as reported_rho,
        cast(is_recomputed as boolean) as is_recomputed,
    from computed
)

select * from final
