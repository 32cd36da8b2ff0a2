"""The project-conversation generator (`orrery eval make-dataset --kind project`) and the measures
`orrery eval memory` adds for it: the plain BM25 control, the rarest-words measure, "older alone"."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from orrery.cli import app
from orrery.evaluation.baseline import PlainBM25
from orrery.evaluation.dataset import Conversation, Question, Session, Turn
from orrery.evaluation.memory_measures import Control, Scorer, rarest_words
from orrery.evaluation.project_data import make_project_dataset
from orrery.text import analyze
from orrery.tokens import counter_for

KINDS = {
    "single_hop",
    "instruction",
    "preference",
    "knowledge_update",
    "contradiction",
    "event_order",
    "summary",
    "multi_session",
}


def test_same_seed_same_dataset_and_another_seed_another() -> None:
    assert make_project_dataset(3, 2).model_dump() == make_project_dataset(3, 2).model_dump()
    assert make_project_dataset(4, 2).model_dump() != make_project_dataset(3, 2).model_dump()


def test_every_kind_is_planted_with_evidence_that_exists() -> None:
    dataset = make_project_dataset(7, 6)
    counter = counter_for("gpt-4o")
    assert len({c.speakers["user"] for c in dataset.conversations}) > 1
    for conversation in dataset.conversations:
        assert {q.category for q in conversation.qa} == KINDS
        assert 5 <= len(conversation.sessions) <= 10
        dates = [s.date for s in conversation.sessions]
        assert all(1 < (b - a).days <= 6 for a, b in zip(dates, dates[1:], strict=False))
        assert all(14 <= len(s.turns) <= 40 for s in conversation.sessions)
        turns = {t.id: (s.id, t) for s, t in conversation.turns()}
        long = [t for _, t in turns.values() if t.role == "assistant" and counter.count(t.text) >= 300]
        assert len(long) >= 10  # many long replies: the budgets bind
        assert any("```" in t.text for t in long)
        for q in conversation.qa:
            assert all(turns[e][1].role == "user" for e in q.evidence)
            if q.category == "knowledge_update":  # the older statement in an earlier session
                (older,) = q.superseded
                assert turns[older][0] < turns[q.evidence[0]][0]
            else:
                assert q.superseded == []
        summary = next(q for q in conversation.qa if q.category == "summary")
        assert len(summary.evidence) == len(conversation.sessions)  # one key message per session


def test_instructions_are_asked_about_in_other_words() -> None:
    """A standing instruction's question shares few words with it: recall by likeness alone misses it."""
    dataset = make_project_dataset(7, 6)
    overlaps = []
    for conversation in dataset.conversations:
        texts = {t.id: t.text for _, t in conversation.turns()}
        for q in conversation.qa:
            if q.category == "instruction":
                overlaps.append(len(set(analyze(q.question)) & set(analyze(texts[q.evidence[0]]))))
    assert len(overlaps) == 18 and Counter(overlaps)[0] >= len(overlaps) // 2


def _conversation() -> Conversation:
    said = [
        "Today we set up the orchestrator with Okonkwo, tagged juniper.",
        "The quota is 1,000 requests a day.",
        "Okonkwo says the quota is 1,200 requests a day now.",
        "Thanks, the quota talk helps.",
    ]
    turns = [Turn(id=f"D1:{i + 1}", role="user", text=t) for i, t in enumerate(said)]
    return Conversation(
        id="c",
        sessions=[Session(id=1, date="2025-03-03", turns=turns)],
        qa=[
            Question(id="s", question="Summarize the project.", category="summary", evidence=["D1:1"]),
            Question(
                id="u",
                question="What is the quota?",
                category="knowledge_update",
                evidence=["D1:3"],
                superseded=["D1:2"],
            ),
        ],
    )


def test_rarest_words_rank_by_how_many_messages_hold_them_then_first_appearance() -> None:
    rare = rarest_words({t.id: t.text for _, t in _conversation().turns()})
    # D1:1: "okonkwo" is in two messages, the rest in one, first appearance breaking the ties
    assert rare["D1:1"] == ["today", "set", "orchestr", "tag", "junip"]
    # D1:3: the words of this message only, then "okonkwo", "request", "day" (two messages each)
    assert rare["D1:3"] == ["say", "200", "okonkwo", "request", "day"]
    assert rare["D1:2"] == ["000", "request", "day", "quota"]  # fewer than five words: all of them


def test_arc_questions_count_the_share_of_rarest_words_others_the_whole_text() -> None:
    conversation = _conversation()
    scorer = Scorer.of(conversation)
    summary, update = conversation.qa
    digest = "2025-03-03: set up the orchestrator (tagged Juniper)."  # four of its five rarest words
    assert scorer.score(summary, digest) == (0.8, False)
    assert scorer.score(summary, conversation.sessions[0].turns[0].text) == (1.0, False)
    # the whole text on letters and digits for other kinds, and "older alone" when only the older is there
    assert scorer.score(update, 'the "quota" is 1,000 requests a day') == (0.0, True)
    assert scorer.score(
        update, "The quota is 1,000 requests a day. Okonkwo says the quota is 1,200 requests a day now."
    ) == (1.0, False)
    assert scorer.score(update, "nothing") == (0.0, False)


def test_the_bm25_control_packs_the_best_matches_into_the_budget() -> None:
    conversation = _conversation()
    control = Control.of(conversation, counter_for("gpt-4o"))
    seen, tokens = control.context("What is the quota now?", 10_000)
    assert "1,200" in seen and "1,000" in seen and "orchestrator" not in seen and tokens > 0
    cheapest = min(control.costs[1:4])
    seen, tokens = control.context("What is the quota now?", cheapest)
    assert tokens <= cheapest and seen.count("\n") == 1  # only one of the matches fits
    assert control.context("orchestrator", 5)[1] == 0  # nothing fits: nothing taken
    words = [["quota"], ["quota", "quota"], ["other"]]
    assert PlainBM25.choose(["quota"], words, lambda i: 1, 1) == [1]


def test_cli_makes_a_project_set_and_measures_it_against_the_bm25_control(tmp_path: Path) -> None:
    path = tmp_path / "project.json"
    runner = CliRunner()
    made = runner.invoke(
        app,
        [
            "eval",
            "make-dataset",
            "--kind",
            "project",
            "--seed",
            "5",
            "--conversations",
            "1",
            "--out",
            str(path),
        ],
    )
    assert made.exit_code == 0, made.output
    assert "1 conversations" in made.output
    result = runner.invoke(app, ["eval", "memory", str(path), "--caps", "1000", "--no-within", "--json"])
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)
    (recalled,), (control,) = results["new_chat"], results["bm25_control"]
    assert results["within_chat"] == []
    for row in (recalled, control):
        assert row["cap"] == 1000 and set(row["by_category"]) == KINDS
        assert isinstance(row["older_alone"], int) and 0 < row["tokens_max"] <= 1000
        assert row["questions"] == len(json.loads(path.read_text())["conversations"][0]["qa"])
    table = runner.invoke(app, ["eval", "memory", str(path), "--caps", "1000", "--no-within"])
    assert table.exit_code == 0 and "bm25 control" in table.output and "older alone" in table.output
    bad = runner.invoke(app, ["eval", "make-dataset", "--kind", "novel", "--out", str(path)])
    assert bad.exit_code == 2 and "--kind" in bad.output
