"""The one shape every graph read shares: edges touching some entities, in both directions,
joined to the entity on the far end.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Select, String, literal, select
from sqlalchemy.orm import aliased

from orrery.db.models import Edge, Entity


def far_entity() -> Any:
    """An alias for the entity on the far end of an edge (typed `Any`: it stands in for `Entity`)."""
    return aliased(Entity)


def both_directions(
    ids: Sequence[uuid.UUID],
    other: Any,
    columns: Sequence[Any],
    where: Sequence[Any] = (),
    *,
    near_text: Callable[[Any], Any] | None = None,
) -> tuple[Select[Any], Select[Any]]:
    """Outgoing and incoming edges of `ids`, each row with `edge_id`, `from_id`, `relation`,
    `direction` and the far entity's `columns`; union them (plus anything else) as needed.

    With `near_text` (a column -> text expression), `from_id` comes back as text and `edge_id` is
    left out: plain values for callers that read many rows.
    """

    def side(near: Any, far: Any, direction: str) -> Select[Any]:
        ids_part = (
            [near_text(near).label("from_id")]
            if near_text
            else [Edge.id.label("edge_id"), near.label("from_id")]
        )
        return (
            select(
                *ids_part,
                Edge.rel.label("relation"),
                literal(direction, String).label("direction"),
                *columns,
            )
            .join(other, other.id == far)
            .where(near.in_(ids), *where)
        )

    return side(Edge.src_id, Edge.dst_id, "outgoing"), side(Edge.dst_id, Edge.src_id, "incoming")
