"""Expertise modules: real content per agent, front matter, engagement filter, caching."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orrery.errors import ConfigurationError
from orrery.memory.expertise import load_modules, modules_for
from orrery.tokens import counter_for
from orrery.vocabulary import AGENT_IDS


@pytest.mark.parametrize("agent", AGENT_IDS)
def test_every_agent_has_substantial_expertise(agent: str) -> None:
    modules = modules_for(agent, engagement="engaged")
    assert modules, agent
    counter = counter_for("offline")
    assert all(counter.count(m.body) > 150 for m in modules)  # real guidance, not a stub


def test_front_matter_and_ranking() -> None:
    by_slug = {m.slug: m for m in load_modules()}
    assert {"goal-setting", "habit-formation", "planning-dependencies", "accountability"} <= set(by_slug)
    assert "goal_architect" in by_slug["goal-setting"].agents and "SMART" in by_slug["goal-setting"].body
    ranked = modules_for("coach", "I keep missing my morning habit streak", "engaged")
    assert ranked[0].slug == "habit-formation"


def test_engagement_filter() -> None:
    assert "returning-users" in {m.slug for m in modules_for("planner", engagement="returning")}
    assert "returning-users" not in {m.slug for m in modules_for("planner", engagement="engaged")}


def test_bad_front_matter_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "broken.md").write_text("no front matter")
    with pytest.raises(ConfigurationError, match="front matter"):
        load_modules(tmp_path)
    (tmp_path / "broken.md").write_text("---\ntitle: x\n---\nbody")
    with pytest.raises(ConfigurationError, match="agents, when"):
        load_modules(tmp_path)


def test_cache_reloads_when_a_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.md"
    path.write_text("---\ntitle: One\nagents: [coach]\nwhen: always\n---\nfirst")
    assert load_modules(tmp_path)[0].title == "One"
    assert load_modules(tmp_path) is load_modules(tmp_path)  # cached
    time.sleep(0.01)
    path.write_text("---\ntitle: Two\nagents: [coach]\nwhen: always\n---\nsecond")
    import os

    os.utime(path, (time.time() + 5, time.time() + 5))
    assert load_modules(tmp_path)[0].title == "Two"
