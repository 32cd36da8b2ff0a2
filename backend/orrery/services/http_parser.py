"""The HTTP/1.1 parser `orrery serve` runs: uvicorn's httptools protocol (a C parser), with a cap on
what it buffers of an unfinished request line and header block.

h11, uvicorn's pure-Python parser, has that cap built in (`h11_max_incomplete_event_size`), but it
cost ~2 ms of server CPU per streamed chat turn more than httptools in paired runs of the door
benchmark (`bench.door`). httptools has no such limit: it would keep a header block that never ends
in memory. `CappedHttpTools` counts the bytes of reads that leave a request's head incomplete and,
past `HEAD_BUFFER_BYTES`, answers 400 and closes, as h11 did. Complete header blocks over
`MAX_HEADER_BYTES` still reach the app, which answers 431 (`limits.BodySizeLimit`).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from orrery.services.limits import MAX_HEADER_BYTES

HEAD_BUFFER_BYTES = 2 * MAX_HEADER_BYTES
"""What may arrive of one request's line and headers before they are complete (h11's old cap)."""


class CappedHttpTools(HttpToolsProtocol):
    """httptools with a bound on an unfinished request head (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ends = 0
        """Request heads and requests completed on this connection: even while a head is unfinished
        (or none started), odd from a complete head to its request's end."""
        self._head_bytes = 0

    def data_received(self, data: bytes) -> None:
        """Parse first, then count only a read that completed neither a head nor a request and left a
        head unfinished: a body, and a read that ends a request (and starts the next), are not
        counted. A read is at most 256 KB, which bounds the overshoot."""
        ends = self._ends
        super().data_received(data)
        if ends != self._ends or ends % 2 or self.transport.is_closing():
            return
        self._head_bytes += len(data)
        if self._head_bytes > HEAD_BUFFER_BYTES:
            self._unset_keepalive_if_required()
            self.send_400_response("Request line and headers too large.")

    def on_headers_complete(self) -> None:
        self._ends += 1
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._ends += 1
        self._head_bytes = 0  # the next request on this connection starts afresh
        super().on_message_complete()
