"""The OpenAPI document describes every route: typed success bodies, declared error statuses, the
Vercel request body, and the security schemes `/docs` needs for its Authorize button."""

from __future__ import annotations

from typing import Any

from orrery.app.http import create_app
from orrery.config import Settings


def _document() -> dict[str, Any]:
    return create_app(Settings(_env_file=None)).openapi()  # type: ignore[call-arg]


def _typed(schema: dict[str, Any] | None) -> bool:
    if not schema:
        return False
    if "anyOf" in schema:  # one of several typed bodies (e.g. a context, or a comparison)
        return all(_typed(option) for option in schema["anyOf"])
    return "$ref" in schema or (schema.get("type") == "array" and "$ref" in schema.get("items", {}))


def test_every_success_response_is_typed_and_errors_are_declared() -> None:
    document = _document()
    operations = [(p, m, op) for p, ops in document["paths"].items() for m, op in ops.items()]
    assert len(operations) >= 35
    for path, method, op in operations:
        for status, response in op["responses"].items():
            if status.startswith("2") and status != "204":
                content = response.get("content", {})
                json_schema = content.get("application/json", {}).get("schema")
                other = [c for t, c in content.items() if t != "application/json" and c.get("schema")]
                assert _typed(json_schema) or other, f"{method} {path} {status}"
        if path not in ("/health", "/metrics"):
            assert {"401", "404", "409", "422"} <= set(op["responses"]), f"{method} {path}"
        if "requestBody" in op:
            assert {"400", "413"} <= set(op["responses"]), f"{method} {path}"
    vercel = document["paths"]["/v1/sessions/{session_id}/chat"]["post"]
    assert vercel["requestBody"]["required"] is True
    schemes = document["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}
