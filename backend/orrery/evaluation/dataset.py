"""The evaluation dataset format (close to the public long-conversation memory benchmarks).

```json
{"name": "...", "conversations": [{
   "id": "c1", "speakers": {"user": "Maya", "assistant": "Coach"},
   "sessions": [{"id": 1, "date": "2025-01-06", "turns": [
       {"id": "D1:1", "role": "user", "text": "...", "facts": ["Pepper"]}]}],
   "qa": [{"id": "c1-q1", "question": "...", "category": "multi_hop",
           "evidence": ["D2:5", "D9:3"], "answer": "Lyon"}]}]}
```

Turn ids are `D<session>:<n>` like the public benchmarks' `dia_id`; `role` is `user` or `assistant`;
`facts` (optional) are the strings a summary must keep for the turn to count as surviving. The
`answer` is for people reading results: strategies never see it, nor the evidence.
"""

from __future__ import annotations

import datetime as dt
from datetime import date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, Field, model_validator

CATEGORIES = (
    "single_hop",
    "multi_hop",
    "temporal",
    "open_domain",
    "knowledge_update",
    "instruction",
    "preference",
    "contradiction",
    "event_order",
    "summary",
    "multi_session",
    "adversarial",
)
"""Known categories in report order; `adversarial` questions have no answer in the conversation and
are reported apart from the headline recall."""
UNANSWERABLE = frozenset({"adversarial"})
DEFAULT_TIME = time(18)
"""When a session gives only its date, its turns are timed from 18:00 UTC."""


class Turn(BaseModel):
    """One message of a session."""

    id: str
    role: Literal["user", "assistant"]
    text: str = Field(min_length=1)
    facts: list[str] = Field(default_factory=list)


class Session(BaseModel):
    """A dated sitting of the conversation."""

    id: int
    date: date
    time: dt.time | None = None
    turns: list[Turn]

    def started(self) -> datetime:
        """When the session began (UTC): its date and time, or its date at 18:00."""
        from datetime import UTC

        return datetime.combine(self.date, self.time or DEFAULT_TIME, tzinfo=UTC)

    def turn_time(self, index: int) -> datetime:
        """The stored time of the session's `index`-th turn: one second apart."""
        return self.started() + timedelta(seconds=index + 1)


class Question(BaseModel):
    """A question asked after the whole conversation, with the turns that hold its answer."""

    id: str
    question: str = Field(min_length=1)
    category: str
    evidence: list[str] = Field(min_length=1)
    answer: str = ""
    superseded: list[str] = Field(default_factory=list)
    """For a value that changed: the older statements the evidence replaced (a context holding one of
    them without the evidence is counted as "older alone")."""


class Conversation(BaseModel):
    """Sessions in date order plus the questions about them."""

    id: str
    speakers: dict[str, str] = Field(default_factory=dict)
    sessions: list[Session]
    qa: list[Question]

    @model_validator(mode="after")
    def _evidence_exists(self) -> Conversation:
        ids = {t.id for s in self.sessions for t in s.turns}
        if len(ids) != sum(len(s.turns) for s in self.sessions):
            raise ValueError(f"conversation {self.id}: turn ids are not unique")
        for q in self.qa:
            missing = [e for e in [*q.evidence, *q.superseded] if e not in ids]
            if missing:
                raise ValueError(f"question {q.id}: evidence {missing} is not a turn of {self.id}")
        return self

    def turns(self) -> list[tuple[Session, Turn]]:
        """Every turn with its session, in order."""
        return [(s, t) for s in self.sessions for t in s.turns]


class Dataset(BaseModel):
    """A named set of conversations."""

    name: str = "dataset"
    seed: int | None = None
    conversations: list[Conversation] = Field(min_length=1)
    skipped: dict[str, int] = Field(default_factory=dict)
    """What reading a foreign format had to leave out (evidence ids naming no turn, questions left
    without evidence)."""
