"""tsrate: rate time-series AI models for robustness and accuracy.

The library behind the DuckDB warehouse: price sources, windows and perturbations,
forecasting systems, warehouse I/O, statistics and ratings. Flows (``flows/``)
orchestrate it; dbt models (``models/``, ``python_models/``) select, join and score.
"""

__version__ = "0.1.0"


class TsrateError(Exception):
    """An error a user can act on; the CLI prints its message without a traceback."""
