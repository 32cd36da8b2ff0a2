"""Request headers are capped in a real `orrery serve` process: an oversized header block is refused
with a 4xx (431 from the app, or 400 from the HTTP parser once it stops buffering), never served;
ordinary large headers still pass, and the server stays healthy. The parser's cap counts only a
request's unfinished head: a body does not count, and each request on a kept-alive connection starts
afresh (`orrery.services.http_parser`)."""

from __future__ import annotations

import contextlib
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from orrery.services.http_parser import HEAD_BUFFER_BYTES
from orrery.services.limits import MAX_HEADER_BYTES
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
        except (ConnectionResetError, BrokenPipeError):  # refused before it was all sent
            return None
    return int(first.split()[1]) if first else None


def test_oversized_headers_are_refused_and_the_server_stays_healthy(db_url: str) -> None:
    with killable_server(db_url, "test-secret") as server:
        assert _status(server.base, MAX_HEADER_BYTES // 2) == 200
        assert _status(server.base, MAX_HEADER_BYTES + 8_000) == 431  # a complete block: the app refuses
        assert _status(server.base, 200_000) in (400, 431, None)  # the parser stops buffering: 400
        split = {f"X-Pad-{i}": "b" * 1000 for i in range(2 * MAX_HEADER_BYTES // 1000)}
        with contextlib.suppress(httpx.TransportError):  # refused before the client finished sending
            assert httpx.get(f"{server.base}/health", headers=split).status_code in (400, 431)
        assert httpx.get(f"{server.base}/health").json()["status"] == "ok"
        assert server.proc.poll() is None


def _unfinished_head(base: str, size: int) -> bytes:
    """Send a request line and `size` bytes of one header that never ends, in 8 KB pieces; what the
    server answered before closing (b"" if it closed first). A server that kept buffering would
    leave `recv` waiting: the socket's timeout fails the test."""
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            sock.sendall(f"GET /health HTTP/1.1\r\nHost: {url.netloc}\r\nX-Endless: ".encode())
            for _ in range(size // 8192):
                sock.sendall(b"a" * 8192)
        try:
            return sock.recv(256)
        except ConnectionResetError:
            return b""


def _kept_alive(base: str, requests: int, padding: int) -> list[int]:
    """`requests` GET /health, each with `padding` bytes of headers, on one connection: their statuses."""
    url = urlsplit(base)
    head = f"GET /health HTTP/1.1\r\nHost: {url.netloc}\r\nX-Padding: {'p' * padding}\r\n\r\n".encode()
    statuses = []
    address = (url.hostname, url.port)
    with socket.create_connection(address, timeout=30) as sock, sock.makefile("rb") as answers:
        for _ in range(requests):
            sock.sendall(head)
            statuses.append(int(answers.readline().split()[1]))
            length = 0
            while (line := answers.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            answers.read(length)
    return statuses


def test_the_parser_caps_only_an_unfinished_head(db_url: str) -> None:
    with killable_server(db_url, "test-secret") as server:
        refused = _unfinished_head(server.base, HEAD_BUFFER_BYTES + 16_384)
        # a 400, or a reset that overtook it (the client was still sending); never a wait for more
        assert refused.startswith(b"HTTP/1.1 400") or refused == b"", refused
        # four heads of 20 KB on one connection: 80 KB in all, over the cap, but each is its own
        assert _kept_alive(server.base, 4, 20_000) == [200, 200, 200, 200]
        big_body = {"content": "x" * (HEAD_BUFFER_BYTES + 10_000)}
        with httpx.Client(base_url=server.base) as client:  # one connection, kept alive
            for _ in range(3):  # the body reached the app, which asks who is calling
                assert client.post("/v1/sessions/unknown/messages", json=big_body).status_code == 401
        assert httpx.get(f"{server.base}/health").json()["status"] == "ok"
