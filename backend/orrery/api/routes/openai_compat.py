"""An OpenAI-compatible front door: `GET /v1/models[/{id}]` and `POST /v1/chat/completions`.

`model` names an agent (`orrery/coach`, `orrery/planner`, ...; plain `orrery` lets the router
choose); any other model answers 404 `model_not_found`. As OpenAI's does, the answer's `model` names
the model that produced it (`openai/gpt-4o-mini`, a fallback's id when one answered, the same on a
replay); a stream's chunks name the requested id until the turn is done, its last chunks the model.
The conversation lives on the server:

- with an `X-Orrery-Session` header, the turn runs on that session;
- without it, the session is derived from the conversation itself: one session per (API key's user,
  `user` field, text of the client's **first** user message). Clients such as Open WebUI resend the
  whole chat on every request, so each of their chats maps to one server session, and two chats
  never merge unless they open with the same first message for the same `user`. The id is
  deterministic (UUIDv5), so concurrent first requests (any process) converge on one session.

`store: false` makes the chat one Orrery does not remember (`remember: false`: never recalled in
another chat, no fact saved from it, not read for patterns): a new chat opens so, an existing one is
switched off. `store: true` or no `store` opens a remembered chat and leaves an existing chat's
choice alone (the person's switch wins over a client's default).

From the client only the **last user message** is taken; earlier messages, system prompts and
sampling settings are ignored because Orrery assembles the context itself. The caller's `tools` run
beside the agent's: a call of one ends the response with `tool_calls` and suspends the turn, and
the `role: "tool"` messages of the next request resume it (`api.openai_tools`). When that message is the
session's latest, still unanswered, the request is a resend (a client's retry): it retries that turn,
or waits for it and shares its outcome, never storing a copy; `Idempotency-Key` works as on
`POST /v1/sessions/{id}/messages`. Every response carries
the session id in `X-Orrery-Session`. Streams are `chat.completion.chunk` events ending in
`data: [DONE]`; `stream_options.include_usage` adds a final usage chunk; a model failure is a
`data: {"error": ...}` event (non-streamed: HTTP 502 with OpenAI's error shape).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from orrery.agents.caller import CallerRequest
from orrery.agents.client_tools import check_client_tools
from orrery.agents.offline import NOTICE as OFFLINE_NOTICE
from orrery.api.errors import SSE_CONTENT
from orrery.api.openai_caller import BadFormat, completion_caller
from orrery.api.openai_params import refused, refused_completion_param
from orrery.api.openai_schemas import (
    OPENAI_ERROR_RESPONSES,
    OPENAI_RATE_LIMITED,
    STREAM_HEADERS,
    AssistantMessage,
    ChatCompletion,
    Choice,
    CompletionRequest,
    ModelCard,
    ModelList,
    OpenAIError,
    Usage,
    finish_reason,
    openai_error,
    remember_for_store,
    sse,
)
from orrery.api.openai_sessions import session_for
from orrery.api.openai_tools import chat_results, chat_tool_calls, client_tools, turn_events
from orrery.db.engine import Database
from orrery.errors import NotFoundError, ValidationError
from orrery.roster import AGENTS
from orrery.services.deps import CurrentUser, SettingsDep

router = APIRouter(prefix="/v1", tags=["openai-compatible"], responses=OPENAI_ERROR_RESPONSES)


def model_ids() -> list[str]:
    """`orrery` (routed) and `orrery/<agent>` for every agent registered now, plugins' included."""
    return ["orrery", *(f"orrery/{a}" for a in AGENTS)]


def canonical_model(model: str) -> str | None:
    """The listed id a request's `model` names, or None: `orrery`, `orrery/<agent>`, and for
    clients that treat a slash as a provider prefix (the Agents SDK) `orrery-<agent>` or the bare
    agent id `<agent>`."""
    if model in model_ids():
        return model
    agent = model.removeprefix("orrery-")
    return f"orrery/{agent}" if agent in AGENTS else None


def agent_of(model: str) -> str | None:
    """The agent a listed id names (None: `orrery`, the router chooses)."""
    return model.removeprefix("orrery/") if model != "orrery" else None


def unknown_model(model: str) -> JSONResponse:
    """OpenAI's own 404 for a model id it does not serve."""
    return openai_error(
        404,
        f"The model {model!r} does not exist; see GET /v1/models",
        type_="invalid_request_error",
        code="model_not_found",
        param="model",
    )


