"""The platform every stage stands on: the warehouse file and its raw schema, runs, the writer
lock, the dbt runner and its child process, publishing the snapshot, read-only queries, and
Prefect orchestration."""
