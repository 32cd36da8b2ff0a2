"""Reading a LoCoMo file (the public long-term conversational memory benchmark) as a `Dataset`.

Mapped the way the benchmark is judged: both speakers are people, so every turn becomes a `user`
message `"<Speaker>: <text>"` (plus `" [shares a photo: <caption>]"` when the turn shares one),
timed at its session's date-time plus one second per turn. Categories 1-5 become multi-hop,
temporal, open-domain, single-hop and adversarial. Evidence ids are normalised where the file
spells them oddly (`"D8:6; D9:17"`, `"D:11:26"`); ids that still name no turn are skipped and
counted, and a question left with no evidence is skipped and counted. The data is read from where
it lies and never copied.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from orrery.evaluation.dataset import Conversation, Dataset, Question, Session, Turn

CATEGORY_NAMES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
"""A session's date-time as the file writes it: "1:56 pm on 8 May, 2023"."""


def is_locomo(raw: Any) -> bool:
    """Whether parsed JSON looks like LoCoMo: a list of objects with `conversation` and `qa`."""
    return (
        isinstance(raw, list)
        and bool(raw)
        and all(isinstance(c, dict) and "conversation" in c and "qa" in c for c in raw)
    )


def parse_locomo(raw: Any, name: str = "locomo") -> Dataset:
    """A `Dataset` from parsed LoCoMo JSON; `Dataset.skipped` counts what could not be used."""
    if not is_locomo(raw):
        raise ValueError("not a LoCoMo file: expected a list of objects with 'conversation' and 'qa'")
    skipped = {"evidence_ids": 0, "questions": 0}
    conversations = [_conversation(sample, i, skipped) for i, sample in enumerate(raw)]
    return Dataset(name=name, conversations=conversations, skipped=skipped)


def _conversation(sample: dict[str, Any], index: int, skipped: dict[str, int]) -> Conversation:
    conv = sample["conversation"]
    cid = str(sample.get("sample_id") or f"conv-{index + 1}")
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    sessions = [_session(conv, k) for k in numbers if conv.get(f"session_{k}")]
    ids = {t.id for s in sessions for t in s.turns}
    qa: list[Question] = []
    for n, item in enumerate(sample["qa"]):
        evidence = _evidence(item.get("evidence") or [])
        known = [e for e in evidence if e in ids]
        skipped["evidence_ids"] += len(evidence) - len(known)
        if not known or not str(item.get("question", "")).strip():
            skipped["questions"] += 1
            continue
        answer = item.get("answer", item.get("adversarial_answer", ""))
        qa.append(
            Question(
                id=f"{cid}-q{n + 1}",
                question=str(item["question"]),
                category=CATEGORY_NAMES.get(int(item.get("category", 0)), f"category_{item.get('category')}"),
                evidence=known,
                answer=str(answer),
            )
        )
    speakers = {"a": str(conv.get("speaker_a", "")), "b": str(conv.get("speaker_b", ""))}
    return Conversation(id=cid, speakers=speakers, sessions=sessions, qa=qa)


def _session(conv: dict[str, Any], k: int) -> Session:
    raw_start = str(conv[f"session_{k}_date_time"]).strip()
    started = datetime.strptime(raw_start, DATE_FORMAT).replace(tzinfo=UTC)
    turns = []
    for raw in conv[f"session_{k}"]:
        text = f"{raw['speaker']}: {raw.get('text', '')}".rstrip()
        if raw.get("blip_caption"):
            text += f" [shares a photo: {raw['blip_caption']}]"
        turns.append(Turn(id=str(raw["dia_id"]), role="user", text=text))
    return Session(id=k, date=started.date(), time=started.time(), turns=turns)


def _evidence(items: list[Any]) -> list[str]:
    """Evidence ids as `D<session>:<turn>`, however the file wrote them; order kept, duplicates not."""
    out: list[str] = []
    for item in items:
        found = _EVIDENCE.findall(str(item))
        out.extend(f"D{s}:{t}" for s, t in found) if found else out.append(str(item))
    return list(dict.fromkeys(out))
