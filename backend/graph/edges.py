"""The one shape every graph read shares: edges touching some entities, in both directions,
joined to the entity on the far end.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, String, literal, select
from sqlalchemy.orm import aliased

from backend.db.models import Edge, Entity


def far_entity() -> Any:
    """An alias for the entity on the far end of an edge (typed `Any`: it stands in for `Entity`)."""
    return aliased(Entity)


def both_directions(
    ids: Sequence[uuid.UUID], other: Any, columns: Sequence[Any], where: Sequence[Any] = ()
) -> tuple[Select[Any], Select[Any]]:
    """Outgoing and incoming edges of `ids`, each row with `edge_id`, `from_id`, `relation`,
    `direction` and the far entity's `columns`; union them (plus anything else) as needed.
    """

    def side(near: Any, far: Any, direction: str) -> Select[Any]:
        return (
            select(
                Edge.id.label("edge_id"),
                near.label("from_id"),
                Edge.rel.label("relation"),
                literal(direction, String).label("direction"),
                *columns,
            )
            .join(other, other.id == far)
            .where(near.in_(ids), *where)
        )

    return side(Edge.src_id, Edge.dst_id, "outgoing"), side(Edge.dst_id, Edge.src_id, "incoming")
