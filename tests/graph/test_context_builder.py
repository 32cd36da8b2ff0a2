"""build_context: exact budgets, strategies, scoring factors, filters, seeds, increments, templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orrery.context.builder import STRATEGIES, build_context, resolve_request
from orrery.db.engine import Database
from orrery.errors import ConfigurationError, NotFoundError, ValidationError
from orrery.graph.templates import list_templates, load_template
from orrery.repo import graph
from orrery.tokens import counter_for
from tests.support.factories import make_entity, make_project, make_user

COUNTER = counter_for("offline")


@pytest.fixture
async def g(db: Database) -> dict[str, Any]:
    """A seed with a dependency chain four long, ten documents around it, and a second seed."""
    async with db.transaction() as s:
        u = await make_user(s)
        p = await make_project(s, u)
        ids: dict[str, Any] = {"user": u.id}

        async def add(key: str, kind: str, name: str, **kw: Any) -> Any:
            ids[key] = (await make_entity(s, u, p, kind, name, **kw)).id
            return ids[key]

        await add("seed", "task", "Finalize pricing page", description="Publish the pricing page.")
        previous = "seed"
        for i in range(1, 5):
            await add(f"c{i}", "task", f"Chain step {i}", description=f"Step {i} of the billing chain.")
            await graph.create_edge(s, u.id, ids[previous], "depends_on", ids[f"c{i}"])
            previous = f"c{i}"
        for i in range(10):
            await add(
                f"d{i}",
                "document",
                f"Doc {i}",
                description=f"Notes about topic {i} " * 8,
                state="archived" if i == 9 else "active",
            )
            await graph.create_edge(s, u.id, ids["seed"], "references", ids[f"d{i}"])
        await add("goal", "goal", "Ship the legal review", goal_type="target", description="Legal sign-off.")
        await graph.create_edge(s, u.id, ids["c1"], "supports_goal", ids["goal"])
        await add("seed2", "plan", "Launch plan")
        for i in (0, 1):
            await graph.create_edge(s, u.id, ids["seed2"], "references", ids[f"d{i}"])
        return ids


async def _build(
    db: Database, g: dict[str, Any], seeds: list[str] | None = None, **kw: Any
) -> dict[str, Any]:
    request = resolve_request([str(g[k]) for k in (seeds or ["seed"])], **kw)
    async with db.sessions() as s:
        return await build_context(s, g["user"], request, COUNTER)


async def test_response_structure_and_factors(db: Database, g: dict[str, Any]) -> None:
    r = await _build(db, g, query="legal review")
    assert set(r) == {"query", "context", "primary", "related", "metadata", "excluded", "text"}
    assert (
        r["query"]["strategy"] == "relevance" and r["primary"][0]["node"]["name"] == "Finalize pricing page"
    )
    meta = r["metadata"]
    assert meta["tokens_used"] == COUNTER.count(r["text"]) <= meta["tokens_budget"] == 4000
    assert meta["items_included"] == 1 + len(r["related"])
    weights = STRATEGIES["relevance"].weights
    for item in r["related"]:
        assert set(item["factors"]) == {"distance", "recency", "references", "type", "content"}
        assert item["score"] == pytest.approx(
            sum(weights[k] * v for k, v in item["factors"].items()), abs=1e-3
        )
        assert {"relationship", "direction", "distance", "via"} <= set(item)
    goal = next(i for i in r["related"] if i["node"]["name"] == "Ship the legal review")
    assert goal["factors"]["content"] == 1.0 and goal["distance"] == 2


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
async def test_budget_is_never_exceeded(db: Database, g: dict[str, Any], strategy: str) -> None:
    """Every format and budget on one database per strategy (the builds only read it)."""
    for fmt in ("structured", "narrative", "outline"):
        for budget in (60, 150, 400, 1200):
            case = f"{strategy}, {fmt}, budget {budget}"
            r = await _build(db, g, budget=budget, strategy=strategy, format=fmt, query="billing chain")
            assert r["metadata"]["tokens_used"] == COUNTER.count(r["text"]) <= budget, case
            included = [i["score"] for i in r["related"]]
            dropped = [e["score"] for e in r["excluded"] if e["reason"] == "budget"]
            if included and dropped:  # best first (smaller, lower items may fill the rest)
                assert max(included) >= max(dropped), case


async def test_strategies_change_the_traversal(db: Database, g: dict[str, Any]) -> None:
    distances = {}
    for strategy in STRATEGIES:
        r = await _build(db, g, strategy=strategy, query="billing chain")
        distances[strategy] = {i["node"]["name"]: i["distance"] for i in r["related"]}
    assert max(distances["breadth"].values()) == 1
    assert max(distances["relevance"].values()) == 2
    assert (
        distances["depth"].get("Chain step 4") == 4 and "Doc 5" not in distances["depth"]
    )  # 3 links per node
    assert "Chain step 3" in distances["semantic"]  # expanded through matching chain steps
    assert all(d == 1 for n, d in distances["semantic"].items() if n.startswith("Doc"))


async def test_filters_and_depth_are_reported(db: Database, g: dict[str, Any]) -> None:
    r = await _build(db, g, exclude={"states": ["archived"], "kinds": ["goal"]})
    reasons = {e["name"]: e["reason"] for e in r["excluded"] if e["name"]}
    assert reasons["Doc 9"] == "filter" and reasons["Ship the legal review"] == "filter"
    assert any(e["reason"] == "depth" for e in r["excluded"])  # chain step 3 lies beyond depth 2
    only = await _build(db, g, include={"kinds": ["document"]})
    assert {i["node"]["kind"] for i in only["related"]} == {"document"}


async def test_multiple_seeds_deduplicate(db: Database, g: dict[str, Any]) -> None:
    r = await _build(db, g, seeds=["seed", "seed2"], strategy="breadth")
    ids = [i["node"]["id"] for i in r["related"]]
    assert len(ids) == len(set(ids)) and str(g["seed2"]) not in ids and str(g["seed"]) not in ids
    assert [p["node"]["name"] for p in r["primary"]] == ["Finalize pricing page", "Launch plan"]


async def test_incremental_adds_only_new_items(db: Database, g: dict[str, Any]) -> None:
    first = await _build(db, g, budget=250)
    more = await _build(db, g, budget=250, existing_context=first, additional_budget=300)
    first_ids = {i["node"]["id"] for i in first["related"]} | {p["node"]["id"] for p in first["primary"]}
    new_ids = {i["node"]["id"] for i in more["related"]}
    assert new_ids and not (new_ids & first_ids) and more["primary"] == []
    assert more["metadata"]["incremental"] and more["metadata"]["tokens_used"] <= 300
    third = await _build(db, g, budget=250, existing_context=more, additional_budget=300)
    assert not ({i["node"]["id"] for i in third["related"]} & (first_ids | new_ids))


async def test_templates_apply_defaults_and_validate(db: Database, g: dict[str, Any], tmp_path: Path) -> None:
    names = [t.name for t in list_templates()]
    assert {"project-context", "task-deep-dive", "goal-overview"} <= set(names)
    r = await _build(db, g, template="task-deep-dive")
    assert (
        r["query"]["strategy"] == "depth"
        and r["query"]["format"] == "outline"
        and r["query"]["budget"] == 3000
    )
    assert {i["relationship"] for i in r["related"]} <= {"depends_on", "supports_goal"}
    explicit = await _build(db, g, template="task-deep-dive", budget=500, format="structured")
    assert explicit["query"]["budget"] == 500 and explicit["query"]["format"] == "structured"
    with pytest.raises(ValidationError, match="unknown template 'nope'; available: goal-overview"):
        resolve_request(["x"], template="nope")
    (tmp_path / "bad.yaml").write_text("budget: 10\nstrategy: sideways\n")
    with pytest.raises(ConfigurationError, match="bad.yaml"):
        load_template("bad", tmp_path)


async def test_bad_seeds(db: Database, g: dict[str, Any]) -> None:
    with pytest.raises(NotFoundError):
        await _build(db, {**g, "x": "not-a-uuid"}, seeds=["x"])
    async with db.transaction() as s:
        eve = await make_user(s, "Eve")
    with pytest.raises(NotFoundError):
        async with db.sessions() as s:
            await build_context(s, eve.id, resolve_request([str(g["seed"])]), COUNTER)
    with pytest.raises(ValidationError, match="unknown strategy"):
        resolve_request(["a"], strategy="sideways")
    with pytest.raises(ValidationError, match="at least one seed"):
        resolve_request([])


async def test_round_trips_are_constant_in_the_number_of_edges(db: Database, g: dict[str, Any]) -> None:
    small = await _build(db, g)
    async with db.transaction() as s:
        u = await make_user(s, "Hub")
        p = await make_project(s, u)
        hub = await make_entity(s, u, p, "task", "Hub")
        for i in range(150):
            leaf = await make_entity(s, u, p, "task", f"Leaf {i}")
            await graph.create_edge(s, u.id, hub.id, "relates_to", leaf.id)
    async with db.sessions() as s:
        big = await build_context(s, u.id, resolve_request([str(hub.id)]), COUNTER)
    assert big["metadata"]["candidates"] == 150
    assert big["metadata"]["round_trips"] <= small["metadata"]["round_trips"] <= 7


async def test_knowledge_entries_compete_for_the_budget(db: Database, settings: Any, demo: Any) -> None:
    seeds = [str(demo.focus["task"])]
    async with db.sessions() as s:
        with_kb = await build_context(
            s, demo.user_id, resolve_request(seeds, query="overage billing"), COUNTER
        )
        without = await build_context(
            s,
            demo.user_id,
            resolve_request(seeds, query="overage billing", include={"knowledge": False}),
            COUNTER,
        )
    kb = [i for i in with_kb["related"] if i["node"]["kind"] == "kb_entry"]
    assert kb and kb[0]["relationship"] == "knowledge" and kb[0]["node"]["name"].startswith("BR-012")
    assert set(kb[0]["factors"]) == {"distance", "recency", "references", "type", "content"}
    assert "(knowledge base, business-rules)" in with_kb["text"]
    assert not [i for i in without["related"] if i["node"]["kind"] == "kb_entry"]


async def test_metadata_says_whether_the_count_is_exact_or_an_estimate(
    db: Database, g: dict[str, Any]
) -> None:
    """Seed 003 FR-2 ("report actual vs estimated tokens"): `tokens_used` is the count of the final
    text, exact with the model's own encoding and flagged an estimate for a model without one."""
    request = resolve_request([str(g["seed"])], budget=600)
    async with db.sessions() as s:
        exact = await build_context(s, g["user"], request, counter_for("gpt-4o"))
        estimate = await build_context(s, g["user"], request, counter_for("claude-3-5-sonnet"))
    assert exact["metadata"]["exact_tokens"] and exact["metadata"]["encoding"] == "o200k_base"
    assert not estimate["metadata"]["exact_tokens"] and estimate["metadata"]["encoding"] == "cl100k_base"
    for r, model in ((exact, "gpt-4o"), (estimate, "claude-3-5-sonnet")):
        assert r["metadata"]["tokens_used"] == counter_for(model).count(r["text"]) <= 600


async def test_outline_puts_each_item_under_the_one_it_was_reached_from(
    db: Database, g: dict[str, Any]
) -> None:
    """Seed 003's "maintains coherent structure": in an outline a distance-2 item is indented under
    the item it was reached through, which comes before it."""
    r = await _build(db, g, strategy="depth", format="outline", budget=3000, include={"knowledge": False})
    lines = r["text"].splitlines()
    deep = [i for i in r["related"] if i["distance"] >= 2]
    assert deep, "the fixture has a chain of at least two links"
    for item in deep:
        at = next(n for n, line in enumerate(lines) if f"[{item['node']['id']}]" in line)
        assert lines[at].startswith("  " * (item["distance"] - 1) + "- ")
        assert any(f"[{item['via']}]" in line for line in lines[:at])
