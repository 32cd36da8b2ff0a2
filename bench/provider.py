"""A fake OpenAI-compatible chat provider for `bench.door --provider`: the path users run, with the
model's own cost taken out.

It answers `POST /v1/chat/completions` as a real provider streams a tool-using turn: to a new user
message, a `search_knowledge` call (role, tool call in three argument pieces, `tool_calls` finish);
to the tool's result, a text reply in `TEXT_DELTAS` deltas (with the role and finish chunks, 13
chunks) that answers the last user message: the same text to the same question, a new one to a new
question, so a new reply pays its embedding as a model's would; each stream then a usage chunk and
`[DONE]`. Chunks go out one by one, `--gap-ms` apart, as
separate HTTP chunks, so the server reads them as it would a provider's. A request without tools
(a summary) and a non-streamed one get the reply's text whole.

It runs in its own process (`python -m bench.provider --port N`): plain asyncio and hand-written
HTTP/1.1 with keep-alive, so it takes neither the benchmark client's CPU nor much of the machine's.
The tests' fake provider (`tests/support/upstream.py`) answers echoes and failures instead, in a
thread of the test process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import procs

ROOT = Path(__file__).resolve().parents[1]
TEXT_DELTAS = 11
REPLY = "Start with the open billing task: confirm the invoice total, then send the reminder today."
USAGE = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}
TOOL = "search_knowledge"
STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _chunk(model: str, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    data = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": model}
    return b"data: " + json.dumps(data | {"choices": choices} | extra).encode() + b"\n\n"


def reply_for(body: dict[str, Any]) -> str:
    """The reply to the request's last user message: the same text to the same question, a new one
    to a new question, as a model's (so a new reply pays its embedding, a repeated one is cached)."""
    asked = next(
        (m.get("content") for m in reversed(body.get("messages") or []) if m.get("role") == "user"), None
    )
    return f"On {str(asked)[:120]!r}: {REPLY}" if asked else REPLY


def _pieces(text: str, n: int) -> list[str]:
    cuts = [len(text) * i // n for i in range(n + 1)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def stream(body: dict[str, Any]) -> Iterator[bytes]:
    """The SSE events answering one streamed request: a tool call to a new message when the tool is
    offered, else the text reply."""
    model = str(body.get("model", "bench"))
    offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    last = (body.get("messages") or [{}])[-1]
    yield _chunk(model, {"role": "assistant", "content": ""})
    if TOOL in offered and last.get("role") == "user":
        args = json.dumps({"query": "billing"})
        call = {
            "index": 0,
            "id": "call_bench",
            "type": "function",
            "function": {"name": TOOL, "arguments": ""},
        }
        yield _chunk(model, {"tool_calls": [call]})
        for piece in _pieces(args, 3):
            yield _chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield _chunk(model, {}, "tool_calls")
    else:
        for piece in _pieces(reply_for(body), TEXT_DELTAS):
            yield _chunk(model, {"content": piece})
        yield _chunk(model, {}, "stop")
    yield _chunk(model, None, usage=USAGE)
    yield b"data: [DONE]\n\n"


def completion(body: dict[str, Any]) -> bytes:
    """A non-streamed reply: the text whole."""
    message = {"role": "assistant", "content": reply_for(body)}
    data = {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": body.get("model")}
    return json.dumps(
        data | {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]} | {"usage": USAGE}
    ).encode()


async def _request(reader: asyncio.StreamReader) -> tuple[str, dict[str, Any]]:
    """One request's path and JSON body (`IncompleteReadError` when the client closed the connection)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
    }
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return lines[0].split(" ")[1], json.loads(raw or b"{}")


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gap: float) -> None:
    try:
        while True:
            path, body = await _request(reader)
            if not path.endswith("/chat/completions"):
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            elif not body.get("stream"):
                payload = completion(body)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
                writer.write(b"content-length: %d\r\n\r\n%s" % (len(payload), payload))
            else:
                writer.write(STREAM_HEAD)
                for event in stream(body):
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                    await asyncio.sleep(gap)
                writer.write(b"0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _main(port: int, gap: float) -> None:
    server = await asyncio.start_server(lambda r, w: _serve(r, w, gap), "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


MODEL = "openai/gpt-4o-mini"
"""The model `orrery serve` is pointed at: a real id, so litellm's cost map and provider rules apply."""


@contextmanager
def provider_process(port: int, gap_ms: float = 2.0) -> Iterator[dict[str, str]]:
    """This provider in a child process on `port`; yields the server's environment that points
    `orrery serve` at it through the normal model settings (litellm's `OPENAI_API_BASE`)."""
    command = [sys.executable, "-m", "bench.provider", "--port", str(port), "--gap-ms", str(gap_ms)]
    proc = subprocess.Popen(command, cwd=ROOT)
    try:
        _wait_listening(proc, port)
        yield {
            "ORRERY_MODEL": MODEL,
            "OPENAI_API_BASE": f"http://127.0.0.1:{port}/v1",
            "OPENAI_API_KEY": "sk-bench",
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def model_env(provider: bool) -> Iterator[dict[str, str]]:
    """A benchmark server's model settings: the offline model's (none), or with `provider` litellm
    pointed at this provider, started for the whole run."""
    if not provider:
        yield {}
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with provider_process(port) as env:
        yield env


CLIENTS = ("auto", "litellm")
"""`--model-client`: the server's own choice (`ORRERY_MODEL_CLIENT` unset: today Orrery's direct
client for an `openai/...` model, where the checkout has one), or every model through litellm."""


def client_env(client: str) -> dict[str, str]:
    """The server's setting for `--model-client` (`auto` is the default: nothing set)."""
    return {} if client == "auto" else {"ORRERY_MODEL_CLIENT": client}


EXPECTED = """
try:
    from orrery.agents.protocol import client_for
except ImportError:  # a checkout from before the direct client: every model through litellm
    print("litellm")
else:
    from orrery.config import Settings
    settings = Settings(_env_file=None, secret_key="bench")
    print(client_for(settings.model, settings))
"""


def served_client(env: dict[str, str], source: Path, pids: list[int]) -> str:
    """Which model client served: `offline`, or what the served checkout's
    `orrery.agents.protocol.client_for` picks for this environment (asked in a process of its own,
    as the server's settings read it), with `+litellm` when litellm is loaded in the server anyway
    and `litellm?` when it should serve but is not loaded (its native `fastuuid` module mapped or
    not). Read after the server's turns: litellm may be imported at its first call."""
    if env.get("ORRERY_MODEL", "offline") == "offline":
        return "offline"
    child = {**os.environ, **env, "PYTHONPATH": f"{source / 'backend'}{os.pathsep}{source}"}
    asked = subprocess.run(
        [sys.executable, "-c", EXPECTED], env=child, cwd="/tmp", capture_output=True, text=True, check=True
    )
    expected = asked.stdout.strip().splitlines()[-1]
    loaded = procs.maps_library(pids, "fastuuid")
    if expected == "litellm":
        return "litellm" if loaded else "litellm?"
    return f"{expected}+litellm" if loaded else expected


def _wait_listening(proc: subprocess.Popen[bytes], port: int) -> None:
    for _ in range(600):  # a bound on waiting for it to listen
        if proc.poll() is not None:
            raise RuntimeError(f"the fake provider exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the fake provider did not listen")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gap-ms", type=float, default=2.0, help="pause between streamed chunks")
    args = parser.parse_args(argv)
    asyncio.run(_main(args.port, args.gap_ms / 1000))


if __name__ == "__main__":
    main()
