"""The `orrery` CLI end to end: on a fresh database (migrate, demo, summary), and on copies of the
migrated or demo-loaded templates (users, keys, sessions, context, knowledge, chat)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from orrery.cli import app
from tests.support.cli import cli_environment as _env
from tests.support.cli import invoke, runner


@pytest.fixture
def cli_env(empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI on a database with no schema (`test_fresh_database_flow` migrates it)."""
    yield from _env(empty_db_url, monkeypatch)


@pytest.fixture
def migrated_env(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI on a migrated copy (with the demo loaded when the test is marked `demo_db`: its own
    `demo load` then only finds the demo and issues a key)."""
    yield from _env(db_url, monkeypatch)


def test_fresh_database_flow(cli_env: None) -> None:
    code, output = invoke("demo", "summary")
    assert code == 1 and "orrery db upgrade" in output
    code, output = invoke("db", "current")
    assert code == 1 and "needs `orrery db upgrade`" in output
    assert invoke("db", "upgrade")[0] == 0
    code, output = invoke("db", "current")
    assert code == 0 and "up to date" in output

    code, output = invoke("demo", "load", "--json")
    assert code == 0
    data = json.loads(output)
    assert data["api_key"].startswith("orr_") and set(data["focus"]) == {"task", "plan", "goal", "document"}

    code, output = invoke("demo", "load", "--if-empty")
    assert code == 0 and "demo not loaded" in output
    code, output = invoke("demo", "summary")
    assert code == 0 and "Atlas 2.0 Launch" in output and "Maya Chen" in output


def test_users_and_synth(migrated_env: None) -> None:
    code, output = invoke("users", "create", "Sam@Example.org", "--name", "Sam", "--project", "Thesis")
    assert code == 0 and "API key (shown once): orr_" in output and "Thesis" in output
    code, output = invoke("users", "create", "sam@example.org", "--name", "Sam again")
    assert code == 1 and "already exists" in output
    code, output = invoke("users", "key", "nobody@example.org")
    assert code == 1 and "not found" in output

    code, output = invoke(
        "demo",
        "synth",
        "--entities",
        "200",
        "--edges-per-entity",
        "2",
        "--kb-entries",
        "20",
        "--seed",
        "5",
        "--json",
    )
    first = json.loads(output)
    assert code == 0 and first["entities"] == 200 and first["created"]
    second = json.loads(
        invoke(
            "demo",
            "synth",
            "--entities",
            "200",
            "--edges-per-entity",
            "2",
            "--kb-entries",
            "20",
            "--seed",
            "5",
            "--json",
        )[1]
    )
    assert not second["created"] and second["project_id"] == first["project_id"]


@pytest.mark.demo_db
def test_sessions_and_context_show(migrated_env: None) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    focus = f"task:{demo['focus']['task']}"
    code, output = invoke(
        "sessions",
        "create",
        "--user",
        "maya@demo.orrery.dev",
        "--project",
        demo["project_id"],
        "--focus",
        focus,
        "--agent",
        "planner",
        "--strategy",
        "relevance",
        "--json",
    )
    assert code == 0
    record = json.loads(output)
    assert record["focus_kind"] == "task" and record["scoping_strategy"] == "relevance"
    assert invoke("sessions", "say", "--session", record["id"], "What blocks the pricing page?")[0] == 0

    code, output = invoke("context", "show", "--session", record["id"], "--json")
    assert code == 0
    context = json.loads(output)
    assert set(context) == {"system_prompt", "messages", "receipt"}
    assert context["messages"] == [{"role": "user", "content": "What blocks the pricing page?"}]
    assert context["receipt"]["strategy"] == "relevance" and context["receipt"]["agent"] == "planner"
    code, output = invoke("context", "show", "--session", record["id"])
    assert code == 0 and "receipt" in output and "profile" in output

    code, output = invoke("sessions", "create", "--user", demo["user_id"], "--strategy", "nope")
    assert code == 1 and "unknown scoping strategy 'nope'" in output
    code, output = invoke("sessions", "create", "--user", demo["user_id"], "--focus", "task")
    assert code == 2 and "KIND:ID" in output
    code, output = invoke("context", "show", "--session", "not-a-session")
    assert code == 1 and "not found" in output


@pytest.mark.demo_db
def test_linked_and_context_build(migrated_env: None) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    task = demo["focus"]["task"]
    code, output = invoke("linked", task, "--filter", "document", "--json")
    linked = json.loads(output)
    assert code == 0 and linked["counts"]["documents"] == 4 and linked["total"] == 4
    code, output = invoke("linked", task)
    assert code == 0 and "## Linked Entities for: Finalize pricing page" in output

    code, output = invoke("context", "build", task, "--budget", "500", "--query", "legal review", "--json")
    result = json.loads(output)
    assert code == 0 and result["metadata"]["tokens_used"] <= 500 and result["related"]
    code, output = invoke("context", "build", task, "--template", "task-deep-dive")
    assert code == 0 and "- Legal review of pricing terms" in output
    code, output = invoke("context", "templates")
    assert code == 0 and "project-context" in output and "task-deep-dive" in output
    code, output = invoke("context", "build", task, "--strategy", "sideways")
    assert code == 1 and "unknown strategy 'sideways'" in output
    code, output = invoke("linked", "00000000-0000-4000-8000-000000000000")
    assert code == 1 and "not found" in output


@pytest.mark.demo_db
def test_kb_and_docs_commands(migrated_env: None, tmp_path: Any) -> None:
    demo = json.loads(invoke("demo", "load", "--json")[1])
    code, output = invoke("kb", "search", "overage billing", "--json")
    assert code == 0 and json.loads(output)["hits"][0]["code"] == "BR-012"
    code, output = invoke("kb", "load-context", "Add overage billing to the usage calculator", "--json")
    result = json.loads(output)
    assert code == 0 and result["confidence"] == "high" and result["entries"][0]["hop"] == 0
    code, output = invoke("kb", "load-context", "center a div with css flexbox")
    assert code == 0 and "No KB context found for this task." in output
    code, output = invoke("kb", "entry", "br-012")
    assert code == 0 and "Usage overage billing" in output
    code, output = invoke("kb", "search", "???")
    assert code == 0 and "no matching entries" in output

    code, output = invoke("docs", "summary")
    assert code == 0 and json.loads(output)["total_stories"] == 8
    code, output = invoke("docs", "story", "US-004")
    assert code == 0 and json.loads(output)["story"]["epic"] == "Billing"
    code, output = invoke("docs", "index", str(tmp_path / "missing"), "--project", demo["project_id"])
    assert code == 1 and "is not a directory" in output


@pytest.mark.demo_db
def test_chat_once_and_interactive(migrated_env: None) -> None:
    assert invoke("demo", "load")[0] == 0
    code, output = invoke("chat", "--demo", "--once", "What plan does this task belong to?", "--json")
    result = json.loads(output)
    assert code == 0 and result["agent"] == "planner" and "Launch marketing" in result["reply"]
    code, output = invoke("chat", "--once", "What blocks it?", "--session", result["session_id"], "--json")
    assert code == 0 and [c["name"] for c in json.loads(output)["tool_calls"]] == ["get_linked_entities"]

    session = runner.invoke(
        app, ["chat", "--demo"], input="What is this task blocked by?\n/context\n/agent nope\n/quit\n"
    )
    assert session.exit_code == 0
    assert "get_linked_entities" in session.output and "excluded (why)" in session.output
    assert "unknown agent 'nope'" in session.output


def test_keys_create_list_revoke(migrated_env: None) -> None:
    assert invoke("users", "create", "kim@example.org", "--name", "Kim")[0] == 0
    code, output = invoke("keys", "create", "kim@example.org", "--name", "laptop")
    assert code == 0 and "orr_" in output
    code, output = invoke("keys", "list", "kim@example.org")
    assert code == 0 and "laptop" in output and "default" in output
    code, output = invoke("keys", "revoke", "kim@example.org", "--name", "laptop")
    assert code == 0 and "1 key(s) revoked" in output
    code, output = invoke("keys", "revoke", "nobody@example.org")
    assert code == 1 and "not found" in output


@pytest.mark.demo_db
def test_interactive_chat_wraps_long_replies_at_the_terminal_width(
    migrated_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply longer than the terminal is wrapped, never cut at its edge."""
    from orrery.cli.common import out

    assert invoke("demo", "load")[0] == 0
    monkeypatch.setattr(out, "_width", 40)
    session = runner.invoke(app, ["chat", "--demo"], input="What is this task blocked by?\n/quit\n")
    assert session.exit_code == 0, session.output
    lines = session.output.splitlines()
    start = next(i for i, line in enumerate(lines) if "orrery ›" in line)
    end = next(i for i, line in enumerate(lines) if i > start and "ms)" in line and "·" in line)
    reply = [line for line in lines[start + 1 : end] if line.strip() and not line.startswith("→")]
    assert len(reply) > 2 and all(len(line) <= 40 for line in reply), reply
    words = " ".join(" ".join(reply).split())
    assert "blocked" in words and words.endswith("Decide usage-based price points.")  # nothing cut
    # the offline notice: once, at the start of the chat, never inside the reply
    assert (
        session.output.count("Offline model") == 1
        and next(i for i, line in enumerate(lines) if "Offline model" in line) < start
    )
