"""The Vercel AI SDK UI-message stream, so a `useChat` front end works unchanged.

`POST /v1/sessions/{id}/chat` accepts the SDK's request body (`trigger`, `id`, `messages`,
`messageId`). The history is the server's session, so the client's messages are read only for:

- `submit-message`: the **last user message** is the new turn;
- `regenerate-message` (`regenerate()`): the reply to the client's last user message is made again.
  The client sent every message before the one it regenerates, so if it holds N user messages, the
  server drops everything after its own N-th user message and answers that one again: the server
  keeps as many messages as the client shows (no duplicated user turn).

A body field `remember` (`useChat`'s `body: {remember: false}`, or the transport's) sets whether the
chat is remembered before the turn runs, as `PATCH /v1/sessions/{id}` does; left out, it stays.

The reply is pydantic-ai's own `VercelAIEventStream` over the turn's model events (text, tool
input/output, `tool-output-error` for failed tools, an `error` chunk when the model fails), with
the `x-vercel-ai-ui-message-stream: v1`, `cache-control: no-cache` and `x-accel-buffering: no`
headers. `start` carries the reply's `messageId`, which is the id it is stored under, and `finish`
its `finishReason`. `GET .../chat` reloads the chat as `UIMessage`s with the same ids, and
`GET .../chat/stream` is what `resumeStream()` calls: a running turn's reply once it is done, or 204;
`GET .../chat/{chatId}/stream` answers the same at the transport's default resume URL.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import Discriminator, Field, StrictBool
from pydantic_ai.ui.vercel_ai import VercelAIEventStream
from pydantic_ai.ui.vercel_ai.request_types import RegenerateMessage, SubmitMessage, UIMessage
from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DoneChunk, FinishChunk, FinishStepChunk

from orrery.agents.orchestrator import ModelEvent, TurnEvent
from orrery.api.errors import ERROR_RESPONSES, RATE_LIMITED, SSE_CONTENT
from orrery.api.vercel_messages import STREAM_HEADERS, finished_reply_chunks, ui_message
from orrery.errors import ValidationError
from orrery.repo import chat
from orrery.repo.sessions import set_remember
from orrery.services.deps import CurrentUser, ReadSessionDep
from orrery.services.limits import MAX_INT
from orrery.validation import check_text

router = APIRouter(prefix="/v1/sessions", tags=["chat"], responses=ERROR_RESPONSES)
SDK_VERSION: Literal[5] = 5


REMEMBER = "false: don't remember this chat; true: remember it; absent: unchanged"


class Submit(SubmitMessage):
    """`submit-message`, plus Orrery's `remember`."""

    remember: StrictBool | None = Field(default=None, description=REMEMBER)


class Regenerate(RegenerateMessage):
    """`regenerate-message`, plus Orrery's `remember`."""

    remember: StrictBool | None = Field(default=None, description=REMEMBER)


ChatRequest = Annotated[Submit | Regenerate, Discriminator("trigger")]


class ModelFailed(Exception):
    """The turn's model failed; pydantic-ai's stream turns it into an `error` chunk."""


class _Stream(VercelAIEventStream[Any, Any]):
    """pydantic-ai's stream with the headers a proxy must not buffer or cache, and a `finishReason`
    even when the model reported none (a finished run stopped)."""

    @property
    def response_headers(self) -> Mapping[str, str] | None:
        return STREAM_HEADERS

    async def after_stream(self) -> AsyncIterator[BaseChunk]:
        yield FinishStepChunk()
        if self.cancelled is None:
            yield FinishChunk(finish_reason=self._finish_reason or "stop")
        yield DoneChunk()


def _texts(message: Any) -> str:
    return " ".join(getattr(p, "text", "") for p in message.parts if getattr(p, "type", "") == "text")


def last_user_text(data: SubmitMessage | RegenerateMessage) -> str:
    """The text of the request's last user message (storable, not empty)."""
    for message in reversed(data.messages):
        if message.role == "user":
            text = _texts(message)
            if text.strip():
                try:
                    return check_text(text, "the message")
                except ValueError as exc:
                    raise ValidationError(str(exc)) from None
    raise ValidationError("the request has no user message with text")


