{#- Grain test: no two rows share the given combination of columns. -#}
{% test unique_combination(model, combination_of_columns) %}
select
    {{ combination_of_columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1
{% endtest %}
