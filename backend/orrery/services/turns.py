"""A chat turn over HTTP, shared by the API and the web app: run it as Server-Sent Events or JSON,
edit-and-resend the last message, and the working context the next turn would see. One code path,
so both doors stream, fail and retry alike."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import Field
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.agents.orchestrator import Orchestrator, TurnEvent
from orrery.agents.turn_store import BeforeStore
from orrery.errors import error_body
from orrery.services.limits import Text
from orrery.validation import StorableBody

log = logging.getLogger("orrery.api")


def _agent_names(schema: dict[str, Any]) -> None:
    """The agents known when the document is built (plugins register theirs before serving)."""
    from orrery.roster import AGENTS

    schema["enum"] = sorted(AGENTS)


AgentName = Annotated[str, Field(max_length=64, json_schema_extra=_agent_names)]
"""An agent id; the OpenAPI document lists the registered ones."""


def _strategy_names(schema: dict[str, Any]) -> None:
    """The scoping strategies registered when the document is built (plugins' included)."""
    from orrery.memory.scoping import strategy_names

    schema["enum"] = sorted(strategy_names())


StrategyName = Annotated[Text, Field(max_length=64, json_schema_extra=_strategy_names)]
"""A message-scoping strategy's name; the OpenAPI document lists the registered ones."""


class MessageIn(StorableBody):
    """A user message."""

    content: Text = Field(min_length=1, max_length=20_000)
    agent: AgentName | None = None


ContextDetail = Literal["digest", "full"]
"""How a `context` event carries the prompt: its digest (default), or the full text as well."""


def sse(event: Any, context: ContextDetail = "full") -> str:
    """One Server-Sent Event; a `context` event carries only the prompt's digest unless `full`.
    Events hold plain values built for the turn, never a cycle: the encoder does not look for one
    (looking cost 40% of encoding a receipt that recalled 200 units, ~80 KB)."""
    data = event.data if event.type != "context" or context == "full" else digested(event.data)
    return f"event: {event.type}\ndata: {json.dumps(data, default=str, check_circular=False)}\n\n"


def digested(data: dict[str, Any]) -> dict[str, Any]:
    """The `context` event without the prompt's text: a digest that changes when the system prompt
    or the messages do, and their sizes. `GET /v1/sessions/{id}/context?at=SEQ` shows the text."""
    prompt, messages = data.get("system_prompt", ""), data.get("messages", [])
    body = json.dumps([prompt, messages], ensure_ascii=False, default=str, check_circular=False).encode()
    slim = {k: v for k, v in data.items() if k not in ("system_prompt", "messages")}
    slim["digest"] = {
        "sha256": hashlib.sha256(body).hexdigest(),
        "system_prompt_chars": len(prompt),
        "messages": len(messages),
    }
    return slim


def wants_json(accept: str | None) -> bool:
    """`Accept: application/json` (and not also event-stream) asks for the finished turn."""
    return bool(accept and "application/json" in accept and "text/event-stream" not in accept)


async def run_turn(
    orchestrator: Orchestrator,
    user_id: uuid.UUID,
    session_id: str,
    body: MessageIn,
    *,
    idempotency_key: str | None = None,
    accept: str | None = None,
    context: ContextDetail = "digest",
    before_store: BeforeStore | None = None,
) -> Any:
    """Run a turn: the finished turn as a dict (or a failed turn's JSON response) when JSON is asked
    for, else a streaming response (`context` says what its `context` event carries). Validation
    errors raise before the stream starts."""
    sid = uuid.UUID(session_id) if _is_uuid(session_id) else session_id
    events = orchestrator.turn(
        user_id, sid, body.content, agent=body.agent, client_key=idempotency_key, before_store=before_store
    )
    if wants_json(accept):
        collected = [e async for e in events]
        last = collected[-1]
        if last.type == "error":
            return failed_turn(last.data, orchestrator.settings.retry_after_seconds)
        return last.data
    first = await anext(events)

    async def stream() -> AsyncIterator[str]:
        yield sse(first, context)
        try:
            async for event in events:
                yield sse(event, context)
        except Exception:  # never cut a stream without saying so
            log.exception("turn stream on session %s broke", session_id)
            yield sse(TurnEvent("error", {"message": "the turn failed", "code": "internal", "retry": True}))

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


async def edit_and_rerun(
    orchestrator: Orchestrator,
    user_id: uuid.UUID,
    session_id: str,
    seq: int,
    body: MessageIn,
    *,
    idempotency_key: str | None = None,
    accept: str | None = None,
    context: ContextDetail = "digest",
) -> Any:
    """Supersede the session's latest user message (`seq`) with `body.content`, then run the turn
    as `run_turn` does. The agent is checked first, and the supersede commits in the new message's
    own transaction, under the turn lock: a refused edit (unknown agent, a limit, a gone session)
    leaves the conversation as it was."""
    from orrery.repo.edits import supersede_last_user_message
    from orrery.roster import get_agent

    if body.agent is not None:
        get_agent(body.agent)

    async def supersede(session: AsyncSession) -> int:
        return await supersede_last_user_message(
            session, user_id, session_id, seq, body.content, idempotency_key
        )

    return await run_turn(
        orchestrator,
        user_id,
        session_id,
        body,
        idempotency_key=idempotency_key,
        accept=accept,
        context=context,
        before_store=supersede,
    )


NO_CLIENT_RETRY = {"x-should-retry": "false"}
"""On a 502: the provider call was already retried here, or cannot succeed until a setting changes,
so a client's own retries (the OpenAI SDKs retry 5xx twice) would only multiply upstream calls."""


def failed_turn(data: dict[str, Any], retry_after: int) -> JSONResponse:
    """A failed turn as JSON: 503 + `Retry-After` for an outage, 429 + `Retry-After` when the
    provider rate-limits, else 502 (the model failed) with
    the code the stream's `error` event carries (`model_timeout`, `model_auth` or `model_error`), and
    `x-should-retry: false`; `details.retry` says whether sending it again later can help."""
    if data.get("code") == "unavailable":
        return JSONResponse(
            error_body("unavailable", data["message"], {"retry_after": retry_after}),
            status_code=503,
            headers={"Retry-After": str(retry_after)},
        )
    if data.get("code") == "rate_limited":  # the provider's limit: wait as it asked, then retry
        wait = data.get("retry_after") or retry_after
        return JSONResponse(
            error_body("rate_limited", data["message"], {"retry_after": wait, "retry": True}),
            status_code=429,
            headers={"Retry-After": str(wait)},
        )
    details = {"retry": data.get("retry", True), "code": data.get("code")}
    code = data.get("code") or "model_error"
    return JSONResponse(error_body(code, data["message"], details), status_code=502, headers=NO_CLIENT_RETRY)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
