"""Recall's units over several parts at once (`units_of`): a unit is a message and the tool results
after it, never across a gap in seqs or a part's end, and a tool result whose call was not read
belongs to no unit; runs (parts, or gaps in one) are where neighbours stop."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from orrery.memory.recall.queries import ChatInfo
from orrery.memory.recall.ranked import Part, units_of
from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.window import HistoryWindow

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
CHAT = ChatInfo(uuid.uuid4(), "a chat", WHEN, 20, None, None)


def _part(*messages: tuple[int, str]) -> Part:
    """A part holding messages `(seq, role)`."""
    window = HistoryWindow(4)
    rows = [
        HistoryMessage(seq, role, f"message {seq}", None, WHEN, role == "assistant", None)
        for seq, role in messages
    ]
    window.extend(rows, [""] * len(rows), None, [False] * len(rows))
    return Part(CHAT, window)


def test_units_runs_and_parts_over_all_parts_at_once() -> None:
    parts = [
        _part((4, "tool"), (5, "user"), (6, "assistant"), (7, "tool"), (9, "user")),  # 4: its call unread
        _part(),
        _part((1, "assistant"), (2, "tool"), (3, "tool")),
        _part((8, "user"), (9, "user")),
    ]
    units = units_of(parts)
    assert units.starts.tolist() == [1, 2, 4, 5, 8, 9]  # rows over all parts
    assert units.part.tolist() == [0, 0, 0, 2, 3, 3]
    assert units.first.tolist() == [1, 2, 4, 0, 0, 1]
    assert units.end.tolist() == [2, 4, 5, 3, 1, 2]  # the call takes its two results; a gap ends a unit
    assert units.breaks == [0, 2, 3, 4]  # a part, the gap before seq 9, the next parts


def test_no_units_without_messages_or_with_tool_results_only() -> None:
    assert len(units_of([]).starts) == 0
    assert len(units_of([_part(), _part((3, "tool"))]).starts) == 0
