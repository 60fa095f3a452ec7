"""Prefect flows of tsrate, one per file: ingest, forecast, build, and the pipeline that runs them."""

import logging
import os

# Prefect's temporary local API server must start within this many seconds (Prefect's
# default is 20). On a loaded 2-core machine it can take longer, and a nightly run should
# not fail for that; a served Prefect (tsrate serve) does not use it.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")

# Prefect's client logs every HTTP request to its local API at INFO through httpx: noise in a
# run's output (dozens of lines per flow), never what a user is looking for.
logging.getLogger("httpx").setLevel(logging.WARNING)
