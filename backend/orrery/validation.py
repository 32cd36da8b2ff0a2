"""The one set of input rules every door applies before anything is stored, and the one way their
refusals are worded.

Text must be storable on both databases: PostgreSQL refuses a NUL character (U+0000) in text and
JSON, and no database can encode a lone surrogate (U+D800-U+DFFF), which Python's `json` happily
decodes from `"\\ud800"`. `Text` is the field type for one string; `StorableBody` (refuses unknown
fields) and `ClientBody` (keeps a client's extra fields) are the base models of request bodies, and
scan every string they hold, keys included, whatever a field is typed. Refusals are worded by
`readable()` / `error_details()`: a field path and a message, never more than a short excerpt of
the input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""Code points neither database stores: NUL, and the surrogates that pair only inside UTF-16."""
MAX_JSON_FIELD_BYTES = 64 * 1024
"""Most bytes one free-form JSON field (`props`, KB `data`, ...) may take, serialized."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of a free-form JSON field."""
MAX_BODY_DEPTH = 64
"""Deepest nesting of a whole request body (or a tool's arguments)."""
EXCERPT = 60
"""Most characters of an input that a refusal quotes back."""


def unstorable(value: str) -> str | None:
    """What in `value` cannot be stored (None: nothing)."""
    found = UNSTORABLE.search(value)
    if found is None:
        return None
    char = found.group()
    if char == "\x00":
        return "a NUL character (U+0000)"
    return f"a lone surrogate (U+{ord(char):04X}, invalid Unicode)"


def check_text(value: str, what: str = "text") -> str:
    """`value`, or a ValueError naming what cannot be stored."""
    problem = unstorable(value)
    if problem is not None:
        raise ValueError(f"{what} contains {problem}, which cannot be stored")
    return value


Text = Annotated[str, AfterValidator(check_text)]
"""A string that can be stored on SQLite and PostgreSQL alike: no NUL, no lone surrogate."""


def _children(item: Any, path: str) -> Iterable[tuple[Any, str]]:
    if isinstance(item, Mapping):
        for key, child in item.items():
            yield key, path  # a key is text too
            yield child, f"{path}.{key}" if path else str(key)
    elif isinstance(item, list | tuple):
        yield from ((child, f"{path}[{i}]") for i, child in enumerate(item))


class UnstorableValue(ValueError):
    """A refusal of `scan`, with the path of the offending value (`messages[0].content`), so a door
    can name the parameter even though the whole body was checked at once."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def scan(value: Any, max_depth: int = MAX_BODY_DEPTH, what: str = "") -> None:
    """Refuse (ValueError) JSON-like data nested deeper than `max_depth` or holding unstorable text
    anywhere; walked without recursion, so a 5,000-deep value is refused rather than crashing."""
    stack = [(value, what, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            problem = unstorable(item)
            if problem is not None:
                raise UnstorableValue(
                    f"{path or 'the value'} contains {problem}, which cannot be stored", path
                )
            continue
        if isinstance(item, Mapping | list | tuple):
            if depth >= max_depth:
                raise UnstorableValue(f"{path or 'the value'} is nested deeper than {max_depth} levels", path)
            stack.extend((child, where, depth + 1) for child, where in _children(item, path))


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value, computed without recursion (scalars are 0)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_json(value: Any, what: str = "value") -> Any:
    """Refuse JSON deeper than MAX_JSON_DEPTH, bigger than MAX_JSON_FIELD_BYTES or with unstorable text."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    scan(value, MAX_JSON_DEPTH + 1, what)
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > MAX_JSON_FIELD_BYTES:
        raise ValueError(f"{what} is {size} bytes as JSON; the limit is {MAX_JSON_FIELD_BYTES}")
    return value


class ClientBody(BaseModel):
    """Base of a request body from a client we do not control (OpenAI, Vercel): extra fields are
    accepted as those clients expect, but no string anywhere may be unstorable."""

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        scan(data)
        return data


class StorableBody(ClientBody):
    """Base of a request body of Orrery's own routes: unknown fields are refused by name as well."""

    model_config = ConfigDict(extra="forbid")


def excerpt(value: Any) -> str:
    """At most EXCERPT characters of `value`, as a refusal may quote it."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= EXCERPT else f"{text[:EXCERPT]}… ({len(text)} characters)"


def _message(error: Mapping[str, Any]) -> str:
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if error.get("type") == "extra_forbidden":
        return "unknown field; it is not part of this request"
    return message


def error_details(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """pydantic's errors as `[{"loc": [...], "msg": ...}]`: no input, no URL, no class name."""
    return [{"loc": [str(p) for p in e.get("loc", ())], "msg": excerpt_message(_message(e))} for e in errors]


def excerpt_message(message: str) -> str:
    """A message cut to a readable length (a validator's message may quote what it refused)."""
    return message if len(message) <= 300 else message[:300] + "…"


def readable(errors: Iterable[Mapping[str, Any]], skip: int = 0) -> str:
    """One line for every refused field: `field: message; other: message` (the first `skip` parts
    of each location, such as `body`, left out)."""
    parts = []
    for detail in error_details(errors):
        where = ".".join(detail["loc"][skip:])
        parts.append(f"{where}: {detail['msg']}" if where else detail["msg"])
    return "; ".join(parts) or "the input is not valid"