def model_card(model_id: str, chat_model: str) -> ModelCard:
    """The model object: which agent answers, on which chat model; the offline model's notice is
    said here (and in the docs), never inside a reply."""
    agent = model_id.partition("/")[2]
    who = (
        f"{AGENTS[agent].title}: {AGENTS[agent].description}"
        if agent in AGENTS
        else "Routed to the best agent."
    )
    runs = f" {OFFLINE_NOTICE}" if chat_model == "offline" else f" Runs on {chat_model}."
    return ModelCard(id=model_id, description=who + runs)


@router.get("/models", summary="Agents as OpenAI model ids", response_model=ModelList)
async def models(user: CurrentUser, settings: SettingsDep) -> ModelList:
    """`orrery` (routed) and `orrery/<agent>` for each agent."""
    return ModelList(data=[model_card(i, settings.model) for i in model_ids()])


@router.get(
    "/models/{model_id:path}",
    summary="One model id (OpenAI's model object)",
    response_model=ModelCard,
    responses={404: {"model": OpenAIError, "description": "Unknown model (`model_not_found`)"}},
)
async def model(model_id: str, user: CurrentUser, settings: SettingsDep) -> Any:
    """The model object of an id `GET /v1/models` lists; any other id is OpenAI's 404."""
    canonical = canonical_model(model_id)
    return model_card(canonical, settings.model) if canonical else unknown_model(model_id)


async def _session_for(
    db: Database, user_id: uuid.UUID, header: str | None, body: CompletionRequest
) -> uuid.UUID:
    users = [m for m in body.messages if m.role == "user"]
    first = users[0].text() if users else ""
    return await session_for(db, user_id, header, body.user, first, remember=remember_for_store(body.store))


def _last_user_text(body: CompletionRequest) -> str:
    """The text of the last user message, refused (empty, too long) before any session is made."""
    from orrery.agents.turn_store import checked_message

    for message in reversed(body.messages):
        if message.role == "user":
            checked_message(message.text())
            return message.text()
    raise ValidationError("the request has no user message")


