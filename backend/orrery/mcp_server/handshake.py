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
    """The client's messages as the SDK reads them: the replayed first line, then the wire. A request
    holding text no door accepts (a lone surrogate, a NUL) is answered here with the rule's own
    words (`invalid params`): the SDK's parser drops such a line without a reply, and the client
    would wait for ever."""

    def __init__(self, first: str, wire: TextIO, answer: TextIO | None = None) -> None:
        self._first, self._wire, self._answer = [first] if first else [], wire, answer

    def readline(self) -> str:
        while True:
            line = self._first.pop() if self._first else self._wire.readline()
            refusal = _refusal(line) if self._answer is not None else None
            if refusal is None:
                return line
            if refusal:  # a notification gets no answer: it is dropped
                assert self._answer is not None
                self._answer.write(refusal + "\n")
                self._answer.flush()


def _refusal(line: str) -> str | None:
    """The JSON-RPC error answering `line` when it holds unstorable text (`""` for a notification),
    else None."""
    from orrery.validation import UNSTORABLE, UnstorableValue, scan

    if not UNSTORABLE.search(line) and "\\u" not in line and "\\U" not in line:
        return None
    try:
        message = json.loads(line)
        scan(message)
    except UnstorableValue as exc:
        request_id = message.get("id") if isinstance(message, dict) else None
        if type(request_id) not in (int, str):
            return ""
        error = {"code": -32602, "message": str(exc)}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":"))
    except ValueError:
        return None  # not JSON: the SDK answers a parse error its own way
    return None


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
