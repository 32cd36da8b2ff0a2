"""Request headers are capped in a real `orrery serve` process: an oversized header block is refused
with a 4xx (431 from the app, or 400 from the HTTP parser once it stops buffering), never served;
ordinary large headers still pass, and the server stays healthy."""

from __future__ import annotations

import contextlib
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from backend.services.limits import MAX_HEADER_BYTES
from tests.conftest import DIALECTS
from tests.support.killable import killable_server

pytestmark = [
    pytest.mark.skipif("sqlite" not in DIALECTS, reason="SQLite only (the limit is the HTTP server's)"),
    pytest.mark.parametrize("db_url", ["sqlite"], indirect=True),
]


def _status(base: str, padding: int) -> int | None:
    """The status line's code for a GET /health with `padding` bytes of headers; None when the server
    closed the connection before its answer could be read (it refuses without reading the rest)."""
    url = urlsplit(base)
    request = f"GET /health HTTP/1.1\r\nHost: {url.netloc}\r\nX-Padding: {'a' * padding}\r\n\r\n".encode()
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        try:
            sock.sendall(request)
            first = sock.recv(64)
        except ConnectionResetError:
            return None
    return int(first.split()[1]) if first else None


def test_oversized_headers_are_refused_and_the_server_stays_healthy(db_url: str) -> None:
    with killable_server(db_url, "test-secret") as server:
        assert _status(server.base, MAX_HEADER_BYTES // 2) == 200
        assert _status(server.base, MAX_HEADER_BYTES + 8_000) == 431  # a complete block: the app refuses
        assert _status(server.base, 200_000) in (400, 431, None)  # the parser stops buffering: 400
        split = {f"X-Pad-{i}": "b" * 1000 for i in range(2 * MAX_HEADER_BYTES // 1000)}
        with contextlib.suppress(httpx.ReadError):  # refused before the client finished sending
            assert httpx.get(f"{server.base}/health", headers=split).status_code in (400, 431)
        assert httpx.get(f"{server.base}/health").json()["status"] == "ok"
        assert server.proc.poll() is None
