"""Plugin discovery and validation: entry points, ORRERY_PLUGINS, and clear errors for bad plugins."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from orrery.plugins import PluginError, ensure_plugins, plan_plugins
from tests.support.entrypoint import server_launcher

EXAMPLE = {"decisions_first", "project_pulse", "retro", "retrospectives"}


def test_installed_example_plugin_is_found_through_its_entry_points() -> None:
    from orrery.memory.scoping import strategy_names
    from orrery.roster import AGENTS
    from orrery.tools.registry import REGISTRY

    found = {c.name: c for c in ensure_plugins()}
    assert set(found) >= EXAMPLE
    assert {found[n].plugin for n in EXAMPLE} == {"orrery-plugin-example"}
    assert found["project_pulse"].source.startswith("entry point orrery.tools")
    assert "decisions_first" in strategy_names()
    assert REGISTRY["project_pulse"].read_only and REGISTRY["project_pulse"].plugin == "orrery-plugin-example"
    assert AGENTS["retro"].plugin == "orrery-plugin-example"
    assert "project_pulse" in AGENTS["retro"].tools
    assert ensure_plugins() is ensure_plugins()  # loaded once per process


def test_orrery_plugins_setting_names_a_module() -> None:
    found = plan_plugins(["orrery_plugin_example"], use_entry_points=False)
    assert {c.name for c in found} == EXAMPLE
    assert all(c.source.startswith("ORRERY_PLUGINS orrery_plugin_example.") for c in found)


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> str:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


HEADER = """
from typing import ClassVar
from pydantic_ai import RunContext
from orrery.deps import TurnDeps
from orrery.roster import AgentDefinition
"""

BAD_PLUGINS = {
    "clash": (
        HEADER
        + '''
class Shadow:
    """Pretends to be last_n."""
    name: ClassVar[str] = "last_n"
    async def select(self, ctx): ...
strategies = [Shadow]
''',
        "strategy name 'last_n' is already taken by Orrery",
    ),
    "no_docstring": (
        HEADER
        + """
async def quiet(ctx: RunContext[TurnDeps]) -> str:
    return "x"
tools = [quiet]
""",
        "tool quiet has no docstring",
    ),
    "no_ctx": (
        HEADER
        + '''
async def loose(query: str) -> str:
    """Looks things up.

    Args:
        query: What to look up.
    """
    return query
tools = [loose]
''',
        "must take `ctx: RunContext[TurnDeps]`",
    ),
    "undescribed": (
        HEADER
        + '''
async def vague(ctx: RunContext[TurnDeps], query: str) -> str:
    """Looks things up."""
    return query
tools = [vague]
''',
        "query",
    ),
    "sync_select": (
        HEADER
        + '''
class Slow:
    """Selects synchronously."""
    name: ClassVar[str] = "slow"
    def select(self, ctx): ...
strategies = [Slow]
''',
        "Slow.select must be `async def select(self, ctx: ScopingContext)`",
    ),
    "ghost_tool": (
        HEADER
        + """
agents = [AgentDefinition("ghost", "Ghost", "Haunts.", ("boo",), 5, extra_tools=("nope",), prompt_text="B")]
""",
        "agent ghost names unknown tools: nope",
    ),
    "agent_clash": (
        HEADER
        + """
agents = [AgentDefinition("coach", "Coach 2", "Another.", ("help",), 5, prompt_text="Hi.")]
""",
        "agent name 'coach' is already taken by Orrery",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_PLUGINS))
def test_bad_plugins_stop_startup_with_an_error_naming_them(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body, expected = BAD_PLUGINS[name]
    module = _module(tmp_path, monkeypatch, f"bad_plugin_{name}", body)
    with pytest.raises(PluginError) as refused:
        plan_plugins([module], use_entry_points=False)
    assert f"plugin {module!r}" in str(refused.value)
    assert expected in str(refused.value)


def test_two_plugins_claiming_one_name_clash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        HEADER
        + '''
class Mine:
    """Mine."""
    name: ClassVar[str] = "mine"
    async def select(self, ctx): ...
strategies = [Mine]
'''
    )
    first = _module(tmp_path, monkeypatch, "first_plugin", body)
    second = _module(tmp_path, monkeypatch, "second_plugin", body)
    with pytest.raises(PluginError, match="'mine' is already taken by plugin 'first_plugin'"):
        plan_plugins([first, second], use_entry_points=False)


def test_orrery_plugins_command(tmp_path: Path) -> None:
    """`orrery plugins` lists the example; a broken ORRERY_PLUGINS module is a one-line error, exit 1.
    Each runs the console script in its own process, forked from the test process's launcher."""
    env = {
        "PATH": str(Path(sys.executable).parent),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HOME": str(tmp_path),
    }
    code, stdout, stderr = server_launcher().run_split(["plugins", "--json"], environ=env, cwd=Path.cwd())
    assert code == 0, stderr
    rows = {(r["kind"], r["name"]) for r in json.loads(stdout)}
    assert {("strategy", "decisions_first"), ("tool", "project_pulse"), ("agent", "retro")} <= rows
    broken = {**env, "ORRERY_PLUGINS": "no_such_plugin_module"}
    code, _, stderr = server_launcher().run_split(["plugins"], environ=broken, cwd=Path.cwd())
    assert code == 1
    assert "plugin 'no_such_plugin_module' (ORRERY_PLUGINS) cannot be imported" in stderr


def test_a_plugin_importing_orrerys_old_name_is_told_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _module(
        tmp_path, monkeypatch, "old_names_plugin", "from backend.deps import TurnDeps\ntools = []\n"
    )
    with pytest.raises(PluginError) as refused:
        plan_plugins([module], use_entry_points=False)
    assert "cannot be imported: No module named 'backend" in str(refused.value)
    assert "Orrery's package is named orrery now: rename imports of backend.* to orrery.*" in str(
        refused.value
    )
