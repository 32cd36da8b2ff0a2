"""The CLI shows what the next turn sees, reaches build_context's filters, incremental mode and user
templates, prints valid JSON, and words "which project?" the same way everywhere."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from orrery.cli.terminal import read_line
from orrery.config import get_settings
from orrery.roster import get_agent

runner = CliRunner()


@pytest.fixture
def demo(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The CLI on a copy of the demo-loaded template (this fixture is named `demo`): `demo load`
    only finds the demo and issues a key (`tests/test_cli.py` migrates and loads a fresh one)."""
    (tmp_path / "mine.yaml").write_text("budget: 300\nstrategy: breadth\ndescription: my own\n")
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("ORRERY_SECRET_KEY", "cli-secret")
    monkeypatch.setenv("ORRERY_TEMPLATES_DIR", str(tmp_path))
    get_settings.cache_clear()
    yield json.loads(invoke("demo", "load", "--json")[1])
    get_settings.cache_clear()


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.output


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_context_show_uses_the_agents_own_prompt_and_the_resolved_strategy(demo: dict[str, Any]) -> None:
    code, output = invoke(
        "sessions", "create", "--user", demo["user_id"], "--project", demo["project_id"], "--agent", "planner"
    )
    sid = output.strip().split()[-1]
    assert code == 0
    code, output = invoke("context", "show", "--session", sid, "--json")
    context = json.loads(output)
    assert context["system_prompt"].startswith(get_agent("planner").prompt())
    assert "You are a helpful assistant." not in context["system_prompt"]
    assert context["receipt"]["strategy_source"] == "agent default"
    # seed 002: the demo user checked in, so status and days stand on two lines
    assert re.search(
        r"## Engagement\n\*\*Status:\*\* \w+\n\*\*Days since last check-in:\*\* \d+\n",
        context["system_prompt"],
    )


def test_context_build_filters_incremental_and_user_templates(demo: dict[str, Any], tmp_path: Path) -> None:
    task = demo["focus"]["task"]
    code, output = invoke("context", "build", task, "--kind", "plan", "--no-knowledge", "--json")
    plans = json.loads(output)
    assert code == 0 and {i["node"]["kind"] for i in plans["related"]} == {"plan"}
    code, output = invoke("context", "build", task, "--include-references", "--no-knowledge", "--json")
    assert code == 0 and json.loads(output)["context"]["references"]  # seed 003's flag; on by default
    code, output = invoke("context", "build", task, "--no-references", "--no-children", "--json")
    bare = json.loads(output)
    skipped = {"references", "referenced_by", "has_task", "contains"}
    assert code == 0 and bare["related"] and not bare["context"]["references"]
    assert not {i["relationship"] for i in bare["related"]} & skipped
    code, output = invoke("context", "build", task, "--budget", "300", "--json")
    first = json.loads(output)
    (tmp_path / "first.json").write_text(output)
    code, output = invoke(
        "context",
        "build",
        task,
        "--existing",
        str(tmp_path / "first.json"),
        "--additional-budget",
        "300",
        "--json",
    )
    more = json.loads(output)
    first_ids = {i["node"]["id"] for i in first["related"]}
    assert code == 0 and more["metadata"]["incremental"]
    assert not first_ids & {i["node"]["id"] for i in more["related"]}
    code, output = invoke("context", "build", task, "--template", "mine", "--json")
    assert code == 0 and json.loads(output)["query"]["budget"] == 300
    code, output = invoke("context", "templates")
    assert code == 0 and "mine" in output and "my own" in output
    code, output = invoke("context", "build", task, "--kind", "spaceship")
    assert code == 1 and "unknown kinds: spaceship" in output


def test_kb_search_json_is_valid_for_exact_codes(demo: dict[str, Any]) -> None:
    code, output = invoke("kb", "search", "BR-012 overage", "--json")
    hits = _strict_json(output)["hits"]
    assert code == 0 and hits[0]["code"] == "BR-012" and hits[0]["exact_code"] and hits[0]["rank"] is None


def test_commands_that_need_a_project_say_so_the_same_way(demo: dict[str, Any]) -> None:
    synth = (
        "demo",
        "synth",
        "--entities",
        "30",
        "--edges-per-entity",
        "1",
        "--kb-entries",
        "5",
        "--seed",
        "3",
    )
    assert invoke(*synth)[0] == 0
    assert invoke("users", "create", "maya2@example.org", "--name", "M", "--project", "Side")[0] == 0
    for command in (("kb", "search", "overage"), ("docs", "summary"), ("docs", "search", "overage")):
        code, output = invoke(*command)
        assert code == 1 and "pass --project ID, one of:" in output and demo["project_id"] in output, command
    code, output = invoke("kb", "search", "overage", "--project", demo["project_id"], "--json")
    assert code == 0 and _strict_json(output)["hits"]
    code, output = invoke("docs", "index", "--project", demo["project_id"], "--json")
    assert code == 0 and json.loads(output)["skipped_unchanged"]  # the folder indexed before