@router.post(
    "/{session_id}/chat",
    summary="Vercel AI SDK UI-message stream (useChat)",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": SSE_CONTENT}, "description": "UI-message stream chunks"},
        **RATE_LIMITED,
    },
)
async def vercel_chat(
    session_id: str,
    body: Annotated[ChatRequest, Body(description="The AI SDK's chat request (DefaultChatTransport)")],
    request: Request,
    user: CurrentUser,
) -> StreamingResponse:
    """Run (or, for `regenerate-message`, re-run) a turn and stream it in the UI-message protocol."""
    orchestrator = request.app.state.orchestrator
    message: str | None = last_user_text(body)
    if isinstance(body, RegenerateMessage) or body.remember is not None:
        async with request.app.state.db.transaction() as s:
            if body.remember is not None:
                await set_remember(s, user.id, session_id, body.remember)
            if isinstance(body, RegenerateMessage):
                ordinal = sum(1 for m in body.messages if m.role == "user")
                await chat.rewind_to_user_message(s, user.id, session_id, ordinal)
                message = None
    model_events: deque[ModelEvent] = deque()
    reply_id = uuid.uuid4()  # announced in `start`, stored as the reply's id
    events = orchestrator.turn(
        user.id, session_id, message, on_model_event=model_events.append, reply_id=reply_id
    )
    first = await anext(events)  # unknown sessions and refused messages fail here, as HTTP errors

    async def native() -> AsyncIterator[ModelEvent]:
        pending: list[TurnEvent] = [first]
        while pending:
            event = pending.pop()
            while model_events:
                yield model_events.popleft()
            if event.type == "error":
                raise ModelFailed(event.data["message"])
            nxt = await anext(events, None)
            if nxt is not None:
                pending.append(nxt)
        while model_events:
            yield model_events.popleft()

    stream = _Stream(
        run_input=body,
        sdk_version=SDK_VERSION,
        accept=request.headers.get("accept"),
        server_message_id=str(reply_id),
    )
    return stream.streaming_response(stream.transform_stream(native()))


@router.get(
    "/{session_id}/chat",
    summary="The chat as AI SDK UIMessages (to reload useChat)",
    response_model=list[UIMessage],
    response_model_exclude_none=True,
)
async def ui_messages(
    session_id: str,
    user: CurrentUser,
    session: ReadSessionDep,
    after_seq: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 500,
) -> list[UIMessage]:
    """The session's user and assistant messages as `UIMessage`s (`id` = the stored id, the one the
    stream's `start` announced; `metadata.seq` to page on with `after_seq`)."""
    messages = await chat.list_messages(session, user.id, session_id, after_seq=after_seq, limit=limit)
    return [ui_message(m) for m in messages if m.role in ("user", "assistant")]


@router.get(
    "/{session_id}/chat/stream",
    summary="Resume the running turn's stream (AI SDK resumeStream)",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": SSE_CONTENT}, "description": "The running turn's reply"},
        204: {"description": "No turn is running on the session"},
    },
)
async def resume_stream(session_id: str, request: Request, user: CurrentUser) -> Response:
    """When a turn runs on the session (in any process), wait for it and stream its stored reply
    (or its failure) as one UI-message stream; 204 when none runs."""
    return await _resume(session_id, request, user)


@router.get(
    "/{session_id}/chat/{chat_id}/stream",
    summary="Resume at the AI SDK's default URL (`{api}/{chatId}/stream`)",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": SSE_CONTENT}, "description": "The running turn's reply"},
        204: {"description": "No turn is running on the session"},
    },
)
async def resume_at_default_url(
    session_id: str, chat_id: str, request: Request, user: CurrentUser
) -> Response:
    """What `resume: true` calls with the transport's default `prepareReconnectToStreamRequest`
    (`api` is this session's `.../chat`; `chatId`, the client's own chat id, is not needed): the
    same as `GET .../chat/stream`."""
    del chat_id
    return await _resume(session_id, request, user)


async def _resume(session_id: str, request: Request, user: CurrentUser) -> Response:
    """When a turn runs on the session (in any process), wait for it and stream its stored reply
    (or its failure) as one UI-message stream; 204 when none runs."""
    orchestrator, db = request.app.state.orchestrator, request.app.state.db
    async with db.sessions() as s:
        sid = (await chat.get_session(s, user.id, session_id)).id
    if not await orchestrator.locks.live(sid):
        return Response(status_code=204)
    async with orchestrator.locks.hold(sid), db.sessions() as s:  # held: the running turn has ended
        latest = (await chat.session_and_latest(s, user.id, sid)).latest
    if latest is None or (latest.role == "user" and latest.status != "failed"):
        return Response(status_code=204)
    reply = latest if latest.role == "assistant" else None
    chunks = finished_reply_chunks(reply, None if reply else "the model failed; retry")
    body = (f"data: {c.encode(SDK_VERSION)}\n\n" for c in chunks)
    return StreamingResponse(body, media_type="text/event-stream", headers=STREAM_HEADERS)
