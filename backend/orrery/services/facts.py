"""A remembered fact as JSON, the shape the API, the web page and `orrery facts list --json` share."""

from __future__ import annotations

from typing import Any

from orrery.db.models import Fact


def fact_out(fact: Fact) -> dict[str, Any]:
    """id, text, kind, project (null: every project), subject, source `{session_id, seq}` (null
    when added by hand), dates and lineage."""
    source = (
        {"session_id": str(fact.source_session_id), "seq": fact.source_seq}
        if fact.source_session_id
        else None
    )
    return {
        "id": str(fact.id),
        "text": fact.text,
        "kind": fact.kind,
        "project_id": str(fact.project_id) if fact.project_id else None,
        "subject": fact.subject,
        "source": source,
        "created_at": fact.created_at,
        "valid_from": fact.valid_from,
        "superseded_by": str(fact.superseded_by) if fact.superseded_by else None,
        "superseded_at": fact.superseded_at,
    }
