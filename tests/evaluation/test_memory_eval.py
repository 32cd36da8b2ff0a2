"""`orrery eval memory`: each session its own chat, each question a new chat's first message, evidence
found anywhere in what the model sees; the table beside the within-chat numbers, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orrery.cli import app
from orrery.evaluation.memory_measures import letters_and_digits
from tests.evaluation.test_locomo import locomo


def test_letters_and_digits_ignore_quoting() -> None:
    assert letters_and_digits('Ada: "Biscuit" \\#1, learned [to] sit!') == letters_and_digits(
        "ada biscuit 1 learned to sit"
    )


def test_cli_reports_new_chat_recall_beside_the_within_chat_default(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(locomo()))
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "memory", str(path), "--caps", "0,300", "--json"])
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)
    off, on = results["new_chat"]
    assert (off["cap"], on["cap"]) == (0, 300)
    assert off["recall"] == 0.0 and off["tokens_max"] == 0  # no cap: nothing crosses from chat to chat
    assert on["recall"] == 1.0 and 0 < on["tokens_max"] <= 300  # the other chats' evidence, within the cap
    assert set(on["by_category"]) == {"single_hop", "multi_hop", "adversarial"}
    assert on["over_budget"] == 0 and on["questions"] == 3
    assert [r["budget"] for r in results["within_chat"]] == [0, 300]
    control = results["bm25_control"]  # plain BM25 over the same messages, in the same budget
    assert [r["cap"] for r in control] == [0, 300] and control[0]["tokens_max"] == 0
    assert 0 < control[1]["tokens_max"] <= 300 and control[1]["older_alone"] == 0
    assert results["within_chat"][1]["strategy"] == "relevance"
    table = runner.invoke(app, ["eval", "memory", str(path), "--caps", "300", "--no-within"])
    assert table.exit_code == 0 and "new chat" in table.output and "within chat" not in table.output
    bad = runner.invoke(app, ["eval", "memory", str(path), "--caps", "lots"])
    assert bad.exit_code == 2 and "--caps" in bad.output
