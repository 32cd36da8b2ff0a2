"""`orrery eval focus`: the same-entity boost measured on a synthetic project of focused chats."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from orrery.cli import app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.evaluation.focus import evaluate_focus
from orrery.memory.recall import ranked


async def test_the_boost_finds_the_focused_tasks_facts_and_keeps_named_ones(
    db: Database, settings: Settings
) -> None:
    rows = await evaluate_focus(db, settings, [1000], [0.0, 0.5])
    without, with_boost = rows
    assert (without["boost"], with_boost["boost"]) == (0.0, 0.5)
    assert with_boost["same_task"] > without["same_task"]  # words alone cannot tell whose deadline
    assert without["other_named"] == with_boost["other_named"] == 1.0  # a named task still wins
    assert ranked.ENTITY_BOOST == 0.5  # the measurement puts the default back


def test_cli_prints_one_row_per_boost_and_cap_and_refuses_bad_boosts() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "focus", "--caps", "2000", "--boosts", "0", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["boost"], r["cap"], r["questions"]) for r in rows] == [(0.0, 2000, 120)]
    refused = runner.invoke(app, ["eval", "focus", "--boosts", "-1"])
    assert refused.exit_code == 2
    assert "none negative" in refused.output
