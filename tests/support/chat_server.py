"""A local OpenAI-compatible chat-completions server for the LLM tests, and the tiny model
that answers it.

The server (stdlib ``http.server`` in a thread) answers ``POST /v1/chat/completions`` with
whatever its responder returns. :class:`TinyDigitLM` is a responder: a tiny randomly
initialised GPT-2 made here, character-level, its digits chosen greedily under the fixed
:data:`TEMPLATE` (so the reply is always a number list, of as many characters as
``max_tokens`` allows). :func:`settings` points an LLM system at such a server.

Shared by the unit tests (tests/unit/test_llm.py and others) and the integration tests; no
test here. Needs neither openai nor torch to import (TinyDigitLM imports torch when made).
"""

from __future__ import annotations

import json
import string
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.forecast_batch import D
from tsrate.systems.llm import LlmSettings

TEMPLATE = "ddd.dd, "

Responder = Callable[[dict], tuple[int, str | list[str]]]


class ChatServer:
    """A local OpenAI-compatible server; ``responder(payload) -> (status, content)``
    (``content`` a list of texts: one choice each)."""

    def __init__(self, responder: Responder, delay_s: float = 0.0):
        self.responder = responder
        self.delay_s = delay_s
        self.payloads: list[dict] = []
        self.replies: dict[str, str] = {}  # user prompt -> reply
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.payloads.append(payload)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    status, content = server.responder(payload)
                finally:
                    with server.lock:
                        server.in_flight -= 1
                if status == 200:
                    with server.lock:
                        prompt = payload["messages"][-1]["content"]
                        if not isinstance(prompt, str):  # content parts (text + image)
                            prompt = json.dumps(prompt)
                        server.replies[prompt] = content
                    body = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": payload["model"],
                        "choices": [
                            {
                                "index": index,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                            # a list: several choices (a server honouring `n`)
                            for index, text in enumerate(
                                content if isinstance(content, list) else [content]
                            )
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                else:
                    body = {"error": {"message": content, "type": "test", "code": status}}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class TinyDigitLM:
    """A 2-layer GPT-2 over characters; greedy digits inside a fixed number template."""

    def __init__(self):
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel

        self.torch = torch
        self.chars = list(string.digits + string.ascii_letters + " .,:;()[]-+\n")
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.unknown = len(self.chars)
        torch.manual_seed(0)
        config = GPT2Config(
            vocab_size=len(self.chars) + 1,
            n_positions=1024,
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=self.unknown,
            eos_token_id=self.unknown,
        )
        self.model = GPT2LMHeadModel(config).eval()
        self.digits = torch.tensor([self.index[c] for c in string.digits])

    def __call__(self, payload: dict) -> tuple[int, str]:
        torch = self.torch
        text = "\n".join(m["content"] for m in payload["messages"])
        ids = [self.index.get(c, self.unknown) for c in text][-900:]
        out = []
        with torch.no_grad():
            for position in range(int(payload["max_tokens"])):
                slot = TEMPLATE[position % len(TEMPLATE)]
                if slot == "d":
                    logits = self.model(torch.tensor([ids])).logits[0, -1, self.digits]
                    char = string.digits[int(torch.argmax(logits))]
                else:
                    char = slot
                out.append(char)
                ids.append(self.index[char])
        return 200, "".join(out).rstrip(", ")


def settings(base_url: str, **overrides) -> LlmSettings:
    values = {
        "base_url": base_url,
        "model": "tiny-digits",
        "api_key_env": "",
        "max_tokens": len(TEMPLATE) * (D + 1),  # one value more than asked: truncated
        "timeout_s": 10.0,
        "retries": 2,
        "backoff_s": 0.01,
        "concurrency": 4,
    }
    values.update(overrides)
    return LlmSettings(**values)
