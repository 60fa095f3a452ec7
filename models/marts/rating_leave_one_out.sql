{#- How relative each rating is: the rating with one other system removed,
    or one new system added at any place among the scores, by the rating rule itself
    (int_rating_leave_one_out). -#}
with

checked as (
    select * from {{ ref('int_rating_leave_one_out') }}
),

selected_run as (
    select run_id, study_id from {{ ref('int_runs_selected') }}
),

final as (
    select
        cast(checked.run_id as varchar) as run_id,
        cast(selected_run.study_id as varchar) as study_id,
        cast(checked.metric as varchar) as metric,
        cast(checked.outcome as varchar) as outcome,
        cast(checked.perturbation_id as varchar) as perturbation_id,
        cast(checked.system_id as varchar) as system_id,
        cast(checked.rating as integer) as rating,
        cast(checked.n_systems as integer) as n_systems,
        cast(checked.rating_min_one_removed as integer) as rating_min_one_removed,
        cast(checked.rating_max_one_removed as integer) as rating_max_one_removed,
        cast(checked.n_removals_changing as integer) as n_removals_changing,
        cast(checked.changed_by_removing as varchar) as changed_by_removing,
        cast(checked.changes_if_one_removed as boolean) as changes_if_one_removed,
        cast(checked.rating_min_one_added as integer) as rating_min_one_added,
        cast(checked.rating_max_one_added as integer) as rating_max_one_added,
        cast(checked.changes_if_one_added as boolean) as changes_if_one_added,
    from checked
    left join selected_run
        on selected_run.run_id = checked.run_id
)

select * from final
