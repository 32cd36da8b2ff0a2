"""Idempotency at the OpenAI-compatible door, through the real `openai` SDK against a live server and
a fake provider that fails: the SDK's own retries store one user message, not three, and concurrent
requests with one Idempotency-Key run the model once and share its outcome. Both databases."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.conftest import settings_for
from tests.support.killable import killable_server, load_demo_into, stored_messages
from tests.support.upstream import FakeProvider, fake_provider, provider_env


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    with fake_provider() as found:
        yield found


def _session_of(exc: openai.APIStatusError) -> str:
    return str(exc.response.headers["X-Orrery-Session"])


@pytest.mark.demo_db
@pytest.mark.parametrize("client", ["proxy", "direct", "litellm"])
async def test_sdk_retries_store_one_message_and_a_resend_answers_it(
    db_url: str, provider: tuple[FakeProvider, str], client: str
) -> None:
    fake, base_url = provider
    settings = settings_for(db_url)
    demo = await load_demo_into(settings)
    fake.mode = "fail"
    conversation: Any = [{"role": "user", "content": "Retry me, SDK"}]
    with killable_server(db_url, settings.secret_key, provider_env(base_url, client)) as server:
        sdk = openai.AsyncOpenAI(base_url=f"{server.base}/v1", api_key=demo.api_key, max_retries=2)
        with pytest.raises(openai.APIStatusError) as failed:
            await sdk.chat.completions.create(model="orrery/coach", messages=conversation)
        assert failed.value.status_code == 502
        sid = _session_of(failed.value)
        # one request (`x-should-retry: false`: the provider was retried here), one stored message
        assert await stored_messages(settings, sid) == [("user", "Retry me, SDK", "failed")]

        fake.mode = "echo"
        done = await sdk.chat.completions.create(model="orrery/coach", messages=conversation)
        assert done.choices[0].message.content == f"echo: {_last_user(fake)}"
        assert [(r, st) for r, _, st in await stored_messages(settings, sid)] == [
            ("user", "complete"),
            ("assistant", "complete"),
        ]
        await sdk.close()


def _last_user(fake: FakeProvider) -> str:
    return str(fake.requests[-1]["messages"][-1]["content"])


@pytest.mark.demo_db
async def test_concurrent_requests_with_one_key_run_the_model_once(
    db_url: str, provider: tuple[FakeProvider, str]
) -> None:
    """On PostgreSQL the ten requests go to two server processes: the duplicates wait on the
    database's lock and read the outcome from the database, not from a process's memory."""
    fake, base_url = provider
    settings = settings_for(db_url)
    demo = await load_demo_into(settings)
    fake.mode = "fail"
    env = provider_env(base_url)
    with contextlib.ExitStack() as stack:
        count = 2 if settings.dialect == "postgresql" else 1
        bases = [
            stack.enter_context(killable_server(db_url, settings.secret_key, env)).base for _ in range(count)
        ]
        headers = {"Authorization": f"Bearer {demo.api_key}", "Accept": "application/json"}
        async with httpx.AsyncClient(base_url=bases[0], headers=headers, timeout=120) as http:
            sid = (await http.post("/v1/sessions", json={})).json()["id"]
            one = await http.post(f"/v1/sessions/{sid}/messages", json={"content": "x"})
        assert one.status_code == 502
        per_turn = len(fake.requests)  # one failed turn's provider calls (its client retries too)

        fake.gate.clear()  # the provider holds its failures until every duplicate has arrived
        clients = [
            openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=demo.api_key, max_retries=0) for base in bases
        ]
        key = {"Idempotency-Key": "one-key-ten-requests"}
        messages: Any = [{"role": "user", "content": "Ten at once"}]
        requests = [
            asyncio.create_task(
                clients[i % count].chat.completions.create(
                    model="orrery/coach", messages=messages, extra_headers=key
                )
            )
            for i in range(10)
        ]
        await fake.called(per_turn)  # the one turn is inside the model call
        await asyncio.sleep(1)  # let the nine duplicates reach the servers while the turn runs
        fake.gate.set()
        outcomes = await asyncio.gather(*requests, return_exceptions=True)
        for client in clients:
            await client.close()
    assert all(isinstance(o, openai.APIStatusError) and o.status_code == 502 for o in outcomes), outcomes
    assert len(fake.requests) - per_turn == per_turn  # one turn ran the model; nine shared its outcome
    sid_ten = _session_of(outcomes[0])  # type: ignore[arg-type]
    assert await stored_messages(settings, sid_ten) == [("user", "Ten at once", "failed")]


@pytest.mark.demo_db
async def test_identical_concurrent_resends_without_a_key_store_one_turn(
    db_url: str, provider: tuple[FakeProvider, str]
) -> None:
    """Ten identical requests (no Idempotency-Key) arrive at once while the session's turn lock is
    taken (by an earlier turn whose model hangs), so none finds the message stored on arrival: the
    first to get the lock runs the turn, the nine others find it stored after they arrived and
    replay its reply. On PostgreSQL the requests go to two server processes."""
    fake, base_url = provider
    settings = settings_for(db_url)
    demo = await load_demo_into(settings)
    env = provider_env(base_url)
    with contextlib.ExitStack() as stack:
        count = 2 if settings.dialect == "postgresql" else 1
        bases = [
            stack.enter_context(killable_server(db_url, settings.secret_key, env)).base for _ in range(count)
        ]
        headers = {"Authorization": f"Bearer {demo.api_key}", "Accept": "application/json"}
        async with httpx.AsyncClient(base_url=bases[0], headers=headers, timeout=120) as http:
            sid = (await http.post("/v1/sessions", json={})).json()["id"]
            fake.mode = "hang"
            holding = asyncio.create_task(http.post(f"/v1/sessions/{sid}/messages", json={"content": "Hold"}))
            await fake.called(0)  # the earlier turn is inside the model call, holding the lock
            clients = [
                openai.AsyncOpenAI(
                    base_url=f"{base}/v1",
                    api_key=demo.api_key,
                    max_retries=0,
                    default_headers={"X-Orrery-Session": sid},
                )
                for base in bases
            ]
            messages: Any = [
                {"role": "user", "content": "Hold"},
                {"role": "assistant", "content": "echo: Hold"},
                {"role": "user", "content": "Ten at once"},
            ]
            requests = [
                asyncio.create_task(
                    clients[i % count].chat.completions.create(model="orrery/coach", messages=messages)
                )
                for i in range(10)
            ]
            await asyncio.sleep(1)  # let the ten reach the servers and wait for the lock
            fake.mode = "echo"
            assert (await holding).status_code == 200
            outcomes = await asyncio.gather(*requests, return_exceptions=True)
            for client in clients:
                await client.close()
    assert {o.choices[0].message.content for o in outcomes} == {"echo: Ten at once"}, outcomes  # type: ignore[union-attr]
    assert len(fake.requests) == 2  # the holding turn and one turn for the ten
    assert [(r, c) for r, c, _ in await stored_messages(settings, sid)] == [
        ("user", "Hold"),
        ("assistant", "echo: Hold"),
        ("user", "Ten at once"),
        ("assistant", "echo: Ten at once"),
    ]
