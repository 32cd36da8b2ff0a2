"""The scoping evaluation: dataset format and generator, the harness's metrics, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from orrery.cli import app
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.errors import ValidationError
from orrery.evaluation.dataset import Dataset
from orrery.evaluation.files import load_dataset, save_dataset
from orrery.evaluation.harness import evaluate, resolve_strategies
from orrery.evaluation.make_dataset import make_dataset
from orrery.memory.scoping import ScopingContext, ScopingResult, register_strategy
from orrery.memory.scoping.base import _REGISTRY

SEEN_QUERIES: list[str | None] = []


def tiny_dataset() -> Dataset:
    """Two dated sessions, one planted fact asked about twice."""
    filler = [
        {"id": f"D1:{i}", "role": "user" if i % 2 else "assistant", "text": f"Everyday chat line number {i}."}
        for i in range(1, 9)
    ]
    return Dataset.model_validate(
        {
            "name": "tiny",
            "conversations": [
                {
                    "id": "c1",
                    "sessions": [
                        {"id": 1, "date": "2025-03-01", "turns": filler},
                        {
                            "id": 2,
                            "date": "2025-03-09",
                            "turns": [
                                {
                                    "id": "D2:1",
                                    "role": "user",
                                    "text": "We adopted a greyhound called Biscuit.",
                                    "facts": ["greyhound"],
                                },
                                {"id": "D2:2", "role": "assistant", "text": "Congratulations on Biscuit!"},
                            ],
                        },
                    ],
                    "qa": [
                        {
                            "id": "q1",
                            "question": "What breed is Biscuit?",
                            "category": "single_hop",
                            "evidence": ["D2:1"],
                            "answer": "SECRET-ANSWER greyhound",
                        },
                        {
                            "id": "q2",
                            "question": "When was the dog adopted?",
                            "category": "temporal",
                            "evidence": ["D2:1"],
                            "answer": "SECRET-ANSWER 9 March",
                        },
                    ],
                }
            ],
        }
    )


@register_strategy
class _SpyStrategy:
    """Records the query it is given and selects nothing."""

    name: ClassVar[str] = "test_spy"

    async def select(self, ctx: ScopingContext) -> ScopingResult:
        SEEN_QUERIES.append(ctx.query)
        return ScopingResult([], strategy=self.name)


@pytest.fixture(autouse=True)
def _cleanup() -> Any:
    yield
    SEEN_QUERIES.clear()


def test_generator_is_deterministic_and_complete(tmp_path: Path) -> None:
    first, second = make_dataset(3), make_dataset(3)
    assert first.model_dump() == second.model_dump()
    assert make_dataset(4).model_dump() != first.model_dump()
    assert len(first.conversations) == 5
    for conv in first.conversations:
        assert len(conv.sessions) >= 20
        dates = [s.date for s in conv.sessions]
        assert dates == sorted(dates) and (dates[-1] - dates[0]).days > 90
        categories = {q.category for q in conv.qa}
        assert categories == {"single_hop", "multi_hop", "temporal", "knowledge_update", "adversarial"}
        assert all(len(q.evidence) == 2 for q in conv.qa if q.category == "multi_hop")
    path = tmp_path / "d.json"
    save_dataset(first, path)
    assert load_dataset(path).model_dump() == first.model_dump()


def test_bad_dataset_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        load_dataset(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationError, match="not readable JSON"):
        load_dataset(bad)
    raw = tiny_dataset().model_dump(mode="json")
    raw["conversations"][0]["qa"][0]["evidence"] = ["D9:9"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValidationError, match="D9:9"):
        load_dataset(bad)


async def test_harness_never_over_budget_and_scores_evidence(db: Database, settings: Settings) -> None:
    strategies = resolve_strategies(["last_n", "token_budget", "summary", "relevance", "test_spy"])
    rows = await evaluate(db, tiny_dataset(), settings, strategies, [0, 12, 30, 400])
    by = {(r.strategy, r.budget): r.as_dict() for r in rows}
    assert {name for name, _ in by} == {
        "last_n",
        "token_budget",
        "summary",
        "relevance",
        "test_spy",
        "lexical_baseline",
        "plain_bm25",
    }
    for row in by.values():
        assert row["tokens_max"] <= row["budget"] and row["over_budget"] == 0
        assert row["questions"] == 2
    assert by[("token_budget", 400)]["recall"] == 1.0
    assert by[("lexical_baseline", 400)]["by_category"]["single_hop"] == 1.0
    assert by[("test_spy", 400)]["recall"] == 0.0
    assert by[("token_budget", 0)]["recall"] == 0.0


async def test_strategy_sees_only_the_question(db: Database, settings: Settings) -> None:
    await evaluate(db, tiny_dataset(), settings, resolve_strategies(["test_spy"]), [100])
    # one warm-up selection without a query (the turns before the questions), then each question
    assert SEEN_QUERIES == [None, "What breed is Biscuit?", "When was the dog adopted?"]
    assert not any("SECRET" in (q or "") or "D2:1" in (q or "") for q in SEEN_QUERIES)


def test_cli_make_dataset_and_scoping(tmp_path: Path) -> None:
    runner = CliRunner()
    data = tmp_path / "tiny.json"
    save_dataset(tiny_dataset(), data)
    result = runner.invoke(
        app, ["eval", "scoping", str(data), "--strategies", "token_budget", "--budgets", "50,400", "--json"]
    )
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)["results"]
    assert [(r["strategy"], r["budget"]) for r in results] == [
        ("token_budget", 50),
        ("token_budget", 400),
        ("lexical_baseline", 50),
        ("lexical_baseline", 400),
        ("plain_bm25", 50),
        ("plain_bm25", 400),
    ]
    keys = {
        "strategy",
        "budget",
        "recall",
        "recall_unanswerable",
        "all_evidence",
        "by_category",
        "tokens_mean",
        "tokens_max",
        "ms_median",
        "ms_p95",
        "cpu_ms_median",
    }
    assert keys <= set(results[0])
    table = runner.invoke(app, ["eval", "scoping", str(data), "--strategies", "last_n", "--budgets", "100"])
    assert table.exit_code == 0 and "lexical_baseline" in table.output
    bad = runner.invoke(app, ["eval", "scoping", str(data), "--budgets", "lots"])
    assert bad.exit_code == 2 and "--budgets" in bad.output
    unknown = runner.invoke(app, ["eval", "scoping", str(data), "--strategies", "nope"])
    assert unknown.exit_code == 1 and "unknown scoping strategy 'nope'" in unknown.output
    made = runner.invoke(app, ["eval", "make-dataset", "--seed", "5", "--out", str(tmp_path / "d.json")])
    assert made.exit_code == 0 and "80 questions" in made.output


def teardown_module() -> None:
    _REGISTRY.pop("test_spy", None)
