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

import json
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from backend.errors import ValidationError as OrreryValidationError

CATEGORIES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "adversarial")


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
    turns: list[Turn]


class Question(BaseModel):
    """A question asked after the whole conversation, with the turns that hold its answer."""

    id: str
    question: str = Field(min_length=1)
    category: str
    evidence: list[str] = Field(min_length=1)
    answer: str = ""


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
            missing = [e for e in q.evidence if e not in ids]
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


def load_dataset(path: Path) -> Dataset:
    """Read and validate a dataset file; a bad file is a clear `ValidationError`."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OrreryValidationError(f"dataset file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OrreryValidationError(f"dataset file {str(path)!r} is not readable JSON: {exc}") from None
    try:
        return Dataset.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise OrreryValidationError(
            f"dataset file {str(path)!r} is invalid at {where}: {first['msg']}"
        ) from None


def save_dataset(dataset: Dataset, path: Path) -> None:
    """Write a dataset as indented JSON (stable, diff-friendly)."""
    path.write_text(dataset.model_dump_json(indent=1, exclude_defaults=False) + "\n", encoding="utf-8")
