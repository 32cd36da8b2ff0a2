"""OpenAI request parameters Orrery does not serve, refused with a 400 that names them rather than
ignored: a client that sends tools or asks for structured output would otherwise break only when it
parses a reply that never honoured them. The agents run Orrery's own tools, so client tools
(`tools`, `tool_choice`, `functions`) and several choices (`n`) are refused; asking for nothing
(`tools: []`, `tool_choice: "auto"` or `"none"`, `n: 1`) is accepted. Reply formats and sampling
settings are served (`api.openai_caller`)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from orrery.api.openai_errors import openai_body

_WHY = {
    "tools": "client tools are not passed to Orrery's agents, which run their own tools",
    "tool_choice": "client tools are not passed to Orrery's agents, which run their own tools",
    "functions": "client functions are not passed to Orrery's agents, which run their own tools",
    "function_call": "client functions are not passed to Orrery's agents, which run their own tools",
    "n": "Orrery answers one choice per turn",
}


def refused(param: str) -> JSONResponse:
    """OpenAI's 400 for a parameter this server does not support."""
    message = f"Unsupported parameter: '{param}': {_WHY[param]}. Remove it (see docs/doors/openai.md)."
    body = openai_body(message, "invalid_request_error", "unsupported_parameter", param)
    return JSONResponse(body, status_code=400)


def _tool_choice_asks(choice: Any) -> bool:
    return choice is not None and choice not in ("auto", "none")


def refused_completion_param(body: Any) -> str | None:
    """The first chat-completions parameter that asks for what is not served, or None."""
    asks = {
        "tools": bool(body.tools),
        "tool_choice": _tool_choice_asks(body.tool_choice),
        "functions": bool(body.functions),
        "function_call": _tool_choice_asks(body.function_call),
        "n": body.n not in (None, 1),
    }
    return next((param for param, ask in asks.items() if ask), None)


def refused_response_param(body: Any) -> str | None:
    """The first Responses parameter that asks for what is not served, or None."""
    asks = {
        "tools": bool(body.tools),
        "tool_choice": _tool_choice_asks(body.tool_choice),
    }
    return next((param for param, ask in asks.items() if ask), None)
