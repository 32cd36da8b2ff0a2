"""build_context through every door stays within its budget, footer included (issue 21: 32 of 60
small-budget builds through the tool and MCP were over), and speaks seed 003's shape and names."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from pydantic_ai import ModelRetry
from sqlalchemy import select
from typer.testing import CliRunner

from orrery.cli import app
from orrery.config import Settings, get_settings
from orrery.context.builder import build_context, resolve_request
from orrery.context.working_context import assemble_working_context
from orrery.db.engine import Database
from orrery.db.models import Entity
from orrery.deps import TurnDeps
from orrery.errors import NotFoundError, ValidationError
from orrery.tokens import counter_for
from orrery.tools import graph as graph_tools

MAX_BUDGET = 160


async def _ids(db: Database) -> list[str]:
    async with db.sessions() as s:
        return [str(i) for i in (await s.execute(select(Entity.id).order_by(Entity.name))).scalars()]


async def test_every_budget_from_1_holds_in_the_core(db: Database, settings: Settings, demo: Any) -> None:
    ids, counter, rng = await _ids(db), counter_for(settings.model), random.Random(21)
    over = []
    async with db.sessions() as s:
        for budget in range(1, MAX_BUDGET + 1):
            request = resolve_request(
                rng.sample(ids, rng.choice((1, 2, 3))),
                budget=budget,
                strategy=rng.choice(("relevance", "breadth", "depth", "semantic")),
                format=rng.choice(("structured", "narrative", "outline")),
            )
            result = await build_context(s, demo.user_id, request, counter)
            used = counter.count(result["text"])
            assert result["metadata"]["tokens_used"] == used
            if used > budget:
                over.append((budget, used))
    assert not over, f"over budget (budget, used): {over}"


async def test_the_tool_and_mcp_text_keeps_its_footer_inside_the_budget(
    db: Database, settings: Settings, demo: Any
) -> None:
    """The tool's text is what MCP returns (the same function); its footer is counted."""
    deps = TurnDeps(db=db, user_id=demo.user_id, settings=settings)
    ids, counter, rng = await _ids(db), counter_for(settings.model), random.Random(3)
    over = []
    for budget in [*range(1, 30, 7), *range(50, 111)]:
        seeds = rng.sample(ids, rng.choice((1, 2)))
        text = await graph_tools.build_context(SimpleNamespace(deps=deps), seeds, budget=budget)  # type: ignore[arg-type]
        if counter.count(text) > budget:
            over.append((budget, counter.count(text)))
        if budget >= 60:
            assert "tokens; left out:" in text, "the footer is there when it fits"
    assert not over, f"over budget (budget, used): {over}"


async def test_mcp_door_stays_within_budget(db: Database, settings: Settings, demo: Any) -> None:
    from orrery.mcp_server import build_server

    deps = TurnDeps(db=db, user_id=demo.user_id, settings=settings)

    async def resolve() -> TurnDeps:
        return deps

    server = build_server(resolve, settings)
    counter = counter_for(settings.model)
    for budget in (55, 60, 70, 83, 100):
        result: Any = await server.call_tool(
            "build_context", {"seeds": [str(demo.focus["task"])], "budget": budget}
        )
        text = "".join(getattr(b, "text", "") for b in result.content)
        assert text and counter.count(text) <= budget, (budget, counter.count(text))


async def test_seed_003_shape_and_option_names(db: Database, settings: Settings, demo: Any) -> None:
    task = str(demo.focus["task"])
    request = resolve_request(
        [task],
        budget=1500,
        include={"children": False, "references": True, "fields": True, "related": {"depth": 1}},
        exclude={"tags": ["archived", "document"], "olderThan": "1y"},
    )
    assert request.include.depth == 1 and "has_task" not in (request.include.relations or [])
    assert request.exclude.kinds == ["document"] and request.exclude.states == ["archived"]
    assert request.exclude.older_than == "1y"
    async with db.sessions() as s:
        result = await build_context(s, demo.user_id, request, counter_for(settings.model))
    context = result["context"]
    assert set(context) == {"primary", "related", "references", "timeline"}
    assert context["primary"][0]["node"]["id"] == task and context["related"] == result["related"]
    assert all(r["node"]["kind"] != "document" for r in context["related"])
    dated = [e["updated_at"] for e in context["timeline"]]
    assert dated == sorted(dated, reverse=True) and task in {e["id"] for e in context["timeline"]}
    assert resolve_request([task], include={"related": {"tags": ["meeting"]}}).include.kinds is None
    with pytest.raises(ValidationError, match="unknown kinds"):
        resolve_request([task], include={"kinds": ["meeting"]})  # our own name stays strict
    again = resolve_request([task], existing_context={"context": result["context"], "metadata": {}})
    assert task in again.existing_ids  # seed 003's wrapper continues a context too


