"""Create a chat session on one server process and read it at once from another: a 2xx must mean
the row is committed, so the read never misses (shared by the regression test and `bench/`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx


@dataclass
class ReadAfterWrite:
    """What the clients saw: reads that answered 404 for an acknowledged create, other failures."""

    created: int = 0
    created_ids: list[str] = field(default_factory=list)
    """Every session a 201 acknowledged (each must be stored)."""
    misses: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


async def create_then_read(
    bases: list[str], api_key: str, project_id: str, *, count: int, concurrency: int = 20
) -> ReadAfterWrite:
    """`count` creates, each on `bases[i % n]`, each read back at once on the next base."""
    result = ReadAfterWrite()
    gate = asyncio.Semaphore(concurrency)
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as client:

        async def one(i: int) -> None:
            writer, reader = bases[i % len(bases)], bases[(i + 1) % len(bases)]
            async with gate:
                made = await client.post(
                    f"{writer}/v1/sessions", json={"project_id": project_id, "title": f"ryw {i}"}
                )
                if made.status_code != 201:
                    result.failures.append(f"create {i}: {made.status_code} {made.text[:200]}")
                    return
                result.created += 1
                sid = made.json()["id"]
                result.created_ids.append(sid)
                read = await client.get(f"{reader}/v1/sessions/{sid}")
                if read.status_code == 404:
                    result.misses.append(sid)
                elif read.status_code != 200:
                    result.failures.append(f"read {i}: {read.status_code} {read.text[:200]}")

        await asyncio.gather(*(one(i) for i in range(count)))
    return result
