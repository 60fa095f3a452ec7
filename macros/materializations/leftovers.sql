{#- Drop the `<name>__dbt_tmp` and `<name>__dbt_backup` relations that a crashed build of the
    default view or table materialization (dbt's, dbt-duckdb's) left beside the model. Looked
    up in dbt's relation cache: no statement when there is none. `backup_type` is the
    default's backup type ('view' or 'table'). Used by the project's view and table
    materializations. -#}
{% macro tsrate_drop_leftovers(target_relation, backup_type) %}
  {% for leftover in [make_intermediate_relation(target_relation),
                      make_backup_relation(target_relation, backup_type)] %}
    {% set found = load_cached_relation(leftover) %}
    {% if found is not none %}
      {% do drop_relation_if_exists(found) %}
    {% endif %}
  {% endfor %}
{% endmacro %}