async def test_bad_ids_are_clear_errors(db: Database, settings: Settings, demo: Any) -> None:
    """Issue 21: `assemble_working_context(user_id="not-a-uuid")` raised a raw database error."""
    with pytest.raises(NotFoundError, match="entity 'not-a-uuid' not found"):
        resolve_request(["not-a-uuid"])
    request = resolve_request([str(demo.focus["task"])])
    async with db.sessions() as s:
        with pytest.raises(NotFoundError, match="user 'not-a-uuid' not found"):
            await build_context(s, "not-a-uuid", request, counter_for(settings.model))  # type: ignore[arg-type]
        for user_id, session_id, what in (
            ("not-a-uuid", uuid.uuid4(), "user"),
            (demo.user_id, "not-a-uuid", "session"),
        ):
            with pytest.raises(NotFoundError, match=f"{what} 'not-a-uuid' not found"):
                await assemble_working_context(
                    s, agent="planner", session_id=session_id, user_id=user_id, settings=settings
                )
    deps = TurnDeps(db=db, user_id=demo.user_id, settings=settings)
    with pytest.raises(ModelRetry, match="not found. Seeds must be entity ids"):
        await graph_tools.build_context(SimpleNamespace(deps=deps), ["not-a-uuid"])  # type: ignore[arg-type]


async def test_http_api_door(api: httpx.AsyncClient, demo: Any, settings: Settings) -> None:
    counter, task = counter_for(settings.model), str(demo.focus["task"])
    for budget in (1, 7, 60, 83, 120):
        response = await api.post(
            "/v1/context/build",
            json={
                "seeds": [task],
                "budget": budget,
                "include": {"children": False, "related": {"depth": 1}},
                "exclude": {"tags": ["archived"], "olderThan": "1y"},
            },
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert counter.count(body["text"]) <= budget and body["metadata"]["tokens_used"] <= budget
        assert set(body["context"]) == {"primary", "related", "references", "timeline"}
    bad = await api.post("/v1/context/build", json={"seeds": ["not-a-uuid"]})
    assert bad.status_code == 404 and "not-a-uuid" in bad.text and "sqlalchemy" not in bad.text.lower()


async def test_http_seed_003_children_fields_and_template_tags(api: httpx.AsyncClient, demo: Any) -> None:
    """The audit's inputs: a plan with `children: false` returned its 10 tasks; the seed's own
    template tags (`meeting`, `person`) and `fields: false` got 422."""
    plan = str(demo.focus["plan"])

    async def build(include: dict[str, Any]) -> dict[str, Any]:
        body = {"seeds": [plan], "budget": 4000, "strategy": "breadth", "include": include}
        response = await api.post("/v1/context/build", json=body)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def links(result: dict[str, Any]) -> set[tuple[str, str]]:
        return {(r["relationship"], r["direction"]) for r in result["related"] if r["distance"] == 1}

    everything = await build({"related": {"depth": 1}})
    assert ("belongs_to_plan", "incoming") in links(everything)  # the plan's tasks
    parents_only = await build({"children": False, "related": {"depth": 1}})
    assert not {
        ("belongs_to_plan", "incoming"),
        ("supports_goal", "incoming"),
        ("has_task", "outgoing"),
    } & links(parents_only)
    assert len(parents_only["related"]) < len(everything["related"])
    tagged = await build({"related": {"depth": 1, "tags": ["task", "meeting", "person"]}})
    assert {r["node"]["kind"] for r in tagged["related"]} == {"task"}
    kinds = "task, plan, goal, milestone, document, output"
    assert tagged["metadata"]["notes"] == [
        f"related.tags meeting, person name no entity kind ({kinds}): ignored"
    ]
    bare = await build({"fields": False, "related": {"depth": 1}})
    assert bare["related"] and all(set(r["node"]) == {"id", "kind", "name"} for r in bare["related"])
    assert bare["context"]["primary"][0]["fields"] == {} and "State:" not in bare["text"]
    assert all("state" not in e and "due_at" not in e for e in bare["context"]["timeline"])
    states = {r["node"]["state"] for r in everything["related"]}
    assert not any(f", {state})" in bare["text"] for state in states)
    assert "notes" not in everything["metadata"]


@pytest.fixture
def cli_demo(empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", "cli-secret")
    get_settings.cache_clear()
    assert CliRunner().invoke(app, ["db", "upgrade"]).exit_code == 0
    yield json.loads(CliRunner().invoke(app, ["demo", "load", "--json"]).stdout)
    get_settings.cache_clear()


def test_cli_door_prints_only_the_budgeted_text(cli_demo: dict[str, Any]) -> None:
    counter, task = counter_for(get_settings().model), cli_demo["focus"]["task"]
    for budget in ("5", "60", "83"):
        result = CliRunner().invoke(app, ["context", "build", task, "--budget", budget])
        assert result.exit_code == 0, result.output
        assert 0 < counter.count(result.stdout.rstrip("\n")) <= int(budget), result.stdout
    bad = CliRunner().invoke(app, ["context", "build", "not-a-uuid"])
    assert bad.exit_code != 0 and "entity 'not-a-uuid' not found" in bad.output
