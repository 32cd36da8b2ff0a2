"""OpenAI request parameters Orrery does not serve, refused with a 400 that names them rather than
ignored: a client that asks for what is not served would otherwise break only when it parses a
reply that never honoured it. The caller's `tools` and `tool_choice` are served (`api.openai_tools`),
and so are reply formats and sampling settings (`api.openai_caller`); the legacy `functions` /
`function_call` and several choices (`n`) are refused; asking for nothing (`functions: []`,
`function_call: "auto"` or `"none"`, `n: 1`) is accepted."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from orrery.api.openai_errors import openai_body

_WHY = {
    "functions": "the legacy functions are not served; send them as `tools`",
    "function_call": "the legacy function_call is not served; send `tool_choice`",
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
        "functions": bool(body.functions),
        "function_call": _tool_choice_asks(body.function_call),
        "n": body.n not in (None, 1),
    }
    return next((param for param, ask in asks.items() if ask), None)
