"""One chat turn, end to end, as a stream of events.

1. Persist the user message first, in its own transaction (it is never lost); the same
   transaction checks the session and its focus and counts the turn against the user's limits.
2. Choose the agent: an explicit choice, else the session's active agent, else the first-message
   router; every switch is recorded as an agent transition.
3. Assemble the working context (memory, scoping, expertise, focus, knowledge) in a read-only
   session: no write lock is held; what it changes (the switch, the knowledge decision, a summary)
   is kept as memos.
4. Run the pydantic-ai agent with `TurnDeps`; stream text deltas and tool calls and results.
5. Persist the assistant message with agent id, tool calls and results, token usage and latency,
   and the memos; apply a handoff the model asked for; record a check-in for the day.

Each step holds a database connection only for its own short transaction; none is held while the
model runs. A turn runs in its own task and finishes server-side even if the client goes away. A
failing model sends an `error` event with a short message (details go to the log) and marks the user
message `failed`; `turn(..., message=None)` or the same Idempotency-Key retries it (rules in
`turn_store`); a duplicate that arrived while it ran shares its outcome instead. A turn whose process
died is recognised by its free turn lock and treated as failed. Turns on one session are serialized,
across processes on PostgreSQL (`turn_lock`); different sessions run in parallel.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic_ai import DeferredToolRequests
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.arrivals import Arrival, arrival_of
from orrery.agents.attempts import failure_data, is_truncated, shared_failure_data
from orrery.agents.caller import CallerRequest, check_output, model_settings
from orrery.agents.client_tools import ClientTools
from orrery.agents.client_turn import resume_events, suspended_event
from orrery.agents.detach import run_detached
from orrery.agents.model_run import ModelRun, history_for, stream_model
from orrery.agents.models import build_model
from orrery.agents.preload import preload_provider
from orrery.agents.router import choose_agent
from orrery.agents.turn_context import turn_context
from orrery.agents.turn_events import (
    UNANSWERED,
    ModelEvent,
    TurnEvent,
    context_event,
    done_data,
    is_text,
    joined,
)
from orrery.agents.turn_jobs import TurnJobs
from orrery.agents.turn_lock import TurnLocks
from orrery.agents.turn_models import ModelFactory, TurnModels
from orrery.agents.turn_store import (
    MAX_MESSAGE_CHARS,
    BeforeStore,
    PendingTurn,
    StoredReply,
    mark_failed,
    persist_reply,
    request_fingerprint,
    store_user_message,
)
from orrery.config import Settings
from orrery.context.working_context import WorkingContext
from orrery.db.engine import Database
from orrery.db.memos import Memo, pending_memos
from orrery.db.models import ChatSession, Message
from orrery.deps import HandoffRequest, TurnDeps
from orrery.memory.summaries import Summarizer
from orrery.ops import observe
from orrery.ops.cost import message_cost
from orrery.ops.logs import conversation_id
from orrery.ops.metered_model import MeteredModel
from orrery.repo.scope import as_uuid
from orrery.roster import AgentDefinition, get_agent

TEXT_WINDOW_SECONDS = 0.02
"""After a turn's first text, deltas arriving within 20 ms travel as one event (one SSE write, not
one per token); the first delta is never held back."""
__all__ = ["MAX_MESSAGE_CHARS", "UNANSWERED", "ModelEvent", "Orchestrator", "TurnEvent"]


class Orchestrator:
    """Runs chat turns against one database with one model factory."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        model_factory: ModelFactory = build_model,
        on_context: Callable[[WorkingContext], None] | None = None,
    ) -> None:
        """`on_context` sees each turn's assembled working context (the testing kit records it).
        Plugins' agents, tools and strategies are those the composition root registered."""
        self.db = db
        self.settings = settings
        self.models = TurnModels(settings, model_factory)
        self.on_context = on_context
        self.locks = TurnLocks(settings)
        self.background: set[asyncio.Task[Any]] = set()
        """Turns in flight (kept so they are not garbage-collected, and finish before shutdown)."""
        self.turn_jobs = TurnJobs(db, settings, self.models)
        self.jobs = self.turn_jobs.worker
        """Durable background work (`agents.turn_jobs`); the app starts its polling loop."""
        self.embedding = self.turn_jobs.embedding

    async def turn(
        self,
        user_id: uuid.UUID,
        session_id: uuid.UUID | str,
        message: str | None,
        *,
        agent: str | None = None,
        model: str | None = None,
        client_key: str | None = None,
        resend: bool = False,
        on_model_event: Callable[[ModelEvent], None] | None = None,
        before_store: BeforeStore | None = None,
        reply_id: uuid.UUID | None = None,
        client: ClientTools | None = None,
        caller: CallerRequest | None = None,
    ) -> AsyncIterator[TurnEvent]:
        """Run one turn; `message=None` retries the latest unanswered user message; a repeated
        `client_key` (Idempotency-Key) replays the original turn instead of running it twice, and a
        duplicate that arrived while it ran shares its outcome; `resend` (a door that resends the
        whole conversation) treats `message` equal to the latest, unanswered user message the same
        way; `on_model_event` sees every raw pydantic-ai event (for UI protocols pydantic-ai maps
        itself); `before_store` writes in the message's own transaction, under the turn lock (an
        edit's supersede); `reply_id` is the id the reply is stored under (a door announced it before
        the run); `client`: the caller's tools (a call of one suspends the turn, `resume` goes on);
        `caller`: an application's instructions, reply format and sampling settings
        (`agents.caller`). Refusals raise before the first event and store nothing."""
        if agent is not None:
            get_agent(agent)
        sid = as_uuid(session_id, "session")  # whose session it is, the store checks (else not found)
        conversation_id.set(str(sid))  # traces name the session: `gen_ai.conversation.id`
        fingerprint = request_fingerprint(message, agent) if client_key else None
        arrival = await arrival_of(self.db, sid, client_key, message if resend else None)
        source = self._serialised(
            user_id,
            sid,
            message,
            agent,
            model,
            client_key,
            fingerprint,
            arrival,
            on_model_event,
            before_store,
            reply_id,
            client,
            caller,
        )
        failed = lambda exc: _failed(exc, sid)  # noqa: E731
        events = run_detached(source, self.background, failed, joined, TEXT_WINDOW_SECONDS, is_text)
        async for event in events:
            yield event

    async def _serialised(
        self,
        user_id: uuid.UUID,
        sid: uuid.UUID,
        message: str | None,
        agent: str | None,
        model: str | None,
        client_key: str | None,
        fingerprint: str | None,
        arrival: Arrival,
        on_model_event: Callable[[ModelEvent], None] | None = None,
        before_store: BeforeStore | None = None,
        reply_id: uuid.UUID | None = None,
        client: ClientTools | None = None,
        caller: CallerRequest | None = None,
    ) -> AsyncIterator[TurnEvent]:
        # the turn's read session (no transaction): the message may be stored in it (one
        # statement); `_turn` closes it after assembly, before the model runs
        async with self.locks.hold(sid), self.db.single() as reads:
            pending = await store_user_message(
                self.db,
                self.settings,
                user_id,
                sid,
                message,
                client_key,
                fingerprint,
                reads,
                self.embedding,
                arrival,
                before_store,
            )
            self.turn_jobs.embeddings_queued()
            if pending.shared_failure:  # the same request ran while this one waited, and failed
                yield TurnEvent("error", shared_failure_data())
                return
            if pending.replay is not None:
                observe.turn_replayed(pending.replay.agent_id)
                yield TurnEvent("agent", {"agent": pending.replay.agent_id})
                yield TurnEvent("done", done_data(pending.replay, replayed=True))
                return
            if reply_id is not None:
                pending = replace(pending, reply_id=reply_id)
            try:
                turn = self._turn(user_id, sid, pending, agent, model, on_model_event, reads, client, caller)
                async for event in turn:
                    yield event
            except BaseException:
                await mark_failed(self.db, pending.message_id)
                raise

    async def _turn(
        self,
        user_id: uuid.UUID,
        sid: uuid.UUID,
        pending: PendingTurn,
        agent: str | None,
        model: str | None,
        on_model_event: Callable[[ModelEvent], None] | None,
        reads: AsyncSession,
        client: ClientTools | None = None,
        caller: CallerRequest | None = None,
    ) -> AsyncIterator[TurnEvent]:
        """Choose the agent, assemble the context, stream the model's run, then store the reply: the
        turn's path in order. Choosing and assembling share one read-only session outside any
        transaction (`reads`; no write lock held, no `BEGIN`/`ROLLBACK` round trips;
        the turn lock keeps the session's own rows still), closed before the model runs; the
        `agent` event goes out before assembly, so the client's first byte does not wait for it.
        What they change (the switch, the knowledge decision, a summary) is written with the reply
        as memos."""
        started = time.perf_counter()
        await preload_provider(model or self.settings.model, self.settings)  # heavy import off the loop
        async with reads as s:
            record = _session_row(s, sid, pending)
            chosen = await choose_agent(s, user_id, record, pending.text, agent)
            yield TurnEvent("agent", {"agent": chosen.id})
            summarizer = self.summarizer(model)
            wc = await turn_context(s, self.settings, summarizer, user_id, record, pending, chosen, caller)
            memos = pending_memos(s)
        deps = self.deps_for(user_id, record)
        if self.on_context is not None:
            self.on_context(wc)
        yield context_event(wc)
        run = ModelRun()
        try:
            outs = self._run_model(chosen, wc, deps, pending.text, model, run, on_model_event, client, caller)
            async for out in outs:
                yield out
        except Exception as exc:  # any model or tool failure: report it, keep the session consistent
            observe.turn_failed(exc, agent=chosen.id, user_id=user_id, session_id=sid)  # logs it in full
            await mark_failed(self.db, pending.message_id)
            yield _failed(exc, sid, logged=True)
            return
        if isinstance(run.result.output, DeferredToolRequests):  # the caller's tools: wait for results
            ids = (user_id, sid, pending.message_id, chosen.id, model)
            yield await suspended_event(self, *ids, run, retried=pending.retried, memos=memos)
            return
        latency = int((time.perf_counter() - started) * 1000)
        summarized = wc.memory.user_summary.last_updated if wc.memory.user_summary else None
        saved = await self._finish(
            user_id, sid, pending, chosen.id, run, latency, deps.handoff, model, memos, summarized
        )
        yield TurnEvent("done", done_data(saved, handoff=deps.handoff.to))

    def deps_for(self, user_id: uuid.UUID, record: ChatSession) -> TurnDeps:
        """What the turn's tools get: the user, and the session's project and focus."""
        return TurnDeps(
            db=self.db,
            user_id=user_id,
            settings=self.settings,
            project_id=record.project_id,
            session_id=record.id,
            focus_kind=record.focus_kind,
            focus_id=record.focus_id,
        )

    async def _run_model(
        self,
        chosen: AgentDefinition,
        wc: WorkingContext,
        deps: TurnDeps,
        text: str,
        model: str | None,
        run: ModelRun,
        on_model_event: Callable[[ModelEvent], None] | None,
        client: ClientTools | None = None,
        caller: CallerRequest | None = None,
    ) -> AsyncIterator[TurnEvent]:
        """The model's run as turn events; its result and tool calls are left in `run`. A reply in
        the caller's format is checked against it (a reply cut by the token limit is not: it says
        so with its finish reason)."""
        metered = MeteredModel(self.models.turn_model(model), chosen.id)
        history = history_for(wc.messages, text)
        settings = model_settings(caller)
        events = stream_model(
            chosen,
            metered,
            wc.system_prompt,
            history,
            text,
            deps,
            run,
            on_model_event,
            client,
            settings=settings,
        )
        async for out in events:
            yield out
        if isinstance(run.result.output, DeferredToolRequests):
            return  # the caller's tools answer first: the format is checked on the reply
        if caller and caller.output and not is_truncated(run.result.response):
            check_output(caller.output, str(run.result.output))

    async def _finish(
        self,
        user_id: uuid.UUID,
        sid: uuid.UUID,
        pending: PendingTurn,
        agent_id: str,
        run: ModelRun,
        latency: int,
        handoff: HandoffRequest,
        model: str | None,
        memos: list[Memo],
        summarized: datetime | None,
    ) -> Message:
        """Store the reply with the model that answered it (a fallback's id when one did), its usage
        and that model's price, and what assembling the context left to write, then the bookkeeping
        a finished turn triggers (`summarized`: when the person's summary was last refreshed, as the
        turn read it)."""
        assert run.result is not None
        usage = run.result.usage
        answered_by = run.result.response.model_name or model or self.settings.model
        cost = await message_cost(answered_by, usage.input_tokens, usage.output_tokens)
        reply = StoredReply(
            agent_id,
            str(run.result.output),
            list(run.calls.values()),
            usage,
            latency,
            is_truncated(run.result.response),
            cost,
            pending.reply_id,
            answered_by,
        )
        answered = pending.message_id if pending.retried else None
        saved = await persist_reply(
            self.db, self.settings, self.embedding, user_id, sid, answered, reply, handoff, memos
        )
        observe.turn_finished(agent_id, latency / 1000, usage, run.calls.values())
        await self.turn_jobs.after_turn(user_id, sid, summarized, model)
        return saved

    async def resume(
        self, user_id: uuid.UUID, session_id: uuid.UUID | str, client: ClientTools
    ) -> AsyncIterator[TurnEvent]:
        """Continue the session's turn suspended on the caller's tool calls with their results
        (`client.results`); refusals (no such pending call, expired) raise before the first event."""
        sid = as_uuid(session_id, "session")
        conversation_id.set(str(sid))
        source = resume_events(self, user_id, sid, client)
        failed = lambda exc: _failed(exc, sid)  # noqa: E731
        events = run_detached(source, self.background, failed, joined, TEXT_WINDOW_SECONDS, is_text)
        async for event in events:
            yield event

    @property
    def model_factory(self) -> ModelFactory:
        """How models are built (a test may swap it between turns)."""
        return self.models.factory

    @model_factory.setter
    def model_factory(self, factory: ModelFactory) -> None:
        self.models.factory = factory

    def summarizer(self, model: str | None = None) -> Summarizer | None:
        """The turn's summarizer, built once per process and model (`agents.turn_models`), for turns
        and for the context views that preview them."""
        return self.models.summarizer(model)

    async def drain(self) -> None:
        """Let turns in flight finish, then run the background jobs that are due now, here (tests,
        the CLI before it exits)."""
        await self.finish_turns()
        await self.jobs.run_due()

    async def finish_turns(self) -> None:
        """Wait for every turn still running (its client may be gone)."""
        while self.background:
            await asyncio.gather(*list(self.background), return_exceptions=True)

    async def close(self) -> None:
        """Shutdown: let turns in flight finish, then release the cross-process turn locks."""
        await self.finish_turns()
        await self.locks.close()


def _session_row(s: AsyncSession, sid: uuid.UUID, pending: PendingTurn) -> ChatSession:
    """The session's row as the store left it, attached to `s` so changes to it are tracked there
    (a turn that runs always has one: only replays and shared failures come without)."""
    assert pending.chat is not None and pending.chat.id == sid
    s.add(pending.chat)
    return pending.chat


def _failed(exc: BaseException, sid: uuid.UUID, *, logged: bool = False) -> TurnEvent:
    """The `error` event ending a failed turn (short message; the exception goes to the log)."""
    return TurnEvent("error", failure_data(exc, sid, logged=logged))
