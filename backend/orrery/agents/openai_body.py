"""A chat request's body as the OpenAI SDK would send it, without re-deriving it from type hints.

litellm sends OpenAI-compatible requests through the `openai` SDK (`agents.litellm_model`; Orrery's
direct client posts its body itself, `agents.openai_http`), whose `create` walks the whole body
(every message against the six message types, every tool's schema) through its type hints to rename
aliased keys and format dates (`async_maybe_transform`): a third of the request's CPU, ~5 ms a turn
at the door benchmark (`bench.door --provider`). For chat completions no key has an alias or a format,
so on a body of plain JSON (what litellm builds) the walk only drops omitted parameters. `install`
checks that once against the installed SDK's types, then replaces the walk for the chat-completion
parameters by that drop; any other body or type (a pydantic model, a date, a sentinel inside)
takes the SDK's own path. The same body goes out either way (tests/agents/test_openai_body.py).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import typing_extensions

_LEAN = "__orrery_lean__"
Transform = Callable[[object, object], Awaitable[Any]]


def install() -> bool:
    """Use the lean body for chat completions if the SDK's types allow it; whether it is in use."""
    from openai.resources.chat.completions import completions as module
    from openai.types.chat import completion_create_params as params

    original: Transform = module.async_maybe_transform
    if getattr(original, _LEAN, False):
        return True
    lean_types = {params.CompletionCreateParamsStreaming, params.CompletionCreateParamsNonStreaming}
    if not all(renames_nothing(t) for t in lean_types):
        return False
    module.async_maybe_transform = lean_transform(original, lean_types)
    return True


def lean_transform(original: Transform, lean_types: set[Any]) -> Transform:
    """`original`, except for a plain-JSON body of one of `lean_types`: that body without its omitted
    parameters (what `original` would return for it)."""
    from openai._utils import is_given

    async def transform(data: object, expected_type: object) -> Any:
        if expected_type in lean_types and isinstance(data, dict):
            given = {k: v for k, v in data.items() if is_given(v)}
            if _plain(given):
                return given
        return await original(data, expected_type)

    setattr(transform, _LEAN, True)
    return transform


def _plain(body: dict[str, Any]) -> bool:
    """Plain JSON, which the transform leaves as it is: what the C encoder takes unaided (an omitted
    parameter, a model, a date or a file inside is refused and goes the SDK's way)."""
    try:
        json.dumps(body, check_circular=False)
    except (TypeError, ValueError):
        return False
    return True


def renames_nothing(annotation: Any, seen: set[int] | None = None) -> bool:
    """No key under this type has an alias or a format (`PropertyInfo`), however deep."""
    from openai._utils import PropertyInfo

    seen = set() if seen is None else seen
    if id(annotation) in seen:
        return True
    seen.add(id(annotation))
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, PropertyInfo) and (meta.alias or meta.format):
            return False
    if typing_extensions.is_typeddict(annotation):  # the SDK's are typing_extensions'
        hints = typing_extensions.get_type_hints(annotation, include_extras=True)
        return all(renames_nothing(h, seen) for h in hints.values())
    return all(
        renames_nothing(a, seen) for a in typing_extensions.get_args(annotation) if not isinstance(a, str)
    )
