"""A fake OpenAI-compatible embeddings server on loopback: real HTTP (uvicorn in a thread), so litellm's
own client, timeouts and error mapping are what the tests exercise.

Vectors are bags of hashed words (similar texts point the same way), `dimensions` long; the server can
be switched to answer 503 (`down`), to hold every request until `release()` (`hang`: a slow provider),
or to answer vectors of another size (`dimensions`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from orrery.text import analyze


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bag_of_words(text: str, dimensions: int) -> list[float]:
    """A deterministic vector: one count per hashed stem (never all zeros)."""
    out = [0.0] * dimensions
    for word in analyze(text) or [text]:
        out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimensions] += 1.0
    return out


class FakeEmbeddings:
    """`POST /v1/embeddings` as OpenAI answers it (float lists or base64, whichever is asked for)."""

    def __init__(self, dimensions: int = 16) -> None:
        self.dimensions = dimensions
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        self._released = threading.Event()
        self.app = FastAPI()
        self.app.post("/v1/embeddings")(self.embed)

    def reset(self, dimensions: int = 16) -> None:
        self.dimensions, self.mode = dimensions, "ok"
        self.requests.clear()
        self._released.clear()

    def release(self) -> None:
        """Let held requests (and later ones) through."""
        self._released.set()

    def inputs(self) -> list[str]:
        """Every text asked for so far, in order."""
        return [text for body in self.requests for text in _as_list(body["input"])]

    async def embed(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        if self.mode == "hang":
            await asyncio.to_thread(self._released.wait, 60)
        if self.mode == "down":
            return JSONResponse({"error": {"message": "overloaded", "type": "server_error"}}, status_code=503)
        data = [
            {"object": "embedding", "index": i, "embedding": _encode(bag_of_words(t, self.dimensions), body)}
            for i, t in enumerate(_as_list(body["input"]))
        ]
        usage = {"prompt_tokens": len(data), "total_tokens": len(data)}
        return {"object": "list", "data": data, "model": body["model"], "usage": usage}


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _encode(vector: list[float], body: dict[str, Any]) -> Any:
    if body.get("encoding_format") != "base64":
        return vector
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()


@contextmanager
def fake_embeddings_server() -> Iterator[tuple[FakeEmbeddings, str]]:
    """A running fake and its base URL (`http://127.0.0.1:PORT/v1`)."""
    fake = FakeEmbeddings()
    port = free_port()
    config = uvicorn.Config(fake.app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield fake, f"http://127.0.0.1:{port}/v1"
    finally:
        fake.release()
        server.should_exit = True
        thread.join(timeout=10)