def test_terminal_chat_context_agent_and_markdown(
    demo: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pydantic_ai

    monkeypatch.setattr(pydantic_ai, "BANNER_ENABLED", True)
    script = "What is this task blocked by?\n/context\n/agent motivator\n/context\n/quit\n"
    code, output = invoke("chat", "--demo", stdin=script)
    assert code == 0
    assert "Legal review of pricing terms" in output and "**Legal review" not in output  # rendered
    assert output.count("excluded (why)") == 2 and "conversation" in output and "budgets x" in output
    after_agent = output.split("answers from the next turn on")[1]
    assert "motivator · strategy relevance (agent default)" in after_agent
    assert pydantic_ai.BANNER_ENABLED is False  # the chat owns the terminal


async def test_ctrl_c_at_the_prompt_returns_at_once() -> None:
    release = threading.Event()
    waiting = asyncio.create_task(read_line(lambda: str(release.wait())))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    reader = next(t for t in threading.enumerate() if t.name == "orrery-input")
    assert reader.daemon  # never holds up the exit
    release.set()


def _conversation(demo: dict[str, Any]) -> str:
    """A planner session holding tests.support.conversation's 16 messages."""
    import uuid

    from orrery.db.engine import Database
    from tests.support.conversation import write_conversation

    code, output = invoke(
        "sessions", "create", "--user", demo["user_id"], "--project", demo["project_id"], "--agent", "planner"
    )
    sid = output.strip().split()[-1]

    async def write() -> None:
        db = Database.from_settings(get_settings())
        try:
            await write_conversation(db, uuid.UUID(demo["user_id"]), sid)
        finally:
            await db.dispose()

    asyncio.run(write())
    return sid


def _stored(sid: str) -> Any:
    from orrery.db.engine import Database
    from tests.support.conversation import stored

    async def read() -> Any:
        db = Database.from_settings(get_settings())
        try:
            return await stored(db, sid)
        finally:
            await db.dispose()

    return asyncio.run(read())


def test_context_show_compares_strategies_and_past_turns(
    demo: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.conversation import TOPICS

    monkeypatch.setenv("COLUMNS", "200")  # reasons on one line each

    sid = _conversation(demo)
    code, output = invoke("context", "show", "--session", sid, "--compare", "last_n,token_budget,summary")
    assert code == 0, output
    # the reasons wrap inside their cells in a narrow terminal: check the words of each part
    assert "only by some (" in output and "kept by all (" in output and "older than" in output
    assert "totals" in output and "summary extended with" in output
    code, output = invoke(
        "context", "show", "--session", sid, "--compare", "last_n,relevance", "--at", "15", "--json"
    )
    comparison = json.loads(output)
    assert code == 0 and comparison["latest_seq"] == 15 and comparison["query"] == TOPICS[-1]
    first = next(u for u in comparison["units"] if u["key"] == "seq 1")
    assert (
        first["kept_by"] == ["relevance"]
        and first["verdicts"]["last_n"]["reason"] == "older than the last 10"
    )
    code, output = invoke(
        "context", "show", "--session", sid, "--strategy", "summary", "--at", "11", "--json"
    )
    context = json.loads(output)
    assert code == 0 and context["receipt"]["strategy"] == "summary"
    assert context["messages"][-1] == {"role": "user", "content": TOPICS[5]}
    assert _stored(sid) == (16, [])  # neither preview kept the summary it built


def test_context_show_refuses_bad_strategies_and_turns(demo: dict[str, Any]) -> None:
    sid = _conversation(demo)
    for args, words in (
        (("--compare", "last_n,nope"), "unknown scoping strategy 'nope'; known: "),
        (("--compare", "relevance"), "compare needs 2 to 6 strategy names"),
        (("--strategy", "nope"), "known: "),
        (("--at", "4"), "`at` must be the seq of a user message"),
        (("--compare", "last_n,relevance", "--strategy", "last_n"), "drop --strategy"),
    ):
        code, output = invoke("context", "show", "--session", sid, *args)
        assert code == 1 and words in output, (args, output)
    code, output = invoke("context", "show", "--session", sid, "--at", "0")
    assert code == 2


def _write(demo: dict[str, Any], sid: str, lines: list[tuple[str, str]]) -> None:
    import uuid

    from orrery.db.engine import Database
    from orrery.memory.messages import append_message
    from orrery.repo.chat import NewMessage

    async def write() -> None:
        db = Database.from_settings(get_settings())
        try:
            async with db.transaction() as s:
                for role, text in lines:
                    await append_message(s, uuid.UUID(demo["user_id"]), sid, NewMessage(role, text))
        finally:
            await db.dispose()

    asyncio.run(write())


def test_context_show_lists_what_came_from_earlier_chats(
    demo: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orrery.cli.common import out

    # the console's width is fixed when it is made, maybe by an earlier test with another COLUMNS
    monkeypatch.setattr(out, "width", 200)
    made = [
        invoke("sessions", "create", "--user", demo["user_id"], "--project", demo["project_id"])[1].split()[
            -1
        ]
        for _ in range(2)
    ]
    _write(
        demo, made[0], [("user", "The Kirkwall ferry leaves at 7:15 from pier 3."), ("assistant", "Noted.")]
    )
    _write(demo, made[1], [("user", "When does the Kirkwall ferry leave?")])
    code, output = invoke("context", "show", "--session", made[1], "--json")
    section = json.loads(output)["receipt"]["sections"][-1]
    assert code == 0 and section["name"] == "earlier_chats"
    assert section["included"][0]["chat_id"] == made[0] and section["included"][0]["seq"] == 1
    code, output = invoke("context", "show", "--session", made[1])
    assert code == 0 and "earlier_chats" in output
    row = next(line for line in output.splitlines() if "earlier_chats" in line)
    assert str(section["tokens"]) in row and str(section["budget"]) in row
    assert "seq 1" in output and "recalled from an earlier chat" in output
