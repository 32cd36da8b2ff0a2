"""The caller's tools on the Responses API (issue 50): the `function_call` / `function_call_output`
input items a caller sends back, and the `function_call` output items (and their stream events) of
a turn that waits for the caller's tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel

from orrery.api.openai_tools import output_text
from orrery.services.limits import Text


class FunctionCallItem(BaseModel):
    """A `function_call` the model made earlier (the caller resends it; Orrery has it stored)."""

    type: Literal["function_call"]
    call_id: Text
    name: Text
    arguments: Text = ""


class FunctionCallOutputItem(BaseModel):
    """The caller's result of a `function_call`."""

    type: Literal["function_call_output"]
    call_id: Text
    output: Any = ""


def results_of(items: list[Any]) -> dict[str, str]:
    """The `function_call_output` items after the input's last message, by call id."""
    results: dict[str, str] = {}
    for item in reversed(items):
        if getattr(item, "type", "message") == "message":
            break
        if isinstance(item, FunctionCallOutputItem):
            results[item.call_id] = output_text(item.output)
    return dict(reversed(list(results.items())))


def call_item(call: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    """A pending call as a `function_call` output item."""
    arguments = call["arguments"] if status == "completed" else ""
    return {
        "type": "function_call",
        "id": f"fc_{call['id']}",
        "call_id": call["id"],
        "name": call["name"],
        "arguments": arguments,
        "status": status,
    }


def with_calls(body: dict[str, Any], done: dict[str, Any]) -> dict[str, Any]:
    """The response with the caller's pending calls as output items (an empty text message left out)."""
    calls = done.get("client_tool_calls") or []
    if calls:
        texts = [
            o
            for o in body["output"]
            if o.get("type") != "message" or any(p.get("text") for p in o.get("content", []))
        ]
        body["output"] = [*texts, *(call_item(c) for c in calls)]
    return body


def call_events(draft: Any, calls: list[dict[str, Any]], start: int = 1) -> Iterator[str]:
    """The stream events of the pending calls, each its own output item from `start` (after the
    server's tool items and the message, when there is one)."""
    for index, call in enumerate(calls, start=start):
        item_id = f"fc_{call['id']}"
        yield draft.event(
            "response.output_item.added", output_index=index, item=call_item(call, "in_progress")
        )
        arguments = {"item_id": item_id, "output_index": index}
        yield draft.event("response.function_call_arguments.delta", **arguments, delta=call["arguments"])
        yield draft.event("response.function_call_arguments.done", **arguments, arguments=call["arguments"])
        yield draft.event("response.output_item.done", output_index=index, item=call_item(call))
