{#- Comments as dbt-duckdb writes them, with two changes. Trailing whitespace is stripped:
    a YAML block scalar (`description: >`) ends with a newline, which query tools print as a
    literal `\n`. And the column comments skip dbt-duckdb's second catalog query: dbt's
    persist_docs has already kept only the columns the relation has (validate_doc_columns,
    from one get_columns_in_relation), and dbt-duckdb's macro asked the catalog again for
    every model (a query over DuckDB's catalog per model: about a second of each build's
    node time). tests/integration/test_report_docs.py checks that every documented column of
    the core models carries its comment, and that no comment ends with whitespace. -#}
{% macro duckdb__alter_relation_comment(relation, comment) %}
  {% set escaped_comment = duckdb_escape_comment(comment.rstrip()) %}
  comment on {{ relation.type }} {{ relation }} is {{ escaped_comment }};
{% endmacro %}

{% macro duckdb__alter_column_comment(relation, column_dict) %}
  {% for column_name in column_dict %}
    {% set comment = column_dict[column_name]['description'] %}
    {% set escaped_comment = duckdb_escape_comment(comment.rstrip()) %}
    comment on column {{ relation }}.{{ adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name }} is {{ escaped_comment }};
  {% endfor %}
{% endmacro %}
