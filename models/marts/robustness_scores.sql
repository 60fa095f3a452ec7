{#- The robustness metrics in one long table: WRS (statistical bias) and the worst-case
    APE / PIE (confounding) of every system, perturbation and outcome, with how far each
    score can be trusted: its spread over treatment draws, how it tracks the oracle effect,
    and whether the score separates systems at all. -#}
{#- The default view (var robustness_outcome) must be an outcome the analysis computes (var
    robustness_outcomes): else no row here is the default view, and ratings, system_summary
    and the report's default view would silently hold accuracy metrics only. -#}
{%- if execute and var('robustness_outcome') not in var('robustness_outcomes') %}
    {{ exceptions.raise_compiler_error(
        "var robustness_outcome '" ~ var('robustness_outcome') ~ "' is not among var robustness_outcomes ("
        ~ var('robustness_outcomes') | join(' ')
        ~ "): add it to robustness_outcomes or choose the default view among them"
    ) }}
{%- endif %}
{#- The columns of a row that has no score (a metric the study cannot produce, an outcome a
    system is not analysed on): one list for both, so their shapes cannot drift apart. -#}
{%- set no_score -%}
cast(null as double) as raw_score,
        cast(null as double) as max_score,
        cast(null as integer) as n_pairs,
        cast(null as integer) as n_distributions,
        cast(null as varchar) as worst_distribution_id,
        cast(null as double) as oracle_score,
        cast(null as double) as score_spread,
        cast(null as integer) as n_draws,
        cast(null as integer) as n_draws_left_out,
{%- endset %}
with

wrs as (
    select * from {{ ref('int_wrs_scores_summed') }}
),

effect_scores as (
    select * from {{ ref('int_perturbation_effects_aggregated') }}
),

window_errors as (
    select * from {{ ref('window_errors') }}
),

wrs_rows as (
    select
        run_id,
        system_id,
        perturbation_id,
        outcome,
        metric,
        'wrs' as measure,
        analysis as confounder,
        raw_score,
        max_score,
        n_pairs,
        cast(null as integer) as n_distributions,
        cast(null as varchar) as worst_distribution_id,
        cast(null as double) as oracle_score,
        cast(null as double) as score_spread,
        cast(null as integer) as n_draws,
        cast(null as integer) as n_draws_left_out,
        'sum' as aggregation,
        cast(null as varchar) as estimand,
        cast(null as varchar) as score_reason,
    from wrs
),

{#- A WRS metric the study's shape cannot produce (wrs_industry needs two industries,
    wrs_company an industry with two companies: wrs_pairs then has no pair) still appears,
    for every system x perturbation x outcome of the run's other WRS metric, with a null
    score and the reason, never silently missing. A one-ticker run, which has no WRS metric
    at all, takes those keys from its APE/PIE scores. -#}
wrs_keys as (
    select distinct run_id, system_id, perturbation_id, outcome from wrs_rows
    union
    select distinct run_id, system_id, perturbation_id, outcome from effect_scores
    where run_id not in (select run_id from wrs_rows)
        and run_id in (
            select run_id from window_errors group by run_id having count(distinct ticker) < 2
        )
),

wrs_metrics as (
    select * from (values
        ('wrs_industry', 'industry', 'not defined for this study: wrs_industry compares industries, and the study has fewer than two (give its tickers industries with --companies or the price file''s industry column)'),
        ('wrs_company', 'company', 'not defined for this study: wrs_company compares companies inside one industry, and no industry of the study has two companies')
    ) as metrics (metric, confounder, reason)
),

missing_wrs_rows as (
    select
        wrs_keys.run_id,
        wrs_keys.system_id,
        wrs_keys.perturbation_id,
        wrs_keys.outcome,
        wrs_metrics.metric,
        'wrs' as measure,
        wrs_metrics.confounder,
        {{ no_score }}
        'sum' as aggregation,
        cast(null as varchar) as estimand,
        wrs_metrics.reason as score_reason,
    from wrs_keys
    cross join wrs_metrics
    where not exists (
        select 1 from wrs_rows
        where wrs_rows.run_id = wrs_keys.run_id and wrs_rows.metric = wrs_metrics.metric
    )
),

{#- PIE measures the bias that matching on a confounder removes. In a study with one
    industry (one company) that confounder is constant: every window is favoured alike, the
    matching has nothing to adjust, and PIE is 0 (or matching noise) for every system by
    construction, a score that cannot separate systems. Such a PIE row keeps its keys with a
    null score and the reason, like a WRS metric the study cannot produce. APE stays: with a
    constant confounder the treatments were drawn at random, so APE_m is still an unbiased
    estimate of the perturbation's effect. The study's shape is read from window_errors. -#}
study_shape as (
    select
        run_id,
        count(distinct industry) as n_industries,
        count(distinct ticker) as n_companies,
    from window_errors
    group by run_id
),

undefined_effect_metrics as (
    select * from (values
        ('pie_industry', 'industry', 'not defined for this study: pie_industry measures the bias of confounding by industry, and the study has fewer than two industries (give its tickers industries with --companies or the price file''s industry column)'),
        ('pie_company', 'company', 'not defined for this study: pie_company measures the bias of confounding by company, and the study has fewer than two companies (study two tickers or more)')
    ) as metrics (metric, confounder, reason)
),

effect_checked as (
    select
        effect_scores.*,
        undefined_effect_metrics.reason,
    from effect_scores
    left join study_shape
        on study_shape.run_id = effect_scores.run_id
    left join undefined_effect_metrics
        on undefined_effect_metrics.metric = effect_scores.metric
        and (
            (undefined_effect_metrics.confounder = 'industry' and study_shape.n_industries < 2)
            or (undefined_effect_metrics.confounder = 'company' and study_shape.n_companies < 2)
        )
),

effect_rows as (
    select
        run_id,
        system_id,
        perturbation_id,
        outcome,
        metric,
        measure,
        confounder,
        raw_score,
        cast(null as double) as max_score,
        cast(null as integer) as n_pairs,
        n_distributions,
        worst_distribution_id,
        oracle_score,
        score_spread,
        n_draws,
        n_draws_left_out,
        aggregation,
        estimand,
        cast(null as varchar) as score_reason,
    from effect_checked
    where reason is null
),

undefined_effect_rows as (
    select
        run_id,
        system_id,
        perturbation_id,
        outcome,
        metric,
        measure,
        confounder,
        {{ no_score }}
        aggregation,
        estimand,
        reason as score_reason,
    from effect_checked
    where reason is not null
),

scored as (
    select * from wrs_rows
    union all
    select * from missing_wrs_rows
    union all
    select * from effect_rows
    union all
    select * from undefined_effect_rows
),

{#- A system is analysed on an outcome only when every one of its windows has it (the
    probabilistic outcomes wql and coverage_error_80 need quantile forecasts). A system
    left out of an outcome still appears, for every metric x perturbation that the other
    outcomes give it, with a null score and the reason, never silently missing. -#}
outcome_gaps as (
    {%- for outcome in var('robustness_outcomes') %}
    select
        run_id,
        system_id,
        '{{ outcome }}' as outcome,
        count(*) as n_windows,
        count(*) filter (where not isfinite({{ outcome }}) or {{ outcome }} is null) as n_missing,
    from window_errors
    group by run_id, system_id
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

metric_keys as (
    select distinct run_id, system_id, perturbation_id, metric, measure, confounder, aggregation
    from scored
),

missing_outcome_rows as (
    select
        metric_keys.run_id,
        metric_keys.system_id,
        metric_keys.perturbation_id,
        outcome_gaps.outcome,
        metric_keys.metric,
        metric_keys.measure,
        metric_keys.confounder,
        {{ no_score }}
        metric_keys.aggregation,
        cast(null as varchar) as estimand,
        case
            when outcome_gaps.outcome in ('wql', 'coverage_error_80')
                and outcome_gaps.n_missing = outcome_gaps.n_windows
                then 'not analysed on ' || outcome_gaps.outcome || ': the system gives no quantile forecasts (or they were not stored for this run)'
            else 'not analysed on ' || outcome_gaps.outcome || ': ' || outcome_gaps.n_missing
                || ' of the system''s ' || outcome_gaps.n_windows
                || ' windows have no value, and a system is compared only over all of its windows'
        end as score_reason,
    from metric_keys
    inner join outcome_gaps
        on outcome_gaps.run_id = metric_keys.run_id
        and outcome_gaps.system_id = metric_keys.system_id
        and outcome_gaps.n_missing > 0
    where not exists (
        select 1 from scored
        where scored.run_id = metric_keys.run_id
            and scored.system_id = metric_keys.system_id
            and scored.perturbation_id = metric_keys.perturbation_id
            and scored.metric = metric_keys.metric
            and scored.outcome = outcome_gaps.outcome
    )
),

unioned as (
    select * from scored
    union all
    select * from missing_outcome_rows
),

{#- Average ranks (ties share the mean of their positions) of the estimate and of the
    oracle across the systems of one metric x perturbation x outcome that have both (a
    system without an oracle effect is ranked apart, never among them): their Pearson
    correlation is Spearman's rho. Only finite scores count: a NaN or infinite score (which
    ratings cannot rate either) is no system of the group, neither in its ranks nor in
    n_systems nor in whether the score separates systems. -#}
paired as (
    select
        *,
        coalesce(isfinite(raw_score), false) as has_score,
        coalesce(isfinite(raw_score) and isfinite(oracle_score), false) as has_pair,
    from unioned
),

ranked as (
    select
        *,
        rank() over (partition by run_id, metric, perturbation_id, outcome, has_pair order by raw_score)
            + (count(*) over (partition by run_id, metric, perturbation_id, outcome, has_pair, raw_score) - 1) / 2.0
            as score_rank,
        rank() over (partition by run_id, metric, perturbation_id, outcome, has_pair order by oracle_score)
            + (count(*) over (partition by run_id, metric, perturbation_id, outcome, has_pair, oracle_score) - 1) / 2.0
            as oracle_rank,
    from paired
),

per_group as (
    select
        *,
        count(raw_score) filter (where has_score) over per_score as n_systems,
        min(raw_score) filter (where has_score) over per_score as group_min,
        max(raw_score) filter (where has_score) over per_score as group_max,
        {#- the scored systems' own maximum, for the group's reason: an unscored row's
            max_score (null, or another count of pairs) must not give it another reason -#}
        max(max_score) filter (where has_score) over per_score as group_max_score,
        corr(score_rank, oracle_rank) filter (where has_pair) over per_score
            as oracle_rank_correlation,
        case
            when count(score_reason) over per_score = count(*) over per_score
                and min(score_reason) over per_score = max(score_reason) over per_score
                then min(score_reason) over per_score
        end as group_score_reason,
    from ranked
    window per_score as (partition by run_id, metric, perturbation_id, outcome)
),

{#- separates_systems and separation_reason are facts of the group (metric x perturbation x
    outcome), the same on every row of it: whether its finite scores separate systems, and
    why not. A system's own reason for having no score stays in its score_reason, never in
    separation_reason (a row of a group that separates would read "separates" and a reason
    why not). A group with no finite score names the reason its rows share (e.g. a metric
    the study cannot produce), or else that no system has a finite score. -#}
final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(metric as varchar) as metric,
        cast(measure as varchar) as measure,
        cast(confounder as varchar) as confounder,
        cast(outcome as varchar) as outcome,
        cast(outcome = '{{ var("robustness_outcome") }}' as boolean) as is_default_outcome,
        cast(raw_score as double) as raw_score,
        false as higher_is_better,
        cast(max_score as double) as max_score,
        cast(n_pairs as integer) as n_pairs,
        cast(n_distributions as integer) as n_distributions,
        cast(worst_distribution_id as varchar) as worst_distribution_id,
        cast(oracle_score as double) as oracle_score,
        cast(raw_score - oracle_score as double) as oracle_error,
        cast(oracle_rank_correlation as double) as oracle_rank_correlation,
        cast(score_spread as double) as score_spread,
        cast(n_draws as integer) as n_draws,
        cast(n_draws_left_out as integer) as n_draws_left_out,
        cast(n_systems as integer) as n_systems,
        cast(n_systems > 0 and coalesce(n_systems < 2 or group_max > group_min, false) as boolean)
            as separates_systems,
        cast(case
            when n_systems = 0 and group_score_reason is not null then group_score_reason
            when n_systems >= 2 and group_max = group_min and measure = 'wrs'
                and group_max >= group_max_score - 1e-9
                then 'does not separate systems on this study: every system at the maximum WRS'
            when n_systems >= 2 and group_max = group_min and group_max = 0
                then 'does not separate systems on this study: every system at 0'
            when n_systems >= 2 and group_max = group_min
                then 'does not separate systems on this study: every system at the same score'
            when n_systems = 0
                then 'does not separate systems on this study: no system has a finite score'
        end as varchar) as separation_reason,
        cast(aggregation as varchar) as aggregation,
        cast(estimand as varchar) as estimand,
        cast(score_reason as varchar) as score_reason,
    from per_group
)

select * from final
