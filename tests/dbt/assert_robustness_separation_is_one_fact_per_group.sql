{#- robustness_scores' separates_systems and separation_reason are facts of the group
    (run x metric x perturbation x outcome): one value of each on every row of it, and
    separation_reason is null exactly when separates_systems is true. Rows returned =
    violating groups. -#}
select
    run_id,
    metric,
    perturbation_id,
    outcome,
    count(distinct separates_systems) as n_flags,
    count(distinct coalesce(separation_reason, '')) as n_reasons,
from {{ ref('robustness_scores') }}
group by run_id, metric, perturbation_id, outcome
having count(distinct separates_systems) <> 1
    or count(*) filter (where separates_systems is null) > 0
    or count(distinct coalesce(separation_reason, '')) <> 1
    or count(*) filter (where separates_systems and separation_reason is not null) > 0
    or count(*) filter (where not separates_systems and separation_reason is null) > 0
