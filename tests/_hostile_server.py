"""Fake OpenAI-compatible servers on 127.0.0.1 whose answers a test scripts (honest or hostile).

:class:`FakeServer` answers ``GET /v1/models`` with one model and every chat or completion
request with a top-k list, through a ``reply(server, n, payload) -> Reply`` function that a
test replaces: redirects, drip-fed bodies, ``Retry-After``, another model after N requests,
duplicate or impossible log-probabilities, malformed JSON, error bodies. Every request is
recorded (method, path, headers, payload). Servers are started and stopped by ``with``; a
drip-fed answer stops at the client's hang-up or after ``drip_limit_s``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "judge-model"
KEY = "sk-FAKE-0123456789abcdef"


@dataclass
class Reply:
    """What the server sends: status, headers, body; ``drip`` seconds between body bytes."""

    status: int = 200
    headers: dict = field(default_factory=dict)
    body: bytes | str | dict = b""
    drip: float | None = None

    def data(self) -> bytes:
        if isinstance(self.body, dict):
            return json.dumps(self.body).encode()
        return self.body.encode() if isinstance(self.body, str) else self.body


def verdict_logprobs(payload: dict) -> tuple[float, float]:
    """A fixed, prompt-dependent pair of verdict log-probabilities (a possible distribution)."""
    text = json.dumps(payload.get("messages") or payload.get("prompt"), sort_keys=True)
    u = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32
    p_a = 0.1 + 0.8 * u
    return math.log(p_a * 0.9), math.log((1 - p_a) * 0.9)


def top_answer(
    entries: list[tuple[str, float]], model: str | None = MODEL, chat: bool = True, **extra
) -> dict:
    """An answer holding ``entries`` as the top-k list (chat or completion layout)."""
    if chat:
        first = {"token": entries[0][0] if entries else "A", "logprob": -0.1}
        first["top_logprobs"] = [{"token": t, "logprob": v} for t, v in entries]
        logprobs: dict = {"content": [first]}
    else:
        logprobs = {"tokens": ["A"], "top_logprobs": [dict(entries)]}
    answer = {"choices": [{"index": 0, "logprobs": logprobs}], "usage": {"prompt_tokens": 7}}
    if model is not None:
        answer["model"] = model
    return {**answer, **extra}


def honest(server: FakeServer, n: int, payload: dict) -> Reply:
    """The verdict pair of :func:`verdict_logprobs` and one other token, from :data:`MODEL`."""
    la, lb = verdict_logprobs(payload)
    return Reply(body=top_answer([("A", la), ("B", lb), ("C", math.log(0.05))]))


class FakeServer:
    """A scripted OpenAI-compatible server on a free loopback port.

    Parameters
    ----------
    reply : callable, optional
        ``reply(server, n, payload) -> Reply`` for the n-th (1-based) POST; default
        :func:`honest`.
    drip_limit_s : float
        A drip-fed body stops after this many seconds (bounded tests even on a client that
        would wait forever).
    """

    def __init__(self, reply: Callable[..., Reply] | None = None, drip_limit_s: float = 8.0):
        self.reply = reply or honest
        self.drip_limit_s = drip_limit_s
        self.requests: list[dict[str, Any]] = []
        self.posts = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                payload = json.loads(raw) if raw else {}
                with owner._lock:
                    owner.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers),
                            "payload": payload,
                        }
                    )
                    if self.command == "POST":
                        owner.posts += 1
                    n = owner.posts
                if self.command == "GET" and self.path.endswith("/v1/models"):
                    reply = Reply(body={"data": [{"id": MODEL, "owned_by": "test"}]})
                elif self.command == "GET":
                    reply = Reply(status=404, body="not here")
                else:
                    reply = owner.reply(owner, n, payload)
                owner._send(self, reply)

            do_GET = do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def _send(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        data = reply.data()
        try:
            handler.send_response(reply.status)
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
            headers.update(reply.headers)
            for k, v in headers.items():
                handler.send_header(k, v)
            handler.end_headers()
            if reply.drip is None:
                handler.wfile.write(data)
                return
            stop = time.monotonic() + self.drip_limit_s
            for i in range(len(data)):
                if time.monotonic() > stop:
                    handler.wfile.write(data[i:])  # the rest at once: a bounded test
                    break
                handler.wfile.write(data[i : i + 1])
                handler.wfile.flush()
                time.sleep(reply.drip)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up (its deadline)

    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of every request received (None where absent)."""
        return [r["headers"].get("Authorization") for r in self.requests]

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
