{#- Every suite rating is read in the direction its rating spec (seeds.suite_rating_specs)
    gives, and no suite rates a metric without a spec. Rows returned = violations. -#}
with

rated as (
    select distinct 'understanding' as suite, metric, higher_is_better from {{ ref('und_ratings') }}
    union all
    select distinct 'reasoning' as suite, metric, higher_is_better from {{ ref('rsn_ratings') }}
    union all
    select distinct 'interpretability' as suite, metric, higher_is_better from {{ ref('interp_ratings') }}
),

specs as (
    select * from {{ ref('suite_rating_specs') }}
)

select rated.suite, rated.metric, rated.higher_is_better, specs.higher_is_better as spec_direction
from rated
left join specs on specs.suite = rated.suite and specs.metric = rated.metric
where specs.metric is null or specs.higher_is_better <> rated.higher_is_better
