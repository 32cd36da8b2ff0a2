"""A real uvicorn server on loopback for tests that drive the API with third-party clients."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI

from orrery.app.http import create_app
from orrery.config import Settings


@dataclass(frozen=True)
class LiveServer:
    """The running app and its `/v1` base URL."""

    app: FastAPI
    base_url: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(settings: Settings) -> Iterator[LiveServer]:
    """Start the app under uvicorn in a thread; stop it on exit."""
    port = _free_port()
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield LiveServer(app, f"http://127.0.0.1:{port}/v1")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
