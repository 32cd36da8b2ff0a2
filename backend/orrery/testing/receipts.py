"""Assertions over a context receipt: what went in, what stayed out and why, and the budgets.

They accept a `ContextReceipt`, its `as_dict()`, or the `receipt` of `GET /v1/sessions/{id}/context`.
Failures say what the receipt held instead.
"""

from __future__ import annotations

import re
from typing import Any

from orrery.context.working_context import ContextReceipt

Receipt = ContextReceipt | dict[str, Any]
_SEQS = re.compile(r"^seq (\d+)(?:-(\d+))?$")


def _as_dict(receipt: Receipt) -> dict[str, Any]:
    return receipt.as_dict() if isinstance(receipt, ContextReceipt) else receipt


def section(receipt: Receipt, name: str) -> dict[str, Any]:
    """One section of the receipt by name (`system`, `profile`, `expertise`, `focus`, `related`,
    `conversation`, ...)."""
    sections = _as_dict(receipt)["sections"]
    for found in sections:
        if found["name"] == name:
            return dict(found)
    raise AssertionError(f"no section {name!r} in the receipt; it has {[s['name'] for s in sections]}")


def _lines(items: list[dict[str, Any]]) -> str:
    return "; ".join(f"{i['key']} ({i['reason']})" for i in items) or "nothing"


def assert_included(receipt: Receipt, section_name: str, key: str) -> dict[str, Any]:
    """The section included an item whose key contains `key` (an entity name, `seq 3`, a module)."""
    found = section(receipt, section_name)
    for item in found["included"]:
        if key in item["key"]:
            return dict(item)
    raise AssertionError(f"{section_name!r} did not include {key!r}; it included {_lines(found['included'])}")


def assert_excluded(
    receipt: Receipt, section_name: str, key: str, reason: str | None = None
) -> dict[str, Any]:
    """The section left out an item whose key contains `key`, for a reason containing `reason`."""
    found = section(receipt, section_name)
    for item in found["excluded"]:
        if key in item["key"] and (reason is None or reason in item["reason"]):
            return dict(item)
    raise AssertionError(
        f"{section_name!r} did not exclude {key!r}"
        + (f" for {reason!r}" if reason else "")
        + f"; it excluded {_lines(found['excluded'])}"
    )


def _covers(key: str, seq: int) -> bool:
    match = _SEQS.match(key)
    if not match:
        return False
    first = int(match.group(1))
    last = int(match.group(2) or first)
    return first <= seq <= last


def assert_message_dropped(receipt: Receipt, seq: int, reason: str | None = "budget") -> dict[str, Any]:
    """Message `seq` stayed out of the conversation (by default: for the budget)."""
    found = section(receipt, "conversation")
    for item in found["excluded"]:
        if _covers(item["key"], seq) and (reason is None or reason in item["reason"]):
            return dict(item)
    raise AssertionError(
        f"message seq {seq} was not dropped; conversation excluded {_lines(found['excluded'])}"
    )


def assert_message_kept(receipt: Receipt, seq: int) -> dict[str, Any]:
    """Message `seq` went into the conversation."""
    found = section(receipt, "conversation")
    for item in found["included"]:
        if _covers(item["key"], seq):
            return dict(item)
    raise AssertionError(f"message seq {seq} was not kept; conversation included {_lines(found['included'])}")


def assert_within_budget(receipt: Receipt) -> None:
    """Every section used at most its budget, and the whole context at most the sum of the budgets."""
    data = _as_dict(receipt)
    over = [f"{s['name']} {s['tokens']}/{s['budget']}" for s in data["sections"] if s["tokens"] > s["budget"]]
    assert not over, f"sections over budget: {', '.join(over)}"
    budget = sum(s["budget"] for s in data["sections"])
    assert data["total_tokens"] <= budget, f"{data['total_tokens']} tokens over the total budget {budget}"
