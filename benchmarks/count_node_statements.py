"""The statements dbt ran per model node, from a debug dbt log of one build.

    DBT_LOG_LEVEL_FILE=debug DBT_LOG_PATH=LOGS tsrate build ...
    .venv/bin/python benchmarks/count_node_statements.py LOGS/dbt.log [LOG ...]

A statement is a ``SQL status:`` line (BEGIN and COMMIT included) logged by the node's
thread between dbt's ``Began running node`` and ``Finished running node`` of that node;
the node's kind is read from its ``START sql <kind> model`` line. Prints, per kind, the
nodes, the median and range of statements per node, and the median wall time per node
(Began to Finished, as logged).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from datetime import datetime

LINE = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) \[[^\]]*\] \[([^\]]*)\]: (.*)$")
START = re.compile(r"START (sql|python) (\w+) model ([\w.]+)")


def count(paths: list[str]) -> dict[str, list[tuple[str, int, float]]]:
    """{kind: [(node, statements, seconds)]} over the model nodes of the logs."""
    current: dict[str, tuple[str, datetime]] = {}
    statements: dict[str, int] = defaultdict(int)
    kinds: dict[str, str] = {}
    done: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as log:
            for raw in log:
                match = LINE.match(raw)
                if not match:
                    continue
                stamp, thread, message = match.groups()
                when = datetime.strptime(stamp, "%H:%M:%S.%f")
                if message.startswith("Began running node model."):
                    node = message.split()[-1]
                    current[thread] = (node, when)
                    statements[node] = 0
                elif thread in current:
                    node, began = current[thread]
                    started = START.search(message)
                    if started:
                        kinds[node] = f"{started.group(1)} {started.group(2)}"
                    elif message.startswith("SQL status:"):
                        statements[node] += 1
                    elif message.startswith(f"Finished running node {node}"):
                        seconds = (when - began).total_seconds()
                        done[kinds.get(node, "?")].append((node, statements[node], seconds))
                        del current[thread]
    return done


def main() -> None:
    for kind, nodes in sorted(count(sys.argv[1:]).items()):
        counts = [n for _, n, _ in nodes]
        seconds = [s for _, _, s in nodes]
        print(
            f"{kind}: {len(nodes)} nodes, statements per node median {statistics.median(counts):g} "
            f"(min {min(counts)}, max {max(counts)}), wall per node median "
            f"{statistics.median(seconds) * 1000:.0f} ms, sum {sum(seconds):.2f} s"
        )


if __name__ == "__main__":
    main()
