"""The scripted model as an app developer meets it: scripting a tool call with a fixture's value,
asserting on the arguments it called with, and the kit's fixtures in pytest-asyncio's strict mode."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from orrery.testing import Called, KitUser, ScriptedModel, Seen, TestOrchestrator, on


@pytest.fixture
def orrery_model() -> ScriptedModel:
    """Written before the entry exists: `{code}` is filled when the model is asked."""
    return ScriptedModel(
        on("rule", call=("get_entry", {"code": "{code}"}), say="From the rule book: {tool_result}"),
        otherwise="Ask me about the rule.",
    )


@pytest.fixture
async def pricing_rule(orrery_client: Any, orrery_user: KitUser, orrery_model: ScriptedModel) -> str:
    """An entry created through the API; its code reaches the script through `model.values`.

    It needs `orrery_client`, which needs the orchestrator and so `orrery_model`: the model's
    fixture cannot take this one as an argument (a cycle), hence the late-filled placeholder."""
    collection = await orrery_client.post(
        f"/v1/projects/{orrery_user.project_id}/kb/collections",
        json={"slug": "business-rules", "name": "Business rules"},
    )
    assert collection.status_code == 201, collection.text
    entry = await orrery_client.post(
        "/v1/kb/entries",
        json={
            "collection_id": collection.json()["id"],
            "code": "BR-042",
            "name": "Annual plans are billed up front",
            "description": "Yearly subscriptions pay the full year at signup; refunds are pro rata.",
        },
    )
    assert entry.status_code == 201, entry.text
    orrery_model.values["code"] = entry.json()["code"]
    return str(entry.json()["code"])


async def test_a_rule_calls_a_tool_with_a_fixture_value(
    orrery_orchestrator: TestOrchestrator,
    orrery_user: KitUser,
    orrery_model: ScriptedModel,
    pricing_rule: str,
) -> None:
    session = await orrery_orchestrator.start_session(orrery_user.id, orrery_user.project_id)
    first = await orrery_orchestrator.chat(orrery_user.id, session, "What does the billing rule say?")
    assert first.error is None
    assert "billed up front" in first.reply and first.reply.startswith("From the rule book:")
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("get_entry", {"code": pricing_rule})]
    second = await orrery_orchestrator.chat(orrery_user.id, session, "And the rule again?")
    assert "billed up front" in second.reply
    # every call the model made, in order, with its arguments
    assert orrery_model.tool_calls == [("get_entry", {"code": "BR-042"})] * 2
    assert orrery_model.tool_calls[0] == Called(name="get_entry", args={"code": "BR-042"})
    assert orrery_model.tools_called == ["get_entry", "get_entry"]


async def test_callables_script_from_the_request() -> None:
    def args(seen: Seen) -> dict[str, Any]:
        return {"code": seen.user_text.split()[-1]}

    def say(seen: Seen) -> str:
        return f"{len(seen.tool_results)} result: {seen.tool_results[0]}"

    model = ScriptedModel(on("look up", call=("lookup", args), say=say))
    agent = Agent(model)

    @agent.tool_plain
    def lookup(code: str) -> str:
        return f"entry {code}"

    result = await agent.run("please look up GT-019")
    assert result.output == "1 result: entry GT-019"
    assert model.tool_calls == [Called("lookup", {"code": "GT-019"})]


async def test_placeholders_keep_json_types_and_name_a_missing_value() -> None:
    model = ScriptedModel(
        on("top", call=("top", {"limit": "{n}", "label": "top {n} of {scope}"}), say="{tool_result}"),
        values={"n": 3, "scope": "BR"},
    )
    agent = Agent(model)

    @agent.tool_plain
    def top(limit: int, label: str) -> str:
        return f"{limit!r} / {label}"

    assert (await agent.run("top entries")).output == "3 / top 3 of BR"
    del model.values["scope"]
    with pytest.raises(
        LookupError, match=r"no value for \{scope\}; set model.values\['scope'\] \(known: n\)"
    ):
        await agent.run("top entries")


def test_the_kit_runs_in_strict_mode_without_deprecation_warnings(tmp_path: Path) -> None:
    """A project with pytest-asyncio's defaults plus the loop scope the kit documents: strict mode
    (tests marked), and no `asyncio_default_fixture_loop_scope is unset` warning."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nasyncio_default_fixture_loop_scope = "function"\n'
    )
    (tmp_path / "test_app.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from orrery.testing import ScriptedModel, on

            @pytest.mark.asyncio
            async def test_a_turn(orrery_orchestrator, orrery_user):
                orrery_orchestrator.model = ScriptedModel(on("plan", say="Let's plan."))
                session = await orrery_orchestrator.start_session(orrery_user.id, orrery_user.project_id)
                turn = await orrery_orchestrator.chat(orrery_user.id, session, "plan the week")
                assert turn.reply == "Let's plan."
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL", "PYTEST_"))}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "test_app.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout and "warning" not in done.stdout
