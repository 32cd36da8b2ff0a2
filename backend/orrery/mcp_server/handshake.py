"""The `initialize` handshake without the MCP SDK: the answer the SDK gives, and the streams that
hand the connection over to the SDK afterwards.

`initialize_answer` gives the same capabilities, server info, instructions and version negotiation
as the SDK's server (tests/test_mcp_stdio.py compares the two). The SDK then reads the client's
`initialize` again, replayed under a private id so its connection state is the client's; its own
answer to the replay is dropped (and compared with ours: a difference is logged on stderr).
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from orrery import __version__

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
