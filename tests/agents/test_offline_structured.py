"""The offline model's structured answers are valid for the schemas callers send (pydantic models,
`$defs` and `$ref`, enums, unions, bounds, boolean and recursive schemas) and never grow without
bound (issue 50 §2)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import BaseModel, Field

from orrery.agents.offline_structured import structured


class Step(BaseModel):
    what: str = Field(max_length=5)
    minutes: int = Field(ge=3)


class Plan(BaseModel):
    title: str
    kind: Literal["week", "day"]
    steps: list[Step] = Field(min_length=2)
    note: str | None
    score: float
    done: bool


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


SCHEMAS: list[Any] = [
    Plan.model_json_schema(),
    Tree.model_json_schema(),
    {"type": "object", "properties": {"anything": True, "count": {"type": "integer", "exclusiveMinimum": 0}}},
    {"type": "array", "items": {"type": "string"}, "minItems": 3},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_answer_is_valid_for_the_schema(schema: dict[str, Any]) -> None:
    value = structured({"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}, "the answer")
    assert not list(Draft202012Validator(schema).iter_errors(value)), value


def test_a_self_referencing_schema_stops_and_json_object_wraps_the_text() -> None:
    endless = {
        "$defs": {
            "n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#/$defs/n"}}}
        },
        "$ref": "#/$defs/n",
    }
    structured({"type": "json_schema", "json_schema": {"schema": endless}}, "x")  # returns, bounded
    assert structured({"type": "json_object"}, "hello") == {"answer": "hello"}
