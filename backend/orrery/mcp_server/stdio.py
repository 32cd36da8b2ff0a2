"""`orrery mcp` over stdio, answering `initialize` before the MCP SDK is even imported.

Importing the SDK alone takes about a second (its package imports every client and server module and
the pydantic models of each protocol revision), so this module and `handshake` use the standard
library only. A thread imports the SDK, the settings and Orrery's server module the moment the
process starts; the main thread meanwhile reads the client's first message and, when it is
`initialize`, answers it as the SDK would. Then the SDK's server takes over the same streams, with
that `initialize` replayed to it (see `handshake`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, TextIO

from orrery.mcp_server.handshake import REPLAYED_ID, Incoming, Outgoing, initialize_answer


def serve_stdio(api_key: str | None, project: str | None) -> None:
    """Serve MCP over stdio until the client leaves; `initialize` is answered before the heavy imports.

    Raises what the server raises (an `OrreryError` for a configuration the user must fix)."""
    loader = _Loader()
    wire_in, wire_out, restore = _claim_wire()
    try:
        loader.start()
        first = wire_in.readline()
        answer = initialize_answer(first)
        if answer is not None:
            wire_out.write(json.dumps(answer, separators=(",", ":")) + "\n")
            wire_out.flush()
            first = json.dumps({**json.loads(first), "id": REPLAYED_ID}) + "\n"
        loader.join()
        if loader.error is not None:
            raise loader.error
        if first:
            from orrery.mcp_server.server import run_stdio

            run_stdio(api_key, project, Incoming(first, wire_in, wire_out), Outgoing(wire_out, answer))
    finally:
        restore()


class _Loader(threading.Thread):
    """Imports the SDK, Orrery's server module and the settings while `initialize` is answered."""

    def __init__(self) -> None:
        super().__init__(name="orrery-mcp-imports", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from orrery.mcp_server.server import preload

            preload()
        except BaseException as exc:  # re-raised by the main thread
            self.error = exc


def _claim_wire() -> tuple[TextIO, TextIO, Any]:
    """The protocol's streams on private copies of fds 0 and 1; fd 0 then reads the null device and
    fd 1 writes to stderr, so a library that reads stdin or prints cannot tear a message (as the SDK's
    own stdio transport does). Returns the streams and a function that puts the fds back."""
    saved = os.dup(0), os.dup(1)
    wire_in = open(os.dup(0), encoding="utf-8", errors="replace")  # noqa: SIM115 - lives until exit
    wire_out = open(os.dup(1), "w", encoding="utf-8")  # noqa: SIM115 - lives until exit
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        sys.stdout.flush()  # what was printed while serving goes to stderr, not the wire
        for fd, copy in zip((0, 1), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)

    return wire_in, wire_out, restore
