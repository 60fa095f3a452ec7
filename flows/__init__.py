"""Prefect flows of tsrate, one per file: ingest, forecast, build, and the pipeline that runs them."""
