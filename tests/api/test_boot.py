"""`orrery serve` answers /health while the real app is still being built (503 "starting": alive, not
ready), and no other request is refused meanwhile: it waits and is then served by the real app."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

from orrery.app.boot import YOUNG_COLLECTION_THRESHOLD, BootingApp


async def _echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A stand-in for the real app: a lifespan that completes, and one answer per request."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = "startup" if message["type"] == "lifespan.startup" else "shutdown"
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": f"real {scope['path']}".encode()})


async def _request(app: BootingApp, path: str) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    await app({"type": "http", "path": path, "method": "GET", "headers": []}, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


class _Lifespan:
    def __init__(self, app: BootingApp) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outgoing: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.create_task(app({"type": "lifespan"}, self.incoming.get, self.outgoing.put))

    async def start(self) -> dict[str, Any]:
        await self.incoming.put({"type": "lifespan.startup"})
        return await self.outgoing.get()

    async def stop(self) -> dict[str, Any]:
        await self.incoming.put({"type": "lifespan.shutdown"})
        done = await self.outgoing.get()
        await self.task
        return done


@pytest.fixture
def collector_restored() -> Any:
    """The boot settles this process's garbage collector; the test process gets its own back."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


async def test_health_answers_while_booting_and_other_requests_wait_for_the_real_app(
    collector_restored: None,
) -> None:
    release = threading.Event()

    def build() -> Any:
        release.wait(10)  # the heavy imports, still running
        return _echo_app

    app = BootingApp(build, stop=lambda: pytest.fail("the app failed to start"))
    lifespan = _Lifespan(app)
    assert (await lifespan.start())["type"] == "lifespan.startup.complete"  # uvicorn binds at once
    assert await _request(app, "/health") == (503, b'{"status": "starting"}')  # alive, not ready
    waiting = asyncio.create_task(_request(app, "/v1/me"))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # held, not refused
    release.set()
    assert await waiting == (200, b"real /v1/me")
    # warm: what the boot built is frozen out of collections, and the young generation waits longer
    assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
    assert await _request(app, "/health") == (200, b"real /health")  # the real app answers now
    assert (await lifespan.stop())["type"] == "lifespan.shutdown.complete"


async def test_a_failed_start_stops_the_server_and_says_so() -> None:
    stopped: list[bool] = []

    def build() -> Any:
        raise RuntimeError("database schema is behind")

    app = BootingApp(build, stop=lambda: stopped.append(True))
    lifespan = _Lifespan(app)
    await lifespan.start()
    status, body = await _request(app, "/v1/me")  # waited for the boot, which failed
    assert status == 503 and b"failed to start" in body
    assert await _request(app, "/health") == (503, b'{"status": "failed"}')
    assert stopped == [True]
    await lifespan.stop()


async def test_a_configuration_error_at_start_is_one_line_naming_the_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from orrery.plugins import PluginError

    def build() -> Any:
        raise PluginError("plugin 'old' cannot be imported: rename imports of backend.* to orrery.*")

    app = BootingApp(build, stop=lambda: None)
    lifespan = _Lifespan(app)
    with caplog.at_level("ERROR", logger="orrery.boot"):
        await lifespan.start()
        assert (await _request(app, "/v1/me"))[0] == 503  # waits for the failed boot
    [record] = [r for r in caplog.records if r.name == "orrery.boot"]
    assert record.getMessage() == (
        "the server failed to start: plugin 'old' cannot be imported: rename imports of backend.* to orrery.*"
    )
    assert record.exc_info is None  # no traceback: the message says what to fix
    await lifespan.stop()
