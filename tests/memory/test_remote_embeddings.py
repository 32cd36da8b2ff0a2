"""A remote embedding model (`ORRERY_EMBEDDING_MODEL`) against a fake OpenAI-compatible server on
loopback: vectors come from a background job, never from a turn's write path; a slow, down or
wrong-size provider leaves relevance lexical with a note and loses nothing; two models' vectors are
never ranked together."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select, update

from orrery.agents.orchestrator import Orchestrator
from orrery.config import Settings
from orrery.db.base import utcnow
from orrery.db.engine import Database
from orrery.db.models import Job, Message
from orrery.memory.embedding_models import EmbeddingModel, embedding_model
from orrery.memory.embedding_store import EMBED_JOB, reembed
from orrery.memory.history import DbHistory
from orrery.memory.messages import append_message
from orrery.repo import chat
from tests.support.factories import make_user
from tests.support.fake_embeddings import FakeEmbeddings, fake_embeddings_server

MODEL = "openai/fake-embed"
HISTORY = [
    "The legal review of the pricing page is due on Friday.",
    "Noted: legal review Friday.",
    "Lunch was fine today.",
    "Good to hear.",
]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[FakeEmbeddings, str]]:
    with fake_embeddings_server() as running:
        yield running


@pytest.fixture
def fake(server: tuple[FakeEmbeddings, str]) -> Iterator[FakeEmbeddings]:
    server[0].reset()
    yield server[0]
    server[0].release()  # nothing stays held after a test


@pytest.fixture
def remote(settings: Settings, server: tuple[FakeEmbeddings, str]) -> Settings:
    return settings.model_copy(
        update={
            "embedding_model": MODEL,
            "embedding_api_base": server[1],
            "embedding_api_key": "sk-test",
            "embedding_query_timeout_seconds": 10.0,
            "embedding_batch_timeout_seconds": 10.0,
        }
    )


def impatient(settings: Settings) -> Settings:
    """Short waits, for a provider that holds every request."""
    update = {"embedding_query_timeout_seconds": 0.5, "embedding_batch_timeout_seconds": 1.0}
    return settings.model_copy(update=update)


async def _session(db: Database, model: EmbeddingModel, texts: list[str] = HISTORY) -> tuple[Any, Any]:
    async with db.transaction() as s:
        user = await make_user(s)
        c = await chat.create_session(s, user.id)
        for i, text in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            await append_message(s, user.id, c.id, chat.NewMessage(role, text), embedding=model)
    return user.id, c.id


async def _messages(db: Database, sid: uuid.UUID) -> list[Message]:
    async with db.sessions() as s:
        query = select(Message).where(Message.session_id == sid).order_by(Message.seq)
        return list((await s.execute(query)).scalars().all())


async def _jobs(db: Database) -> list[Job]:
    async with db.sessions() as s:
        query = select(Job).where(Job.kind == EMBED_JOB).order_by(Job.created_at)
        return list((await s.execute(query)).scalars().all())


async def _window(
    db: Database, sid: uuid.UUID, latest: int, model: EmbeddingModel | None
) -> tuple[str, list[int] | None]:
    """What relevance's window holds for `model`: its model and each row's vector size (None: no vectors)."""
    async with db.sessions() as s, DbHistory(s, sid, latest, model).window(100) as window:
        vectors = window.vectors()
        sizes = (
            None if vectors is None else [window.dimensions if has else 0 for has in window.with_vectors()]
        )
        return window.model, sizes


async def _due_now(db: Database) -> None:
    """Retries wait out their backoff; a test makes them due instead of waiting."""
    async with db.transaction() as s:
        await s.execute(update(Job).where(Job.status == "queued").values(run_after=utcnow()))


async def _turn(orch: Orchestrator, user: Any, sid: Any, text: str) -> dict[str, Any]:
    events = [e async for e in orch.turn(user, sid, text)]
    assert events[-1].type == "done", events[-1]
    context = next(e for e in events if e.type == "context")
    receipt: dict[str, Any] = context.data["receipt"]
    return receipt


def _notes(receipt: dict[str, Any]) -> str:
    return "\n".join(receipt["notes"])


async def test_local_model_embeds_inline_and_stores_its_name(db: Database, settings: Settings) -> None:
    _, sid = await _session(db, embedding_model(settings))
    stored = await _messages(db, sid)
    assert {(m.embedding_model, m.embedding_dim) for m in stored} == {("all-MiniLM-L6-v2", 384)}
    assert all(m.embedding is not None and len(m.embedding) == 768 for m in stored)
    assert await _jobs(db) == []


async def test_background_job_stores_vectors_with_model_and_size(
    db: Database, remote: Settings, fake: FakeEmbeddings
) -> None:
    user, sid = await _session(db, embedding_model(remote))
    assert fake.requests == []  # writing messages called nobody
    assert all(m.embedding is None for m in await _messages(db, sid))
    assert len(await _jobs(db)) == len(HISTORY)

    orch = Orchestrator(db, remote)
    await orch.jobs.run_due()
    stored = await _messages(db, sid)
    assert {(m.embedding_model, m.embedding_dim) for m in stored} == {(MODEL, 16)}
    assert all(m.embedding is not None and len(m.embedding) == 32 for m in stored)
    assert sorted(fake.inputs()) == sorted(HISTORY)
    assert {j.status for j in await _jobs(db)} == {"done"}

    await orch.jobs.run_due()  # idempotent: nothing left to embed, nobody called again
    assert len(fake.inputs()) == len(HISTORY)


async def test_turn_never_waits_on_the_provider(db: Database, remote: Settings, fake: FakeEmbeddings) -> None:
    user, sid = await _session(db, embedding_model(remote))
    fake.mode = "hang"  # every request is held until the test lets it go
    orch = Orchestrator(db, remote)
    receipt = await _turn(orch, user, sid, "When is the legal review due?")
    assert fake.requests == []  # no vector yet anywhere: not even the query is asked for
    assert "4 of 4 messages have no openai/fake-embed vector yet; they were ranked lexically" in _notes(
        receipt
    )
    stored = await _messages(db, sid)
    assert len(stored) == 6 and all(m.embedding is None for m in stored)
    assert [j.status for j in await _jobs(db)] == ["queued"] * 6  # one per message, durable

    fake.release()
    fake.mode = "ok"
    await orch.drain()
    assert all(m.embedding_model == MODEL for m in await _messages(db, sid))


async def test_slow_provider_means_lexical_with_a_note(
    db: Database, remote: Settings, fake: FakeEmbeddings
) -> None:
    user, sid = await _session(db, embedding_model(remote))
    orch = Orchestrator(db, remote)
    await orch.jobs.run_due()  # the history has its vectors
    fake.mode = "hang"
    held = Orchestrator(db, impatient(remote))
    receipt = await _turn(held, user, sid, "When is the legal review due?")
    assert "the query has no vector (openai/fake-embed did not answer within 0.5 s)" in _notes(receipt)
    assert "relevance is lexical only this turn" in _notes(receipt)
    assert fake.inputs()[-1] == "When is the legal review due?"

    await held.jobs.run_due()  # the new messages' jobs time out too: retried later, nothing lost
    pending = [j for j in await _jobs(db) if j.status != "done"]
    assert len(pending) == 2 and all(
        j.status == "queued" and "did not answer" in (j.last_error or "") for j in pending
    )
    assert [m.embedding is None for m in await _messages(db, sid)] == [False] * 4 + [True] * 2

    fake.release()
    fake.mode = "ok"
    await _due_now(db)
    await orch.jobs.run_due()
    assert all(m.embedding_model == MODEL for m in await _messages(db, sid))
    receipt = await _turn(orch, user, sid, "And the pricing page?")
    assert "embeddings" not in _notes(receipt)


async def test_provider_down_answers_the_turn_over_http(
    db: Database, remote: Settings, fake: FakeEmbeddings, demo: Any
) -> None:
    from orrery.app.http import create_app
    from tests.ops.conftest import sse_events
    from tests.support.serving import serving

    async with db.transaction() as s:
        c = await chat.create_session(s, demo.user_id, project_id=demo.project_id)
        for i, text in enumerate(HISTORY):
            new = chat.NewMessage("user" if i % 2 == 0 else "assistant", text)
            await append_message(s, demo.user_id, c.id, new, embedding=embedding_model(remote))
    await Orchestrator(db, remote).jobs.run_due()
    fake.mode = "down"
    async with serving(create_app(impatient(remote)), demo.api_key) as client:
        response = await client.post(f"/v1/sessions/{c.id}/messages", json={"content": "Legal review?"})
        assert response.status_code == 200, response.text
        events = sse_events(response.text)
    context = next(data for name, data in events if name == "context")
    assert events[-1][0] == "done"
    # a 503 (retried by the provider's client until the query timeout): lexical, said so
    assert "the query has no vector (openai/fake-embed" in _notes(context["receipt"])
    assert "relevance is lexical only this turn" in _notes(context["receipt"])
    stored = await _messages(db, c.id)
    assert len(stored) == 6 and stored[4].content == "Legal review?" and stored[5].role == "assistant"


async def test_wrong_size_is_never_stored_or_compared(
    db: Database, remote: Settings, fake: FakeEmbeddings
) -> None:
    user, sid = await _session(db, embedding_model(remote))
    orch = Orchestrator(db, remote)
    await orch.jobs.run_due()  # 16 dimensions
    fake.reset(dimensions=8)
    receipt = await _turn(orch, user, sid, "When is the legal review due?")
    assert "answered a 8-dimension query vector where the stored ones have 16" in _notes(receipt)

    await orch.jobs.run_due()
    pending = [j for j in await _jobs(db) if j.status != "done"]
    assert len(pending) == 2
    assert all("answered 8-dimension vectors where 16 are expected" in (j.last_error or "") for j in pending)
    assert {(m.embedding_model, m.embedding_dim) for m in await _messages(db, sid)} == {
        (MODEL, 16),
        (None, None),
    }


async def test_switching_model_ignores_old_vectors_until_reembed(
    db: Database, settings: Settings, remote: Settings, fake: FakeEmbeddings
) -> None:
    user, sid = await _session(db, embedding_model(settings))  # local vectors
    model = embedding_model(remote)
    assert await _window(db, sid, len(HISTORY), model) == (MODEL, None)  # MiniLM's are not this model's
    orch = Orchestrator(db, remote)
    receipt = await _turn(orch, user, sid, "When is the legal review due?")
    assert "4 of 4 messages have no openai/fake-embed vector yet" in _notes(receipt)
    assert fake.requests == []  # nothing to compare with, so the query is not even embedded

    assert await reembed(db, model, batch=3) == 6
    assert await reembed(db, model) == 0  # idempotent
    assert await _window(db, sid, 6, model) == (MODEL, [16] * 6)
    assert await _window(db, sid, 6, None) == ("all-MiniLM-L6-v2", None)  # none of its own now
    receipt = await _turn(orch, user, sid, "Is the legal review still on Friday?")
    assert "embeddings" not in _notes(receipt)
    assert fake.inputs()[-1] == "Is the legal review still on Friday?"


async def test_jobs_failed_during_an_outage_run_again_once_the_provider_answers(
    db: Database, remote: Settings, fake: FakeEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    """A job that failed for good (its last attempt during the outage) is not left failed: the next
    job the provider answers queues it again. Each failure is one log line, no traceback."""
    once = remote.model_copy(update={"jobs_max_attempts": 1})
    user, sid = await _session(db, embedding_model(once), HISTORY[:2])
    fake.mode = "down"
    orch = Orchestrator(db, once)
    with caplog.at_level("WARNING", logger="orrery.jobs"):
        await orch.jobs.run_due()
    assert [j.status for j in await _jobs(db)] == ["failed", "failed"]
    failures = [r for r in caplog.records if r.name == "orrery.jobs"]
    assert len(failures) == 2 and all(r.exc_info is None for r in failures)
    assert f"failed on its last attempt (1): {MODEL} failed: " in failures[0].getMessage()

    fake.mode = "ok"
    async with db.transaction() as s:  # the next message, stored after the outage
        await append_message(
            s, user, sid, chat.NewMessage("user", "Back online?"), embedding=embedding_model(once)
        )
    await orch.jobs.run_due()  # its job succeeds, and the two failed ones run again in the same pass
    assert {j.status for j in await _jobs(db)} == {"done"}
    assert all(m.embedding_model == MODEL for m in await _messages(db, sid))
