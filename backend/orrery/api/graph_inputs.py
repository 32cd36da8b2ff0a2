"""Request bodies of the entity and edge routes, with the limits every free-form field carries."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import ConfigDict, Field, StrictBool, model_validator
from pydantic.json_schema import SkipJsonSchema

from orrery.services.limits import BoundedDatetime, JsonObject, Text
from orrery.validation import StorableBody
from orrery.vocabulary import EntityKind, GoalType, Relation


class EntityIn(StorableBody):
    """A new entity; `goal_type` only for goals."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"required": ["goal_type"], "properties": {"goal_type": {"type": "string"}}},
            "then": {"properties": {"kind": {"const": "goal"}}},
            "dependentSchemas": {
                "is_scratch": {
                    "if": {"properties": {"is_scratch": {"const": True}}},
                    "then": {"properties": {"kind": {"const": "document"}}},
                }
            },
        }
    )

    kind: EntityKind
    name: Text = Field(min_length=1, max_length=300)
    state: Text = Field(default="active", min_length=1, max_length=32, pattern=r"\S")
    type_key: Text | None = Field(default=None, max_length=100)
    description: Text | None = Field(default=None, max_length=20_000)
    props: JsonObject = Field(default_factory=dict)
    due_at: BoundedDatetime | None = None
    goal_type: GoalType | None = None
    is_scratch: StrictBool = Field(
        default=False,
        description="A scratch document: kept out of linked context and search (documents only; "
        "true on another kind is refused).",
    )
    is_context_document: StrictBool = Field(
        default=False,
        description="The project context document, shown in every entity's linked context (documents "
        "only; one per project: a second answers 409).",
    )


class EntityPatch(StorableBody):
    """Fields to change; `name`, `state` and `props` cannot be null (omit them to keep them)."""

    name: Annotated[Text, Field(min_length=1, max_length=300)] | SkipJsonSchema[None] = None
    state: Annotated[Text, Field(min_length=1, max_length=32, pattern=r"\S")] | SkipJsonSchema[None] = None
    type_key: Text | None = Field(default=None, max_length=100)
    description: Text | None = Field(default=None, max_length=20_000)
    props: JsonObject | SkipJsonSchema[None] = None
    due_at: BoundedDatetime | None = None
    is_context_document: StrictBool | SkipJsonSchema[None] = Field(
        default=None,
        description="Designate (true) or release (false) the project context document (documents only).",
    )

    @model_validator(mode="after")
    def _required_fields_not_null(self) -> EntityPatch:
        keep = ("name", "state", "props", "is_context_document")
        nulls = [f for f in keep if f in self.model_fields_set and getattr(self, f) is None]
        if nulls:
            raise ValueError(f"{', '.join(nulls)} cannot be null; omit a field to keep its value")
        return self


class EdgeIn(StorableBody):
    """A new edge `src --rel--> dst`."""

    src_id: uuid.UUID
    rel: Relation
    dst_id: uuid.UUID
    props: JsonObject = Field(default_factory=dict)
