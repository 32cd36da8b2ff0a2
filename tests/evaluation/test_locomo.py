"""`orrery eval scoping` on LoCoMo-format files: mapping, dates, malformed evidence, the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from orrery.errors import ValidationError
from orrery.evaluation.files import load_dataset


def locomo() -> list[dict[str, Any]]:
    """Two short sessions of our own, in LoCoMo's shape (never the real data)."""
    conversation = {
        "speaker_a": "Ada",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a beagle called Biscuit."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a photo of a beagle"},
        ],
        "session_2_date_time": "9:05 am on 2 June, 2023",
        "session_2": [
            {"speaker": "Ada", "dia_id": "D2:1", "text": "Biscuit learned to sit this week."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Good dog. I started pottery classes."},
        ],
    }
    qa = [
        {"question": "What breed is Biscuit?", "answer": "beagle", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Biscuit learn?", "answer": "sit", "evidence": ["D:2:1; D1:1"], "category": 1},
        {"question": "When did Ben start pottery?", "answer": 2023, "evidence": ["D7:7"], "category": 2},
        {
            "question": "What is Ada's pottery?",
            "adversarial_answer": "none",
            "evidence": ["D2:2"],
            "category": 5,
        },
    ]
    return [{"sample_id": "conv-x", "conversation": conversation, "qa": qa}]


def test_turns_map_to_dated_user_messages_and_bad_evidence_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(locomo()))
    dataset = load_dataset(path)
    conv = dataset.conversations[0]
    turns = [t for _, t in conv.turns()]
    assert [t.role for t in turns] == ["user"] * 4
    assert turns[0].text == "Ada: I adopted a beagle called Biscuit."
    assert turns[1].text == "Ben: Lovely! [shares a photo: a photo of a beagle]"
    first = conv.sessions[0]
    assert first.turn_time(0) == datetime(2023, 5, 8, 13, 56, 1, tzinfo=UTC)
    assert first.turn_time(1) == datetime(2023, 5, 8, 13, 56, 2, tzinfo=UTC)
    assert [q.category for q in conv.qa] == ["single_hop", "multi_hop", "adversarial"]
    assert conv.qa[1].evidence == ["D2:1", "D1:1"]  # "D:2:1; D1:1" normalised
    assert dataset.skipped == {"evidence_ids": 1, "questions": 1}  # D7:7 names no turn
    assert load_dataset(path, "locomo").model_dump() == dataset.model_dump()
    with pytest.raises(ValidationError, match="unknown dataset format"):
        load_dataset(path, "csv")
    with pytest.raises(ValidationError, match="invalid"):
        load_dataset(path, "orrery")


def test_cli_reports_every_category_and_both_baselines(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(locomo()))
    runner = CliRunner()
    args = ["eval", "scoping", str(path), "--strategies", "relevance", "--budgets", "200"]
    result = runner.invoke(app, [*args, "--format", "locomo", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["strategy"]: r for r in json.loads(result.stdout)["results"]}
    assert set(rows) == {"relevance", "lexical_baseline", "plain_bm25"}
    assert set(rows["relevance"]["by_category"]) == {"single_hop", "multi_hop", "adversarial"}
    assert rows["relevance"]["recall"] == 1.0  # two short sessions fit whole
    assert rows["relevance"]["recall_unanswerable"] == 1.0
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "never" in table.output and "plain_bm25" in table.output
