{#- Column comments as dbt-duckdb writes them, without its second catalog query: dbt's
    persist_docs has already kept only the columns the relation has (validate_doc_columns,
    from one get_columns_in_relation), and dbt-duckdb's macro asked the catalog again for
    every model (a query over DuckDB's catalog per model: about a second of each build's
    node time). Same statements, one query fewer; tests/integration/test_report_docs.py checks
    that every documented column of the core models carries its comment. -#}
{% macro duckdb__alter_column_comment(relation, column_dict) %}
  {% for column_name in column_dict %}
    {% set comment = column_dict[column_name]['description'] %}
    {% set escaped_comment = duckdb_escape_comment(comment) %}
    comment on column {{ relation }}.{{ adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name }} is {{ escaped_comment }};
  {% endfor %}
{% endmacro %}
