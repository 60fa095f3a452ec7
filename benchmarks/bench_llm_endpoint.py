"""LLM endpoint throughput: 1,000 prompts against a local chat-completions server.

The server (stdlib, threaded) answers every request after a fixed delay, so with
``concurrency`` requests in flight the ideal wall time is prompts × delay / concurrency;
the printed overhead is how far tsrate (prompt rendering, the openai client, parsing) is
from that bound. No response cache (every prompt reaches the server).

    .venv/bin/python benchmarks/bench_llm_endpoint.py [prompts] [delay_s] [concurrency]
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from tsrate.systems.base import ForecastBatch
from tsrate.systems.llm import LlmSettings, LlmSystem

HORIZON = 20


def serve(delay_s: float) -> ThreadingHTTPServer:
    reply = ", ".join(f"{100 + i}.00" for i in range(HORIZON))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers

        def do_POST(self) -> None:  # noqa: N802
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay_s)
            body = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": payload["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    prompts = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    delay_s = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    concurrency = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    server = serve(delay_s)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings = LlmSettings(url, "bench", "", concurrency=concurrency, retries=0)
    rng = np.random.default_rng(0)
    contexts = 100 + np.cumsum(rng.normal(size=(prompts, 80)), axis=1)
    batch = ForecastBatch(
        "BENCH",
        "P0",
        np.arange(prompts).astype("datetime64[D]"),
        contexts,
        HORIZON,
        np.zeros((prompts, HORIZON)),
        (0.0, 1.0),
    )
    system = LlmSystem("bench", settings)
    started = time.perf_counter()
    out = system.predict(batch)
    wall = time.perf_counter() - started
    server.shutdown()
    ideal = prompts * delay_s / concurrency
    print(
        f"{prompts} prompts, server delay {delay_s * 1000:.0f} ms, concurrency {concurrency}: "
        f"wall {wall:.2f} s, server-bound ideal {ideal:.2f} s, ratio {wall / ideal:.2f}, "
        f"{prompts / wall:.0f} prompts/s; forecasts {out.shape}"
    )


if __name__ == "__main__":
    main()
