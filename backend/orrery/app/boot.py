"""`orrery serve` answers at once and warms up behind the door.

Importing and building the whole app (FastAPI, pydantic-ai, SQLAlchemy, the tokenizer, the provider)
takes seconds. This ASGI app is what uvicorn starts instead: its own start-up completes at once, a
thread imports and builds the real app, then the real app's start-up runs (schema check, provider
preload, embedder warm-up). Meanwhile `GET /health` answers 503 `{"status": "starting"}` (with
`Retry-After`: alive, not ready yet; a 200 means ready, as before) and every other request waits for
the real app, so no request is refused and no user turn pays the warm-up. If the real app cannot
start, the process stops, as it would have without this wrapper.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from orrery.errors import ConfigurationError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("orrery.boot")
YOUNG_COLLECTION_THRESHOLD = 50_000
"""Allocations between two collections of the youngest generation (Python's default is 700)."""


def settle_garbage_collector() -> None:
    """Once the app is built and warm: what exists now (modules, the app, the mappers, the model)
    lives as long as the process, so the collector stops scanning it (`gc.freeze`), and the
    youngest generation is collected after many more allocations. A turn allocates tens of
    thousands of short-lived objects, most gone before a collection at this threshold. Timed with
    `gc.callbacks` in a door-benchmark server (PostgreSQL, 50 sessions, 261 turns): at Python's
    defaults ~1.3 ms of CPU a turn; at 7,000, 0.39-0.40 ms (22 young and 1 middle collections);
    at 50,000, 0.15-0.16 ms (2 young collections of ~20 ms each, none older)."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)


def build_app() -> ASGIApp:
    """The real app (imported here, in the boot thread: the heavy imports)."""
    from orrery.app.http import create_app

    return create_app()


class BootingApp:
    """An ASGI app that serves `/health` while the real app is built, then hands everything to it."""

    def __init__(
        self, build: Callable[[], ASGIApp] = build_app, stop: Callable[[], None] | None = None
    ) -> None:
        self._build = build
        self._stop = stop or (lambda: os.kill(os.getpid(), signal.SIGTERM))
        """Called when the real app cannot start: uvicorn then shuts down, as after a failed start-up."""
        self._app: ASGIApp | None = None
        self._ready: asyncio.Event | None = None
        self._failed: BaseException | None = None
        self._inner_lifespan: InnerLifespan | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._app is None and scope["type"] == "http" and scope.get("path") == "/health":
            await _json(send, 503, {"status": "failed" if self._failed else "starting"})
            return
        assert self._ready is not None
        await self._ready.wait()
        if self._app is None:  # the start-up failed; the process is stopping
            await _json(
                send, 503, {"error": {"code": "unavailable", "message": "the server failed to start"}}
            )
            return
        await self._app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Report started at once; boot in the background; on shutdown, stop the real app."""
        self._ready = asyncio.Event()
        await receive()  # lifespan.startup
        booting = asyncio.create_task(self._boot())
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        await asyncio.gather(booting, return_exceptions=True)
        if self._inner_lifespan is not None:
            await self._inner_lifespan.shutdown()
        await send({"type": "lifespan.shutdown.complete"})

    async def _boot(self) -> None:
        assert self._ready is not None
        try:
            app = await asyncio.to_thread(self._build)
            self._inner_lifespan = InnerLifespan(app)
            await self._inner_lifespan.startup()
            settle_garbage_collector()
            self._app = app
        except BaseException as exc:
            self._failed = exc
            if isinstance(exc, ConfigurationError):  # says what to fix: one line, no traceback
                log.error("the server failed to start: %s", exc)
            else:
                log.exception("the server failed to start")
            self._stop()
        finally:
            self._ready.set()


class InnerLifespan:
    """Drives the real app's lifespan protocol from outside (start-up now, shutdown later)."""

    def __init__(self, app: ASGIApp) -> None:
        self._incoming: asyncio.Queue[Message] = asyncio.Queue()
        self._outgoing: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Future[None] = asyncio.ensure_future(
            app({"type": "lifespan", "asgi": {"version": "3.0"}}, self._incoming.get, self._outgoing.put)
        )

    async def startup(self) -> None:
        await self._incoming.put({"type": "lifespan.startup"})
        reply = await self._outgoing.get()
        if reply["type"] != "lifespan.startup.complete":
            raise RuntimeError(reply.get("message") or "the app's start-up failed")

    async def shutdown(self) -> None:
        await self._incoming.put({"type": "lifespan.shutdown"})
        await self._outgoing.get()
        await asyncio.gather(self._task, return_exceptions=True)


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def create_booting_app() -> BootingApp:
    """uvicorn's factory for `orrery serve`."""
    return BootingApp()
