"""Request bodies of the entity and edge routes, with the limits every free-form field carries."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, Field, StrictBool, model_validator

from backend.api.limits import BoundedDatetime, JsonObject, Text


class EntityIn(BaseModel):
    """A new entity."""

    kind: Text = Field(max_length=16)
    name: Text = Field(min_length=1, max_length=300)
    state: Text = Field(default="active", min_length=1, max_length=32)
    type_key: Text | None = Field(default=None, max_length=100)
    description: Text | None = Field(default=None, max_length=20_000)
    props: JsonObject = Field(default_factory=dict)
    due_at: BoundedDatetime | None = None
    goal_type: Text | None = Field(default=None, max_length=16)
    is_scratch: StrictBool = False


class EntityPatch(BaseModel):
    """Fields to change; `name`, `state` and `props` cannot be null (omit them to keep them)."""

    name: Text | None = Field(default=None, min_length=1, max_length=300)
    state: Text | None = Field(default=None, min_length=1, max_length=32)
    type_key: Text | None = Field(default=None, max_length=100)
    description: Text | None = Field(default=None, max_length=20_000)
    props: JsonObject | None = None
    due_at: BoundedDatetime | None = None

    @model_validator(mode="after")
    def _required_fields_not_null(self) -> EntityPatch:
        nulls = [
            f for f in ("name", "state", "props") if f in self.model_fields_set and getattr(self, f) is None
        ]
        if nulls:
            raise ValueError(f"{', '.join(nulls)} cannot be null; omit a field to keep its value")
        return self


class EdgeIn(BaseModel):
    """A new edge `src --rel--> dst`."""

    src_id: uuid.UUID
    rel: Text = Field(max_length=64)
    dst_id: uuid.UUID
    props: JsonObject = Field(default_factory=dict)
