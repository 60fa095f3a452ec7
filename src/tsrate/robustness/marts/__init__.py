"""The Python steps behind the core's marts (dbt Python models call these functions)."""
