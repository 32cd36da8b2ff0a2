"""Where a server's CPU went: py-spy recording it (and its workers), and the profile summed up by
owner (litellm, the provider's HTTP client, pydantic, pydantic-ai, SQLAlchemy, the HTTP stack, a
driver, the embedding model, Orrery) with Orrery's hottest functions.
Used by `bench.door --profile`."""

from __future__ import annotations

import subprocess
from pathlib import Path


def py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy recording the server and its workers until interrupted (raw collapsed stacks). Only
    samples holding the GIL: its idle detection counts threads waiting on a queue as busy on a loaded
    machine; the GIL-free part of a driver's work is not seen (the CPU column counts it)."""
    command = ["py-spy", "record", "--pid", str(pid), "--subprocesses", "--gil", "--full-filenames"]
    command += ["--format", "raw"]
    return subprocess.Popen([*command, "--output", str(out)], stderr=subprocess.DEVNULL)


OWNERS = (  # (group, path prefixes); the innermost frame matching one of them owns the sample
    ("litellm", ("litellm/",)),
    (
        "the provider's HTTP client (openai SDK, httpx, aiohttp)",
        (
            "openai/",
            "httpx/",
            "httpcore/",
            "h2/",
            "aiohttp/",
            "aiohappyeyeballs/",
            "yarl/",
            "multidict/",
            "orrery/agents/openai_http.py",
        ),
    ),
    ("pydantic (validation, models)", ("pydantic/", "pydantic_core/")),
    (
        "embedding (ONNX Runtime, tokenizer)",
        ("onnxruntime/", "tokenizers/", "orrery/memory/minilm", "orrery/memory/embeddings.py"),
    ),
    ("pydantic-ai (run/stream machinery)", ("pydantic_ai/", "pydantic_graph/", "genai_prices/")),
    ("SQLAlchemy ORM", ("sqlalchemy/orm/",)),
    ("SQLAlchemy Core/engine", ("sqlalchemy/",)),
    ("DB driver", ("asyncpg/", "aiosqlite/", "sqlite3/")),
    ("event loop, threads (asyncio, stdlib)", ("asyncio/", "selectors.py", "threading.py", "queue.py")),
    (
        "HTTP/SSE (uvicorn, h11, starlette, anyio, fastapi)",
        ("uvicorn/", "h11/", "starlette/", "anyio/", "fastapi/"),
    ),
    ("tokenizer (tiktoken)", ("tiktoken/", "tiktoken_ext/")),
    ("metrics/tracing", ("prometheus_client/", "opentelemetry/")),
    ("Orrery", ("orrery/",)),
)


def _frame(frame: str) -> tuple[str, str]:
    """`fn (path/file.py:12)` -> (`fn`, `path/file.py`)."""
    name, _, where = frame.rpartition(" (")
    return name, where.rsplit(":", 1)[0]


def _owner(path: str) -> str | None:
    for group, prefixes in OWNERS:
        if any(path.startswith(p) or f"/{p}" in path for p in prefixes):
            return group
    return None


def summarize_profile(raw: str) -> str:
    """A py-spy raw profile (`frame;frame;... count`) as shares per owner and the 10 hottest Orrery
    functions, by own time (samples where it is the innermost owned frame) and by total time (the CLI
    entry point, under every sample, left out)."""
    groups: dict[str, int] = {}
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count, frames = int(count_text), [_frame(f) for f in stack.split(";")]
        samples += count
        owned = [(name, path, _owner(path)) for name, path in frames]
        inner = next(((n, p, g) for n, p, g in reversed(owned) if g), None)
        group = inner[2] if inner else "other (stdlib, unowned frames)"
        groups[group] = groups.get(group, 0) + count
        if inner and group == "Orrery":
            key = f"{inner[0]} ({inner[1]})"
            own[key] = own.get(key, 0) + count
        for key in {f"{n} ({p})" for n, p, g in owned if g == "Orrery" and "orrery/cli/" not in p}:
            total[key] = total.get(key, 0) + count
    lines = ["| where the CPU goes | share |", "|---|---:|"]
    lines += [
        f"| {g} | {c * 100 / max(samples, 1):.0f}% |" for g, c in sorted(groups.items(), key=lambda i: -i[1])
    ]
    for title, table in (("own", own), ("total", total)):
        lines += ["", f"| hottest Orrery functions ({title} time) | share |", "|---|---:|"]
        hottest = sorted(table.items(), key=lambda i: -i[1])[:10]
        lines += [f"| {k} | {c * 100 / max(samples, 1):.1f}% |" for k, c in hottest]
    return "\n".join([f"{samples} samples", *lines])
