"""`orrery mcp` over stdio, answering `initialize` before the MCP SDK is even imported.

Importing the SDK alone takes about a second (its package imports every client and server module and
the pydantic models of each protocol revision), so this module uses the standard library only. A
thread imports the SDK, the settings and Orrery's server module the moment the process starts; the
main thread meanwhile reads the client's first message and, when it is `initialize`, answers it the
way the SDK would (the same capabilities, server info, instructions and version negotiation:
tests/test_mcp_stdio.py compares the two). Then the SDK's server takes over the same streams: the
`initialize` is replayed to it under a private id, so its connection state is the client's, and its
own answer to the replay is dropped (and compared with ours: a difference is logged on stderr).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, TextIO

from backend import __version__

INSTRUCTIONS = "Orrery's context tools: graph, knowledge base, document index."
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions the SDK negotiates through `initialize`, oldest to newest (it answers an
unknown one with the newest); a test pins this to the SDK's own list."""
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
"""What the server offers (tools, resources, prompts; no change notifications, no subscriptions)."""
REPLAYED_ID = "orrery-replayed-initialize"


def initialize_answer(line: str) -> dict[str, Any] | None:
    """The SDK's answer to `line` when it is a well-formed `initialize` request, else None (any
    other first message goes to the SDK unanswered)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not _is_initialize(message):
        return None
    requested = message["params"]["protocolVersion"]
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    result = {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": "orrery", "version": __version__},
    }
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _is_initialize(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if message.get("method") != "initialize" or type(message.get("id")) not in (int, str):
        return False
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return False
    client = params.get("clientInfo")
    if not isinstance(params.get("capabilities"), dict) or not isinstance(client, dict):
        return False
    return isinstance(client.get("name"), str) and isinstance(client.get("version"), str)


class Incoming:
    """The client's messages as the SDK reads them: the replayed first line, then the wire."""

    def __init__(self, first: str, wire: TextIO) -> None:
        self._first, self._wire = [first] if first else [], wire

    def readline(self) -> str:
        return self._first.pop() if self._first else self._wire.readline()


class Outgoing:
    """The SDK's messages to the wire, less its answer to the replayed `initialize` (already sent)."""

    def __init__(self, wire: TextIO, sent: dict[str, Any] | None) -> None:
        self._wire, self._sent = wire, sent

    def write(self, text: str) -> int:
        if self._sent is not None and REPLAYED_ID in text:
            answer = json.loads(text)
            if answer.get("id") == REPLAYED_ID:
                expected = {**self._sent, "id": REPLAYED_ID}
                if answer != expected:
                    print(f"orrery mcp: initialize answered {self._sent}, the SDK {answer}", file=sys.stderr)
                self._sent = None
                return len(text)
        return self._wire.write(text)

    def flush(self) -> None:
        self._wire.flush()


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
            from backend.mcp_server.server import run_stdio

            run_stdio(api_key, project, Incoming(first, wire_in), Outgoing(wire_out, answer))
    finally:
        restore()


class _Loader(threading.Thread):
    """Imports the SDK, Orrery's server module and the settings while `initialize` is answered."""

    def __init__(self) -> None:
        super().__init__(name="orrery-mcp-imports", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from backend.mcp_server.server import preload

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