@router.post(
    "/chat/completions",
    summary="OpenAI-compatible chat (one server-side session per conversation)",
    response_model=ChatCompletion,
    responses={
        200: {"content": {"text/event-stream": SSE_CONTENT}, "description": "JSON, or chunks when `stream`"},
        404: {"model": OpenAIError, "description": "Unknown model (`model_not_found`) or session"},
        502: {"model": OpenAIError, "description": "The model failed (`model_error`, or `model_timeout`)"},
        **OPENAI_RATE_LIMITED,
    },
)
async def completions(
    body: CompletionRequest,
    request: Request,
    user: CurrentUser,
    x_orrery_session: Annotated[str | None, Header(max_length=100)] = None,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Any:
    """Runs one turn on the server-side session and answers in OpenAI's format. A repeated
    `Idempotency-Key`, or a resent conversation whose last user message is stored and unanswered
    (the SDK's own retries), retries or replays that turn instead of storing a copy; a duplicate
    that arrives while the turn runs waits for it and shares its outcome."""
    checked = _checked(body, request.app.state.settings)
    if isinstance(checked, JSONResponse):
        return checked
    model, caller = checked
    agent = agent_of(model)
    text = _last_user_text(body)
    client = client_tools(body.tools, body.tool_choice, chat_results(body.messages))
    if client is not None:
        check_client_tools(client, agent)  # a clash is refused before any session is made
    try:
        sid = await _session_for(request.app.state.db, user.id, x_orrery_session, body)
    except NotFoundError as exc:  # an `X-Orrery-Session` that is unknown or not yours: OpenAI's shape
        return openai_error(
            404, str(exc), type_="invalid_request_error", code="not_found", param="X-Orrery-Session"
        )
    orchestrator = request.app.state.orchestrator
    events = await turn_events(orchestrator, user.id, sid, text, agent, idempotency_key, client, caller)
    first = await anext(events)  # validation errors surface as HTTP errors before anything streams
    completion = _Completion.new(body.model)
    headers = {"X-Orrery-Session": str(sid)}
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        chunks = _stream(completion, chain(first, events), include_usage=usage)
        return StreamingResponse(chunks, media_type="text/event-stream", headers=headers | STREAM_HEADERS)
    done = [first, *[e async for e in events]][-1]
    if done.type == "error":
        return failed_turn(done.data, headers, request.app.state.settings.retry_after_seconds)
    reply = ChatCompletion(
        id=completion.id,
        created=completion.created,
        model=done.data.get("model") or completion.model,  # the model that answered, also on a replay
        choices=[_choice(done.data)],
        usage=Usage.of(done.data["usage"]),
    )
    return JSONResponse(reply.model_dump(), headers=headers)


def _choice(done: dict[str, Any]) -> Choice:
    """The reply, or the caller's tool calls the turn waits for (`finish_reason: "tool_calls"`)."""
    calls = done.get("client_tool_calls")
    if not calls:
        return Choice(message=AssistantMessage(content=done["reply"]), finish_reason=finish_reason(done))
    message = AssistantMessage(content=done["reply"] or None, tool_calls=chat_tool_calls(calls))
    return Choice(message=message, finish_reason="tool_calls")


def _checked(body: CompletionRequest, settings: Any) -> JSONResponse | tuple[str, CallerRequest | None]:
    """The request's refusal, else its listed model id and caller options."""
    model = canonical_model(body.model)  # no `orreryplanner`, `orrery//coach`, `orrery/coach/`
    if model is None:
        return unknown_model(body.model)
    if (param := refused_completion_param(body)) is not None:  # never silently ignored
        return refused(param)
    try:
        return model, completion_caller(body, settings)
    except BadFormat as exc:
        return bad_format(exc)


def bad_format(exc: BadFormat) -> JSONResponse:
    """OpenAI's 400 for a reply format Orrery cannot ask for, naming the parameter."""
    return openai_error(400, str(exc), type_="invalid_request_error", code="invalid_value", param=exc.param)


def failed_turn(error: dict[str, Any], headers: dict[str, str], retry_after: int) -> JSONResponse:
    """A failed turn in OpenAI's error shape: 502 for the model, 429 + `Retry-After` when the
    provider is rate-limiting (its own wait when it said one), 503 + `Retry-After` when the database
    was unavailable (the client should retry later, not give up)."""
    code = error.get("code", "model_error")
    status = {"unavailable": 503, "rate_limited": 429}.get(code, 502)
    type_ = "rate_limit_error" if status == 429 else "api_error"
    failed = openai_error(status, error["message"], type_=type_, code=code)
    failed.headers.update(headers)
    if status != 502:
        failed.headers["Retry-After"] = str(error.get("retry_after") or retry_after)
    else:  # retried here already, or a key to fix: the SDK's own retries would multiply upstream calls
        failed.headers["x-should-retry"] = "false"
    return failed


@dataclass(frozen=True)
class _Completion:
    """What every chunk of one completion repeats: its id, creation time and model."""

    id: str
    created: int
    model: str

    @classmethod
    def new(cls, model: str) -> _Completion:
        return cls(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), model)

    def chunk(self, choices: list[dict[str, Any]], **extra: Any) -> str:
        head = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }
        return sse({**head, "choices": choices, **extra})

    def delta(self, delta: dict[str, Any], finish: str | None = None) -> str:
        return self.chunk([{"index": 0, "delta": delta, "finish_reason": finish}])


async def _stream(
    completion: _Completion, events: AsyncIterator[Any], *, include_usage: bool
) -> AsyncIterator[str]:
    """The turn's events as `chat.completion.chunk`s; a failure is an error event, then `[DONE]`."""
    yield completion.delta({"role": "assistant", "content": ""})
    done: dict[str, Any] = {}
    async for event in events:
        if event.type == "text":
            yield completion.delta({"content": event.data["delta"]})
        elif event.type == "error":
            code = event.data.get("code") or "model_error"  # as the JSON answer's
            yield sse({"error": {"message": event.data["message"], "type": "api_error", "code": code}})
            yield sse("[DONE]")
            return
        elif event.type == "done":
            done = event.data
            completion = replace(completion, model=done.get("model") or completion.model)  # who answered
            if done.get("replayed") and done.get("reply"):  # a replay streams no text: send the stored reply
                yield completion.delta({"content": done["reply"]})
    calls = done.get("client_tool_calls")
    if calls:  # the turn waits for the caller's tools
        pieces = [{"index": i, **call} for i, call in enumerate(chat_tool_calls(calls))]
        yield completion.delta({"tool_calls": pieces})
    yield completion.delta({}, finish_reason(done))
    if include_usage:
        yield completion.chunk([], usage=Usage.of(done.get("usage") or {}).model_dump())
    yield sse("[DONE]")


async def chain(first: Any, rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    yield first
    async for event in rest:
        yield event
